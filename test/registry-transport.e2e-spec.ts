import { constants, createHash, generateKeyPairSync, publicEncrypt } from 'node:crypto';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';

const ADMIN_PASSWORD = 'Adm1nistrator!Strong';
const STRONG = 'Transp0rt-Strong-Pass';

/**
 * With PasswordAsymmetricEncryption every password field of every request is RSA-OAEP ciphertext
 * (contract 3), the administrator's create and reset routes included.
 */
describe('registry password fields under RSA-OAEP transport', () => {
  let t: TestApp;
  let admin: Browser;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const seal = (value: string) =>
    publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(value, 'utf8')).toString('base64');

  async function signIn(userName: string, password: string) {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName, password: seal(password) });
    return { browser, res };
  }

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        PasswordAsymmetricEncryption: 'True',
        PasswordAsymmetricEncryptionPublicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        PasswordAsymmetricEncryptionPrivateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      },
    });
    admin = new Browser(t.url);
    const res = await admin.post('/api/Authentication/ByUserNamePassword', {
      userName: 'Administrator',
      password: seal('Administrator'),
      newPassword: seal(ADMIN_PASSWORD),
      repeatNewPassword: seal(ADMIN_PASSWORD),
    });
    expect(res.status).toBe(200);
  });
  afterAll(async () => t.close());

  it('creates a user and resets its password from ciphertext; plaintext is refused (400)', async () => {
    const role = (await admin.post('/api/RoleRegistry', { name: 'Sealed', permissions: [], active: true })).json;
    expect((await admin.post('/api/UserRegistry', { name: 'plain', roleRegistryId: role.id, active: true, password: STRONG })).status).toBe(400);

    const created = await admin.post('/api/UserRegistry', { name: 'sealed', roleRegistryId: role.id, active: true, password: seal(STRONG) });
    expect(created.status).toBe(201);
    expect((await signIn('sealed', STRONG)).res.status).toBe(200);

    // The rules apply to the decrypted value.
    const weak = await admin.post(`/api/UserRegistry/${created.json.id}/Password`, { password: seal('weak'), wirePasswordHash: false });
    expect(weak.status).toBe(400);

    // Wire hash inside the ciphertext (the wire hash is applied first).
    const wire = createHash('sha256').update('wired up secret' + 'sealed', 'utf8').digest('hex');
    const reset = await admin.post(`/api/UserRegistry/${created.json.id}/Password`, {
      password: seal(wire),
      wirePasswordHash: true,
      mustChangePassword: false,
    });
    expect(reset.status).toBe(204);
    expect((await signIn('sealed', wire)).res.status).toBe(200);
  });
});
