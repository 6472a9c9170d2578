import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const RIGHT_PASSCODE = '12345678';

/**
 * A passcode provider on loopback (the outbound HTTP a test may fake) that counts what it is asked:
 * SUCCESS for RIGHT_PASSCODE, FAIL for anything else, in the reply shape of contract 7.
 */
export async function startCountingMfaProvider(): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      calls++;
      let passcode: unknown;
      try {
        passcode = JSON.parse(body).subjectCredentials[0].collectedInputs[0].value;
      } catch {
        passcode = undefined;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ attemptResponseCode: passcode === RIGHT_PASSCODE ? 'SUCCESS' : 'FAIL' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/verify`,
    calls: () => calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A passcode provider that holds every request until the test lets it answer, so a test can line up
 * attempts in a known order (which ones are being verified when another arrives). It records the
 * passcodes it was asked, in order.
 */
export async function startGatedMfaProvider(): Promise<{
  url: string;
  asked: () => string[];
  /** Resolves once `count` requests are waiting. */
  waiting(count: number): Promise<void>;
  /** Answers everything waiting now and everything that arrives later. */
  open(): void;
  close(): Promise<void>;
}> {
  const asked: string[] = [];
  const held: Array<() => void> = [];
  let opened = false;
  const watchers = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      let passcode: unknown;
      try {
        passcode = JSON.parse(body).subjectCredentials[0].collectedInputs[0].value;
      } catch {
        passcode = undefined;
      }
      asked.push(String(passcode));
      const answer = () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ attemptResponseCode: passcode === RIGHT_PASSCODE ? 'SUCCESS' : 'FAIL' }));
      };
      if (opened) answer();
      else held.push(answer);
      watchers.forEach((w) => w());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/verify`,
    asked: () => [...asked],
    waiting: (count) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (held.length >= count) {
            watchers.delete(check);
            resolve();
          }
        };
        watchers.add(check);
        check();
      }),
    open() {
      opened = true;
      held.splice(0).forEach((answer) => answer());
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
