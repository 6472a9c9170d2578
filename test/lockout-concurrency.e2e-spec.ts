import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { RIGHT_PASSCODE as PASSCODE, startCountingMfaProvider } from './helpers/mfa-provider';
import { insertUser, signInAdministrator } from './helpers/users';

/**
 * Contract 13, lockout under concurrency: attempts are counted before they are verified, so a burst
 * sent at once verifies at most PasswordAttempts + 1 (here 3 + 1) of them, and the right password
 * sent inside a burst that reaches the lock yields no token. The number of verifications is read
 * from what the service wrote: FailureTypeId 5 (or 11) is a verified wrong password (or passcode),
 * 3 an attempt refused without a verify.
 */
const STRONG = 'Corr3ct-Horse-Battery';
const SIGN_IN = '/api/Authentication/ByUserNamePassword';

type Answer = Awaited<ReturnType<Browser['post']>>;

const failureTypes = (t: TestApp, name: string) =>
  t.db
    .query<{ FailureTypeId: number | null }>(`SELECT "FailureTypeId" FROM "UserLogin" WHERE "CreatedUser" = $1 ORDER BY "Id"`, [name])
    .then((rows) => rows.map((r) => r.FailureTypeId));
const state = (t: TestApp, id: number) =>
  t.db
    .query<{ PasswordLocked: boolean; FailedPasswordCount: number }>(
      `SELECT "PasswordLocked", "FailedPasswordCount" FROM "UserRegistry" WHERE "Id" = $1`,
      [id],
    )
    .then((rows) => rows[0]);
const tally = (types: Array<number | null>) => {
  const counts: Record<string, number> = {};
  for (const type of types) counts[String(type)] = (counts[String(type)] ?? 0) + 1;
  return counts;
};

/** Every failure answers the same 401 with no cookie, whatever happened inside. */
function expectGenericRefusal(answers: Answer[]): void {
  for (const answer of answers) {
    expect(answer.status).toBe(401);
    expect(answer.text).toBe(answers[0].text);
    expect(answer.setCookies).toEqual([]);
  }
}

