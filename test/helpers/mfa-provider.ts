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
