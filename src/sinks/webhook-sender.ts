import { createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isLoopbackHost } from './sink-input';

/** Any 2xx within this acknowledges a batch (contract 19). */
export const WEBHOOK_DEADLINE_MS = 10_000;
/** What of a receiver's answer is kept (for LastError and the Test route). */
const KEPT_ANSWER = 512;

/** Connections kept alive between batches: one sink sends one batch at a time, so a few sockets serve every sink. */
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 8 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 8 });

export interface WebhookReply {
  status: number;
  body: string;
}

/** `sha256=<hex HMAC-SHA256 of the body>` (contract 19). */
export function signature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * One POST of a batch to a webhook, answered within WEBHOOK_DEADLINE_MS or failed: the status and
 * the start of the body. https:// verifies the receiver's certificate against the system CAs (with
 * NODE_EXTRA_CA_CERTS) and `ca` when given; http:// goes only to a loopback host (checked again here,
 * whatever the stored URL says). No redirect is followed: a 3xx is not an acknowledgement.
 */
export async function postBatch(url: URL, body: Buffer, headers: Record<string, string>, ca?: string): Promise<WebhookReply> {
  try {
    return await postOnce(url, body, headers, ca);
  } catch (error) {
    // A kept-alive connection the receiver closed while idle fails at once, before the receiver saw
    // anything: sent again once on a fresh connection, so an idle timeout never costs a backoff.
    if ((error as { reusedSocket?: boolean }).reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET') return postOnce(url, body, headers, ca);
    throw error;
  }
}

function postOnce(url: URL, body: Buffer, headers: Record<string, string>, ca?: string): Promise<WebhookReply> {
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return Promise.reject(new Error('http:// is allowed only to a loopback host'));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new Error(`not a webhook URL: ${url.protocol}`));
  const https = url.protocol === 'https:';
  return new Promise<WebhookReply>((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent: https ? (ca ? undefined : httpsAgent) : httpAgent,
        ...(https && ca ? { ca } : {}),
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < KEPT_ANSWER) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, KEPT_ANSWER) });
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${WEBHOOK_DEADLINE_MS / 1000} s`)), WEBHOOK_DEADLINE_MS);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(Object.assign(error, { reusedSocket: req.reusedSocket }));
    });
    req.end(body);
  });
}