async function waitUntil(predicate: () => Promise<boolean>, what: string, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('password lockout under a concurrent burst (contract 13)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const burst = (name: string, passwords: string[]) =>
    Promise.all(passwords.map((password) => new Browser(t.url).post(SIGN_IN, { userName: name, password })));

  it('verifies at most PasswordAttempts + 1 of 12 wrong passwords sent at once; the rest are refused (3) unverified', async () => {
    const { id } = await insertUser(t, { name: 'burst', password: STRONG });
    const answers = await burst('burst', Array.from({ length: 12 }, (_, i) => `wrong-${i}`));
    expectGenericRefusal(answers);
    const types = await failureTypes(t, 'burst');
    expect(types).toHaveLength(12);
    expect(tally(types)).toEqual({ '5': 4, '3': 8 });
    // The refused attempts gave their count back: the four verified ones remain.
    expect(await state(t, id)).toEqual({ PasswordLocked: true, FailedPasswordCount: 4 });
  });

  it('the right password sent in the same burst as 12 wrong ones yields no token', async () => {
    const { id } = await insertUser(t, { name: 'mixed', password: STRONG });
    const passwords = Array.from({ length: 12 }, (_, i) => `wrong-${i}`);
    passwords.splice(6, 0, STRONG);
    const answers = await burst('mixed', passwords);
    expectGenericRefusal(answers);
    const types = await failureTypes(t, 'mixed');
    expect(types).toHaveLength(13);
    expect(types).not.toContain(null);
    // At most four verifications (the right one, if it was among them, is refused as racing the lock).
    expect(types.filter((type) => type === 5).length).toBeLessThanOrEqual(4);
    expect(types.every((type) => type === 5 || type === 3)).toBe(true);
    expect((await state(t, id)).PasswordLocked).toBe(true);
    const [{ LastLoginDate }] = await t.db.query<{ LastLoginDate: Date | null }>(`SELECT "LastLoginDate" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(LastLoginDate).toBeNull();
  });

  it('the right password sent while a burst is being verified is refused (3) without a verify', async () => {
    const { id } = await insertUser(t, { name: 'racer', password: STRONG });
    const wrong = burst('racer', Array.from({ length: 12 }, (_, i) => `wrong-${i}`));
    // The burst has been counted up to the lock threshold; its hashes are still being computed.
    await waitUntil(async () => (await state(t, id)).FailedPasswordCount >= 4 || (await state(t, id)).PasswordLocked, 'the burst to be counted');
    const right = await new Browser(t.url).post(SIGN_IN, { userName: 'racer', password: STRONG });
    const answers = await wrong;
    expectGenericRefusal([...answers, right]);
    const types = await failureTypes(t, 'racer');
    expect(types).toHaveLength(13);
    expect(tally(types)).toEqual({ '5': 4, '3': 9 });
    expect((await state(t, id)).PasswordLocked).toBe(true);
  });

  it('gives four verifications again after an administrator unlocks, and a success then resets the count', async () => {
    const { id } = await insertUser(t, { name: 'unlocked', password: STRONG });
    await burst('unlocked', Array.from({ length: 8 }, (_, i) => `wrong-${i}`));
    expect((await state(t, id)).PasswordLocked).toBe(true);
    const { browser: admin } = await signInAdministrator(t);
    expect((await admin.put(`/api/UserRegistry/${id}`, { passwordLocked: false })).status).toBe(200);
    expect(await state(t, id)).toEqual({ PasswordLocked: false, FailedPasswordCount: 0 });

    await burst('unlocked', Array.from({ length: 8 }, (_, i) => `again-${i}`));
    expect(tally(await failureTypes(t, 'unlocked'))).toEqual({ '5': 8, '3': 8 });
    expect((await admin.put(`/api/UserRegistry/${id}`, { passwordLocked: false })).status).toBe(200);

    // Sequentially nothing changed: three wrong, then the right one signs in and resets the count.
    for (let i = 0; i < 3; i++) await new Browser(t.url).post(SIGN_IN, { userName: 'unlocked', password: 'bad' });
    expect((await new Browser(t.url).post(SIGN_IN, { userName: 'unlocked', password: STRONG })).status).toBe(200);
    expect(await state(t, id)).toEqual({ PasswordLocked: false, FailedPasswordCount: 0 });
  });

  it('ChangePassword: 12 wrong current passwords at once verify four (400), the rest are refused (401), the account locks', async () => {
    const { id } = await insertUser(t, { name: 'changer', password: STRONG });
    const browser = new Browser(t.url);
    expect((await browser.post(SIGN_IN, { userName: 'changer', password: STRONG })).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        browser.post('/api/Authentication/ChangePassword', { password: `wrong-${i}`, newPassword: 'N3w-Password-Strong', repeatNewPassword: 'N3w-Password-Strong' }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ '400': 4, '401': 8 });
    expect((await state(t, id)).PasswordLocked).toBe(true);
  });
});

describe('passcode lockout under a concurrent burst (contract 13)', () => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startCountingMfaProvider>>;
  beforeAll(async () => {
    provider = await startCountingMfaProvider();
    t = await startTestApp({ env: { EnableMultifactorAuthentication: 'True', MultifactorAuthenticationEndpoint: provider.url } });
  });
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  it('12 wrong passcodes and the right one at once: at most four reach the provider, none signs in, the account locks', async () => {
    const { id } = await insertUser(t, { name: 'otp', password: STRONG });
    const before = provider.calls();
    const passcodes = Array.from({ length: 12 }, (_, i) => String(90000000 + i));
    passcodes.splice(5, 0, PASSCODE);
    const answers = await Promise.all(
      passcodes.map((mfa) => new Browser(t.url).post(SIGN_IN, { userName: 'otp', password: STRONG, mfa })),
    );
    expectGenericRefusal(answers);
    const asked = provider.calls() - before;
    const types = await failureTypes(t, 'otp');
    expect(types).toHaveLength(13);
    expect(types.every((type) => type === 11 || type === 3)).toBe(true);
    expect(asked).toBeLessThanOrEqual(4);
    // Only a passcode the provider rejected writes 11; the burst locked the account as soon as it
    // overflowed, so most (often all) of the verified passwords never reach the provider.
    expect(types.filter((type) => type === 11).length).toBeLessThanOrEqual(asked);
    expect((await state(t, id)).PasswordLocked).toBe(true);
  });

  it('the right password and passcode after three wrong passcodes still sign in (the fourth place is its own)', async () => {
    const { id } = await insertUser(t, { name: 'otp-seq', password: STRONG });
    for (let i = 0; i < 3; i++) {
      expect((await new Browser(t.url).post(SIGN_IN, { userName: 'otp-seq', password: STRONG, mfa: '00000000' })).status).toBe(401);
    }
    expect((await new Browser(t.url).post(SIGN_IN, { userName: 'otp-seq', password: STRONG, mfa: PASSCODE })).status).toBe(200);
    expect(await state(t, id)).toEqual({ PasswordLocked: false, FailedPasswordCount: 0 });
    expect(await failureTypes(t, 'otp-seq')).toEqual([11, 11, 11, null]);
  });

  it('a burst of right passwords without a passcode does not reveal 202 once the lock is reached', async () => {
    const { id } = await insertUser(t, { name: 'probe', password: STRONG });
    const wrong = Promise.all(Array.from({ length: 8 }, (_, i) => new Browser(t.url).post(SIGN_IN, { userName: 'probe', password: `wrong-${i}` })));
    await waitUntil(async () => (await state(t, id)).FailedPasswordCount >= 4 || (await state(t, id)).PasswordLocked, 'the burst to be counted');
    const probe = await new Browser(t.url).post(SIGN_IN, { userName: 'probe', password: STRONG });
    expectGenericRefusal([...(await wrong), probe]);
    expect((await state(t, id)).PasswordLocked).toBe(true);
  });
});
