import { generateKeyPairSync } from 'node:crypto';
import { isLoopbackHost, parseSinkInput, sinkTarget } from './sink-input';

const problemsOf = (body: unknown, creating = true) => {
  const result = parseSinkInput(body, creating);
  return 'problems' in result ? result.problems.map((p) => `${p.field}: ${p.message}`) : [];
};
const webhook = { name: 'siem', type: 'webhook', url: 'https://siem.example/hook', format: 'ocsf', secret: '0123456789abcdef', active: true };

describe('parseSinkInput (contract 19)', () => {
  it('accepts a webhook and a syslog sink', () => {
    expect(parseSinkInput(webhook, true)).toEqual({ input: { ...webhook, headers: undefined, startLeafIndex: undefined } });
    const syslog = parseSinkInput({ name: 's', type: 'syslog', url: 'syslog://127.0.0.1:514', format: 'cef', active: false, startLeafIndex: 0 }, true);
    expect(syslog).toEqual({ input: expect.objectContaining({ type: 'syslog', format: 'cef', active: false, startLeafIndex: 0, secret: undefined }) });
  });

  it('names every bad field at once', () => {
    expect(problemsOf({ name: '', type: 'kafka', url: 'ftp://x', format: 'xml', active: 'yes', extra: 1 })).toEqual(
      expect.arrayContaining(['extra: unknown field', 'name: required text', 'type: one of webhook, syslog', 'format: one of ocsf, cef', 'active: true or false']),
    );
  });

  it('CEF only for syslog; a webhook needs its secret; http only to loopback; syslog URL forms', () => {
    expect(problemsOf({ ...webhook, format: 'cef' })).toEqual(['format: cef is for syslog sinks only']);
    expect(problemsOf({ ...webhook, secret: undefined })).toEqual(['secret: required for a webhook (the HMAC signing key)']);
    expect(problemsOf({ ...webhook, secret: 'short' })).toEqual([expect.stringMatching(/^secret: a webhook signing key has at least 16/)]);
    expect(problemsOf({ ...webhook, url: 'http://siem.example/hook' })).toEqual([expect.stringMatching(/^url: http:\/\/ is allowed only to a loopback host/)]);
    expect(problemsOf({ ...webhook, url: 'http://127.0.0.1:8080/hook' })).toEqual([]);
    expect(problemsOf({ ...webhook, url: 'http://[::1]:8080/hook' })).toEqual([]);
    expect(problemsOf({ ...webhook, url: 'https://user:pw@siem.example/' })).toEqual([expect.stringMatching(/^url: credentials/)]);
    expect(problemsOf({ ...webhook, url: 'syslog://siem.example:514' })).toEqual([expect.stringMatching(/^url: a webhook URL starts with https/)]);
    expect(problemsOf({ name: 's', type: 'syslog', url: 'https://x', format: 'cef' })).toEqual([expect.stringMatching(/^url: a syslog URL is/)]);
    expect(problemsOf({ name: 's', type: 'syslog', url: 'syslog+tls://siem.example:6514', format: 'ocsf' })).toEqual([]);
    expect(problemsOf({ name: 's', type: 'syslog', url: 'syslog://siem.example:514/path', format: 'ocsf' })).toEqual(['url: a syslog URL has no path or query']);
  });

  it('a syslog secret is a PEM client key, only over TLS; headers are for webhooks', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const tls = { name: 's', type: 'syslog', url: 'syslog+tls://siem.example:6514', format: 'ocsf' };
    expect(problemsOf({ ...tls, secret: pem })).toEqual([]);
    expect(problemsOf({ ...tls, secret: 'not a key' })).toEqual([expect.stringMatching(/^secret: a syslog secret is the TLS client key/)]);
    expect(problemsOf({ ...tls, url: 'syslog://siem.example:514', secret: pem })).toEqual([expect.stringMatching(/^secret: .*only for syslog\+tls/)]);
    expect(problemsOf({ ...tls, headers: { A: 'b' } })).toEqual(['headers: headers are for webhook sinks only']);
  });

  it('headers: names checked, reserved ones refused, "****" keeps the value already set', () => {
    expect(problemsOf({ ...webhook, headers: { 'X-Signature': 'x', 'bad name': 'y', Ok: 'line\nbreak' } })).toEqual([
      'headers.X-Signature: set by the service itself',
      "headers.bad name: not a header name (letters, digits and !#$%&'*+.^_`|~-, at most 64)",
      'headers.Ok: a value of 1 to 4096 characters without control characters',
    ]);
    const kept = parseSinkInput({ ...webhook, secret: undefined, headers: { authorization: '****', 'X-Env': 'prod' } }, false, {
      secretSet: true,
      headers: { Authorization: 'Splunk abc' },
    });
    expect(kept).toEqual({ input: expect.objectContaining({ secret: undefined, headers: { authorization: 'Splunk abc', 'X-Env': 'prod' } }) });
    expect(problemsOf({ ...webhook, headers: { Authorization: '****' } })).toEqual(['headers.Authorization: "****" keeps a value already set; this header has none']);
  });

  it('startLeafIndex only at creation, a whole number', () => {
    expect(problemsOf({ ...webhook, startLeafIndex: -1 })).toEqual(['startLeafIndex: a whole number, 0 or more']);
    expect(problemsOf({ ...webhook, startLeafIndex: 3 }, false)).toEqual(['startLeafIndex: only at creation; use Replay to send leaves again']);
  });

  it('loopback hosts and targets', () => {
    expect(['127.0.0.1', '127.5.5.5', '[::1]', 'localhost'].map(isLoopbackHost)).toEqual([true, true, true, true]);
    expect(['10.0.0.1', 'example.com', '128.0.0.1'].map(isLoopbackHost)).toEqual([false, false, false]);
    expect(sinkTarget('syslog', 'syslog+tls://h.example')).toEqual({ kind: 'syslog', host: 'h.example', port: 6514, tls: true });
    expect(sinkTarget('syslog', 'syslog://[::1]:1514')).toEqual({ kind: 'syslog', host: '::1', port: 1514, tls: false });
  });
});
