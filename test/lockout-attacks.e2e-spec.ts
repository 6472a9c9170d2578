import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { RIGHT_PASSCODE, startGatedMfaProvider } from './helpers/mfa-provider';
import { insertUser } from './helpers/users';

/**
 * Contract 13, lockout under concurrency, on the paths the first tests did not race: the right
 * passcode racing a burst of wrong ones (in both orders, the provider holding its answers so the order
 * is known), the right password with a new password on an expired account (sign-in with newPassword)
 * racing a burst, and the right current password on ChangePassword racing a burst. Each time: at most
 * PasswordAttempts + 1 (3 + 1) verified, the right one refused with FailureTypeId 3, nothing changed
 * (no token, no new password, no LastLoginDate), and the rows agree with the count.
 */
const STRONG = 'Corr3ct-Horse-Battery';
const NEW_PASSWORD = 'N3w-Password-Strong';
const SIGN_IN = '/api/Authentication/ByUserNamePassword';

const failureTypes = (t: TestApp, name: string) =>
  t.db
    .query<{ FailureTypeId: number | null }>(`SELECT "FailureTypeId" FROM "UserLogin" WHERE "CreatedUser" = $1 ORDER BY "Id"`, [name])
    .then((rows) => rows.map((r) => r.FailureTypeId));
const account = (t: TestApp, id: number) =>
  t.db
    .query<{ PasswordLocked: boolean; FailedPasswordCount: number; Password: string; LastLoginDate: Date | null }>(
      `SELECT "PasswordLocked", "FailedPasswordCount", "Password", "LastLoginDate" FROM "UserRegistry" WHERE "Id" = $1`,
      [id],
    )
    .then((rows) => rows[0]);
const sorted = (types: Array<number | null>) => [...types].map(String).sort();

async function waitUntil(predicate: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the right passcode racing the lock (contract 13)', () => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startGatedMfaProvider>>;
  beforeEach(async () => {
    provider = await startGatedMfaProvider();
    t = await startTestApp({ env: { EnableMultifactorAuthentication: 'True', MultifactorAuthenticationEndpoint: provider.url } });
  });
  afterEach(async () => {
    provider.open();
    await t.close();
    await provider.close();
  });

  const attempt = (mfa: string) => new Browser(t.url).post(SIGN_IN, { userName: 'otp', password: STRONG, mfa });

  it('sent while four wrong passcodes are at the provider: refused (3) without asking it, the account locks', async () => {
    const { id } = await insertUser(t, { name: 'otp', password: STRONG });
    const wrong = ['90000001', '90000002', '90000003', '90000004'].map(attempt);
    await provider.waiting(4);
    const right = await attempt(RIGHT_PASSCODE);
    expect(right.status).toBe(401);
    expect(right.setCookies).toEqual([]);
    provider.open();
    for (const answer of await Promise.all(wrong)) expect(answer.status).toBe(401);
    expect(provider.asked()).not.toContain(RIGHT_PASSCODE);
    expect(provider.asked()).toHaveLength(4);
    expect(sorted(await failureTypes(t, 'otp'))).toEqual(['11', '11', '11', '11', '3']);
    expect(await account(t, id)).toMatchObject({ PasswordLocked: true, FailedPasswordCount: 4, LastLoginDate: null });
  });

  it('at the provider first, then a burst reaches the lock: its SUCCESS is refused (3), no token', async () => {
    const { id } = await insertUser(t, { name: 'otp', password: STRONG });
    const right = attempt(RIGHT_PASSCODE);
    await provider.waiting(1);
    // Five more attempts take the places after it; the last ones reach the lock threshold and lock.
    const wrong = ['90000001', '90000002', '90000003', '90000004', '90000005'].map(attempt);
    await waitUntil(async () => (await account(t, id)).PasswordLocked, 'the burst to lock the account');
    provider.open();
    const rightAnswer = await right;
    const answers = [rightAnswer, ...(await Promise.all(wrong))];
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.setCookies).toEqual([]);
    }
    const asked = provider.asked();
    expect(asked[0]).toBe(RIGHT_PASSCODE);
    expect(asked.length).toBeLessThanOrEqual(4);
    const types = await failureTypes(t, 'otp');
    expect(types).toHaveLength(6);
    // The right one's row is a refusal (3) written after its SUCCESS; wrong passcodes the provider
    // answered are 11 (at most three of them had places), every other attempt 3 without a verify.
    expect(types.filter((type) => type === 11)).toHaveLength(asked.length - 1);
    expect(types.filter((type) => type === 3)).toHaveLength(6 - (asked.length - 1));
    // The count says how many verified failures there were: the rejected passcodes only.
    expect(await account(t, id)).toMatchObject({ PasswordLocked: true, FailedPasswordCount: asked.length - 1, LastLoginDate: null });
  });
});

describe('password paths racing the lock (contract 13)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('sign-in with newPassword on an expired account: the right one sent while a burst is verified changes nothing', async () => {
    const { id } = await insertUser(t, { name: 'expired', password: STRONG, expired: true });
    const before = await account(t, id);
    const burst = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        new Browser(t.url).post(SIGN_IN, { userName: 'expired', password: `wrong-${i}`, newPassword: NEW_PASSWORD, repeatNewPassword: NEW_PASSWORD }),
      ),
    );
    await waitUntil(async () => {
      const row = await account(t, id);
      return row.FailedPasswordCount >= 4 || row.PasswordLocked;
    }, 'the burst to be counted');
    const right = await new Browser(t.url).post(SIGN_IN, { userName: 'expired', password: STRONG, newPassword: NEW_PASSWORD, repeatNewPassword: NEW_PASSWORD });
    const answers = [...(await burst), right];
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.setCookies).toEqual([]);
    }
    const types = await failureTypes(t, 'expired');
    expect(types).toHaveLength(13);
    expect(types[12]).toBe(3);
    expect(types.filter((type) => type === 5)).toHaveLength(4);
    const after = await account(t, id);
    expect(after).toMatchObject({ PasswordLocked: true, FailedPasswordCount: 4, LastLoginDate: null });
    expect(after.Password).toBe(before.Password);
  });

  it('ChangePassword: the right current password sent while a burst of guesses is verified is refused (401), the password unchanged', async () => {
    const { id } = await insertUser(t, { name: 'changer', password: STRONG });
    const browser = new Browser(t.url);
    expect((await browser.post(SIGN_IN, { userName: 'changer', password: STRONG })).status).toBe(200);
    const before = await account(t, id);
    const burst = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        browser.post('/api/Authentication/ChangePassword', { password: `wrong-${i}`, newPassword: NEW_PASSWORD, repeatNewPassword: NEW_PASSWORD }),
      ),
    );
    await waitUntil(async () => {
      const row = await account(t, id);
      return row.FailedPasswordCount >= 4 || row.PasswordLocked;
    }, 'the burst to be counted');
    const right = await browser.post('/api/Authentication/ChangePassword', { password: STRONG, newPassword: NEW_PASSWORD, repeatNewPassword: NEW_PASSWORD });
    expect(right.status).toBe(401);
    const statuses = (await burst).map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 400)).toHaveLength(4);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    const after = await account(t, id);
    expect(after.PasswordLocked).toBe(true);
    expect(after.FailedPasswordCount).toBe(4);
    expect(after.Password).toBe(before.Password);
  });
});
