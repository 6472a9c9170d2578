import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { insertUser } from './helpers/users';
import { FailureTypeId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';
const PROVIDER_KEY = 'provider-client-key-0123456789';
const GOOD_PASSCODE = '24681357';

interface Certificate {
  key: Buffer;
  cert: Buffer;
  thumbprint: string;
}

/** A self-signed certificate made by the openssl CLI, for the given subjectAltName. */
function selfSigned(dir: string, name: string, altName: string): Certificate {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`, '-addext', `subjectAltName=${altName}`,
  ], { stdio: 'ignore' });
  const pem = readFileSync(cert);
  return { key: readFileSync(key), cert: pem, thumbprint: new X509Certificate(pem).fingerprint.replace(/:/g, '') };
}

/**
 * A one-time-passcode provider over HTTPS speaking contract 7's protocol. It records every request it
 * receives, so a refused connection can be shown to have carried no request at all.
 */
class PasscodeProvider {
  readonly received: { clientKey: string | undefined; body: any }[] = [];
  mode: 'normal' | 'status500' | 'garbage' | 'hang' = 'normal';
  private readonly server: https.Server;
  private readonly hanging = new Set<import('node:http').ServerResponse>();

  constructor(certificate: Certificate) {
    this.server = https.createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        const body = JSON.parse(text || '{}');
        this.received.push({ clientKey: req.headers['client-key'] as string | undefined, body });
        if (this.mode === 'hang') {
          this.hanging.add(res);
          return;
        }
        if (this.mode === 'status500') return void res.writeHead(500).end('{"attemptResponseCode":"SUCCESS"}');
        if (this.mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('not json');
        const passcode = body.subjectCredentials?.[0]?.collectedInputs?.[0]?.value;
        const ok = req.headers['client-key'] === PROVIDER_KEY && passcode === GOOD_PASSCODE;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ attemptResponseCode: ok ? 'SUCCESS' : 'FAIL' }));
      });
    });
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('second factor over HTTPS: certificate pinning and bypass (service.md 5.3 item 5)', () => {
  let dir: string;
  let db: TestDatabase;
  let good: PasscodeProvider;
  let misnamed: PasscodeProvider;
  let goodCert: Certificate;
  let misnamedCert: Certificate;
  let goodPort: number;
  let misnamedPort: number;
  let userCounter = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tm-mfa-tls-'));
    goodCert = selfSigned(dir, 'good', 'IP:127.0.0.1');
    misnamedCert = selfSigned(dir, 'misnamed', 'DNS:elsewhere.example');
    good = new PasscodeProvider(goodCert);
    misnamed = new PasscodeProvider(misnamedCert);
    goodPort = await good.start();
    misnamedPort = await misnamed.start();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await good.stop();
    await misnamed.stop();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a node with the given TLS settings, signs a fresh user in with the passcode, returns the answer. */
  async function attempt(env: Record<string, string>, passcode = GOOD_PASSCODE): Promise<{ status: number; rows: any[] }> {
    const t: TestApp = await startTestApp({
      db,
      env: {
        EnableMultifactorAuthentication: 'True',
        MultifactorAuthenticationEndpoint: `https://127.0.0.1:${goodPort}/mfa/attempt`,
        MultifactorAuthenticationClientKey: PROVIDER_KEY,
        MultifactorAuthenticationApplicationId: 'tm-tests',
        ...env,
      },
    });
    try {
      const name = `user${++userCounter}`;
      await insertUser(t, { name, password: STRONG });
      const res = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG, mfa: passcode });
      const rows = await db.query(`SELECT "Failed", "FailureTypeId", "FailureMessage" FROM "UserLogin" WHERE "CreatedUser" = $1`, [name]);
      return { status: res.status, rows };
    } finally {
      await t.close();
    }
  }

  const refusedWithoutRequest = async (provider: PasscodeProvider, env: Record<string, string>) => {
    const before = provider.received.length;
    const { status, rows } = await attempt(env);
    expect(status).toBe(401);
    expect(rows).toEqual([{ Failed: true, FailureTypeId: FailureTypeId.SecondFactorRejected, FailureMessage: null }]);
    // The connection was refused before any request (let alone the passcode) was written.
    expect(provider.received.length).toBe(before);
  };

  it('accepts the self-signed provider when its SHA-1 thumbprint is pinned, and speaks the contract 7 protocol', async () => {
    const before = good.received.length;
    const { status, rows } = await attempt({ OutboundHttpMfaCertificateThumbprint: goodCert.thumbprint });
    expect(status).toBe(200);
    expect(rows).toEqual([{ Failed: false, FailureTypeId: null, FailureMessage: null }]);
    const request = good.received[before];
    expect(request.clientKey).toBe(PROVIDER_KEY);
    expect(request.body).toEqual({
      clientId: 'tm-tests',
      subjectName: `user${userCounter}`,
      subjectCredentials: [{ methodId: 'SECURID', collectedInputs: [{ name: 'SECURID', value: GOOD_PASSCODE }] }],
    });
  });

  it('accepts the thumbprint written with colons and in lower case', async () => {
    const colons = goodCert.thumbprint.toLowerCase().match(/../g)!.join(':');
    expect((await attempt({ OutboundHttpMfaCertificateThumbprint: colons })).status).toBe(200);
  });

  it('a FAIL from the provider is a rejected factor', async () => {
    const { status, rows } = await attempt({ OutboundHttpMfaCertificateThumbprint: goodCert.thumbprint }, '00000000');
    expect(status).toBe(401);
    expect(rows).toEqual([{ Failed: true, FailureTypeId: FailureTypeId.SecondFactorRejected, FailureMessage: null }]);
  });

  it('refuses a wrong thumbprint without sending the request', async () => {
    await refusedWithoutRequest(good, { OutboundHttpMfaCertificateThumbprint: misnamedCert.thumbprint });
  });

  it('refuses the self-signed certificate when neither pin nor bypass is set', async () => {
    await refusedWithoutRequest(good, {});
  });

  it('refuses a host-name mismatch even when the thumbprint is right', async () => {
    await refusedWithoutRequest(misnamed, {
      MultifactorAuthenticationEndpoint: `https://127.0.0.1:${misnamedPort}/mfa/attempt`,
      OutboundHttpMfaCertificateThumbprint: misnamedCert.thumbprint,
    });
  });

  it('bypass accepts any certificate, even a misnamed self-signed one', async () => {
    const { status } = await attempt({
      MultifactorAuthenticationEndpoint: `https://127.0.0.1:${misnamedPort}/mfa/attempt`,
      OutboundHttpMfaCertificateBypass: 'True',
    });
    expect(status).toBe(200);
  });

  it('a non-2xx reply, an unreadable body or no answer within 5 s is a rejected factor (401, FailureTypeId 11), never a 500', async () => {
    const env = { OutboundHttpMfaCertificateThumbprint: goodCert.thumbprint };
    try {
      for (const mode of ['status500', 'garbage', 'hang'] as const) {
        good.mode = mode;
        const { status, rows } = await attempt(env);
        expect({ mode, status }).toEqual({ mode, status: 401 });
        expect(rows).toEqual([{ Failed: true, FailureTypeId: FailureTypeId.SecondFactorRejected, FailureMessage: null }]);
      }
    } finally {
      good.mode = 'normal';
    }
  });

  it('an endpoint that refuses connections is a rejected factor', async () => {
    const { status, rows } = await attempt({ MultifactorAuthenticationEndpoint: 'http://127.0.0.1:1/mfa' });
    expect(status).toBe(401);
    expect(rows).toEqual([{ Failed: true, FailureTypeId: FailureTypeId.SecondFactorRejected, FailureMessage: null }]);
  });
});
