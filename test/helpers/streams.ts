/** An open Server-Sent Events response, read as it arrives. */
export interface OpenedStream {
  status: number;
  contentType: string | null;
  /** Everything received so far. */
  received(): string;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Waits until the received text satisfies `predicate` (or the stream ends, then fails). */
  waitFor(predicate: (text: string) => boolean): Promise<string>;
  abort(): void;
}

export async function openStream(url: string, headers: Record<string, string>): Promise<OpenedStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  let text = '';
  let ended = false;
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  const endedPromise = (async () => {
    if (!res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        notify();
      }
    } catch {
      // aborted by the test
    }
    ended = true;
    notify();
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    received: () => text,
    ended: endedPromise,
    isEnded: () => ended,
    waitFor(predicate) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(text)) {
            listeners.delete(check);
            resolve(text);
          } else if (ended) {
            listeners.delete(check);
            reject(new Error(`stream ended before the expected text; received: ${text}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    abort: () => controller.abort(),
  };
}
