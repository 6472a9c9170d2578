import { request as httpRequest } from 'node:http';
import { connect, Socket } from 'node:net';

/**
 * An HTTP/1.1 GET on a plain socket, for clients that misbehave on purpose: it can stop reading
 * (`pause`: the kernel buffers fill and the server's writes block) and later read on (`resume`), and
 * tells whether the body it got was complete (the terminating chunk, or the full Content-Length).
 */
export class RawRequest {
  readonly socket: Socket;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private closed = false;
  private readonly closeWaiters: (() => void)[] = [];
  private readonly dataWaiters: (() => void)[] = [];

  constructor(baseUrl: string, path: string, headers: Record<string, string>) {
    const url = new URL(baseUrl);
    this.socket = connect(Number(url.port), url.hostname);
    const lines = [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    this.socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.bytes += chunk.length;
      this.dataWaiters.splice(0).forEach((w) => w());
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      this.closeWaiters.splice(0).forEach((w) => w());
      this.dataWaiters.splice(0).forEach((w) => w());
    });
  }

  get received(): number {
    return this.bytes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves once at least `n` bytes arrived (or the socket closed). */
  async atLeast(n: number): Promise<void> {
    while (this.bytes < n && !this.closed) await new Promise<void>((resolve) => this.dataWaiters.push(resolve));
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Resolves when the server has closed the connection and everything was read. */
  async closedByServer(): Promise<void> {
    if (!this.closed) await new Promise<void>((resolve) => this.closeWaiters.push(resolve));
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Status, headers and de-chunked body of what arrived; `complete` says whether the body ended properly. */
  response(): { status: number; headers: Record<string, string>; body: Buffer; complete: boolean } {
    const raw = Buffer.concat(this.chunks);
    const end = raw.indexOf('\r\n\r\n');
    if (end < 0) return { status: 0, headers: {}, body: Buffer.alloc(0), complete: false };
    const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    const rest = raw.subarray(end + 4);
    if (headers['transfer-encoding'] !== 'chunked') {
      const length = Number(headers['content-length'] ?? -1);
      return { status, headers, body: rest, complete: length >= 0 && rest.length === length };
    }
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return { status, headers, body: Buffer.concat(parts), complete: false };
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(parts), complete: true };
      const start = lineEnd + 2;
      if (start + size > rest.length) {
        parts.push(rest.subarray(start));
        return { status, headers, body: Buffer.concat(parts), complete: false };
      }
      parts.push(rest.subarray(start, start + size));
      at = start + size + 2;
    }
  }
}

/**
 * A JSON request on node's plain http client, so a header can be sent as several lines (fetch would
 * join them into one): answers the status and the body text.
 */
export function sendRaw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const all: Record<string, string | string[]> = { ...headers };
  if (payload !== undefined) {
    all['content-type'] = 'application/json';
    all['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers: all }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}
