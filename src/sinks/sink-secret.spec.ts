import { SinkSecretBox } from './sink-secret';

describe('SinkSecretBox', () => {
  const box = new SinkSecretBox('test-api-hmac-key-0123456789abcdef');

  it('round-trips a value and never writes it in clear', () => {
    const sealed = box.seal('Secret', 'hmac-signing-key');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('hmac-signing-key');
    expect(box.open('Secret', sealed)).toBe('hmac-signing-key');
  });

  it('uses a fresh nonce each time', () => {
    expect(box.seal('Secret', 'x')).not.toBe(box.seal('Secret', 'x'));
  });

  it('refuses an envelope of another column, another key, or one changed by a bit', () => {
    const sealed = box.seal('Headers', '{"Authorization":"Splunk t"}');
    expect(() => box.open('Secret', sealed)).toThrow(/cannot be decrypted/);
    expect(() => new SinkSecretBox('another-key-0123456789abcdef0123456').open('Headers', sealed)).toThrow(/cannot be decrypted/);
    const body = Buffer.from(sealed.split('.')[2], 'base64url');
    body[0] ^= 1;
    expect(() => box.open('Headers', `v1.${sealed.split('.')[1]}.${body.toString('base64url')}`)).toThrow(/cannot be decrypted/);
    expect(() => box.open('Headers', 'clear text')).toThrow(/not an envelope/);
  });
});
