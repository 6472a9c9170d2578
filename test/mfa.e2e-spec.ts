import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { insertUser } from './helpers/users';
import { openSessionOf, sessionRowOf, sessionRowsOf } from './helpers/user-sessions';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';
const DEFAULT_KEY = 'DefaultMultifactorClientKey-ChangeMe';
const PASSCODE = '12345678';

const attemptBody = (passcode: string, subjectName = 'alice') => ({
  clientId: 'TransactionMonitoring',
  subjectName,
  subjectCredentials: [{ methodId: 'SECURID', collectedInputs: [{ name: 'SECURID', value: passcode }] }],
});

describe('second factor with the bundled mock (contract 7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { EnableMultifactorAuthentication: 'True' } });
  });
  afterAll(async () => t.close());

  const logins = (name: string) =>
    t.db.query<{ Failed: boolean; FailureTypeId: number | null; FailureMessage: string | null; AuthenticationTypeId: number }>(
      `SELECT * FROM "UserLogin" WHERE "CreatedUser" = $1 ORDER BY "Id"`,
      [name],
    );
  const signIn = (browser: Browser, userName: string, mfa?: string) =>
    browser.post('/api/Authentication/ByUserNamePassword', { userName, password: STRONG, ...(mfa === undefined ? {} : { mfa }) });

  describe('the mock at /api/mfa', () => {
    it('answers SUCCESS only for the fixed passcode with the default client key, by GET and by POST', async () => {
      const b = new Browser(t.url, {});
      const ok = await b.get(`/api/mfa?subjectName=alice&passcode=${PASSCODE}`, { 'client-key': DEFAULT_KEY });
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ attemptResponseCode: 'SUCCESS' });
      const wrong = await b.get('/api/mfa?subjectName=alice&passcode=87654321', { 'client-key': DEFAULT_KEY });
      expect(wrong.status).toBe(200);
      expect(wrong.json).toEqual({ attemptResponseCode: 'FAIL' });

      const posted = await b.post('/api/mfa', attemptBody(PASSCODE), { 'client-key': DEFAULT_KEY });
      expect(posted.status).toBe(200);
      expect(posted.json).toEqual({ attemptResponseCode: 'SUCCESS' });
      const postedWrong = await b.post('/api/mfa', attemptBody('00000000'), { 'client-key': DEFAULT_KEY });
      expect(postedWrong.json).toEqual({ attemptResponseCode: 'FAIL' });
      const otherMethod = await b.post(
        '/api/mfa',
        { subjectName: 'alice', subjectCredentials: [{ methodId: 'OTHER', collectedInputs: [{ name: 'SECURID', value: PASSCODE }] }] },
        { 'client-key': DEFAULT_KEY },
      );
      expect(otherMethod.json).toEqual({ attemptResponseCode: 'FAIL' });
    });

    it('answers 401 for a missing or wrong client-key, and 400 for a malformed body', async () => {
      const b = new Browser(t.url, {});
      expect((await b.get(`/api/mfa?subjectName=alice&passcode=${PASSCODE}`)).status).toBe(401);
      const wrongKey = await b.get(`/api/mfa?subjectName=alice&passcode=${PASSCODE}`, { 'client-key': 'guess' });
      expect(wrongKey.status).toBe(401);
      expect(wrongKey.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect((await b.post('/api/mfa', attemptBody(PASSCODE))).status).toBe(401);
      const malformed = await b.post('/api/mfa', { subjectName: 'alice', subjectCredentials: 'x' }, { 'client-key': DEFAULT_KEY });
      expect(malformed.status).toBe(400);
    });
  });

  describe('password sign-in with the second factor', () => {
    it('asks for the passcode (202, no cookie), then signs in with the right one', async () => {
      const user = await insertUser(t, { name: 'alice', password: STRONG });
      const browser = new Browser(t.url);
      const first = await signIn(browser, 'alice');
      expect(first.status).toBe(202);
      expect(first.json).toEqual({ mfaRequired: true });
      expect(first.setCookies).toEqual([]);
      expect(await logins('alice')).toEqual([]);
      expect(await sessionRowsOf(t, user.id)).toEqual([]);

      const second = await signIn(browser, 'alice', PASSCODE);
      expect(second.status).toBe(200);
      expect(typeof second.json.token).toBe('string');
      expect(await sessionRowOf(t, second.json.token)).toMatchObject(openSessionOf(user, AuthenticationTypeId.UserNamePassword, t.clock.nowMs()));
      expect(await sessionRowsOf(t, user.id)).toHaveLength(1);
      expect(browser.cookies.has('authentication-jwt')).toBe(true);
      expect(await logins('alice')).toEqual([expect.objectContaining({ Failed: false, FailureTypeId: null, AuthenticationTypeId: AuthenticationTypeId.UserNamePassword })]);
      expect((await browser.get('/api/Authentication/Session')).json).toMatchObject({ userName: 'alice' });
    });

    it('refuses a wrong passcode with the common 401 and FailureTypeId 11, FailureMessage null', async () => {
      await insertUser(t, { name: 'bob', password: STRONG });
      const browser = new Browser(t.url);
      const wrongPasscode = await signIn(browser, 'bob', '11111111');
      const wrongPassword = await browser.post('/api/Authentication/ByUserNamePassword', {
        userName: 'bob',
        password: 'not-the-password',
        mfa: PASSCODE,
      });
      expect(wrongPasscode.status).toBe(401);
      expect(wrongPasscode.text).toBe(wrongPassword.text);
      expect(wrongPasscode.setCookies).toEqual([]);
      expect(await logins('bob')).toEqual([
        expect.objectContaining({ Failed: true, FailureTypeId: FailureTypeId.SecondFactorRejected, FailureMessage: null, AuthenticationTypeId: AuthenticationTypeId.UserNamePassword }),
        expect.objectContaining({ Failed: true, FailureTypeId: FailureTypeId.PasswordMismatch }),
      ]);
    });

    it('counts wrong passcodes toward the lockout: the attempt reaching the lock writes 11, then 3', async () => {
      const { id } = await insertUser(t, { name: 'carol', password: STRONG });
      const browser = new Browser(t.url);
      for (let i = 0; i < 4; i++) expect((await signIn(browser, 'carol', '99999999')).status).toBe(401);
      const [state] = await t.db.query<{ PasswordLocked: boolean; FailedPasswordCount: number }>(
        `SELECT "PasswordLocked", "FailedPasswordCount" FROM "UserRegistry" WHERE "Id" = $1`,
        [id],
      );
      expect(state.PasswordLocked).toBe(true);
      // Locked now: even the right password and passcode are refused.
      expect((await signIn(browser, 'carol', PASSCODE)).status).toBe(401);
      expect((await logins('carol')).map((row) => row.FailureTypeId)).toEqual([...Array(4).fill(FailureTypeId.SecondFactorRejected), FailureTypeId.PasswordLocked]);
    });

    it('a right passcode resets the failure count left by wrong ones', async () => {
      const { id } = await insertUser(t, { name: 'dave', password: STRONG });
      const browser = new Browser(t.url);
      for (let i = 0; i < 3; i++) expect((await signIn(browser, 'dave', '99999999')).status).toBe(401);
      expect((await signIn(browser, 'dave', PASSCODE)).status).toBe(200);
      const [state] = await t.db.query<{ FailedPasswordCount: number; PasswordLocked: boolean }>(
        `SELECT "FailedPasswordCount", "PasswordLocked" FROM "UserRegistry" WHERE "Id" = $1`,
        [id],
      );
      expect(state).toEqual({ FailedPasswordCount: 0, PasswordLocked: false });
    });
  });
});

describe('second factor when the client key is no longer the shipped default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { EnableMultifactorAuthentication: 'True', MultifactorAuthenticationClientKey: 'a-real-provider-key-0123456789' },
    });
  });
  afterAll(async () => t.close());

  it('the mock refuses every caller with 401, even with the default header', async () => {
    const b = new Browser(t.url, {});
    expect((await b.get(`/api/mfa?subjectName=x&passcode=${PASSCODE}`, { 'client-key': DEFAULT_KEY })).status).toBe(401);
    expect((await b.post('/api/mfa', attemptBody(PASSCODE), { 'client-key': 'a-real-provider-key-0123456789' })).status).toBe(401);
  });

  it('so the fixed passcode no longer signs anyone in (FailureTypeId 11)', async () => {
    await insertUser(t, { name: 'erin', password: STRONG });
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'erin', password: STRONG, mfa: PASSCODE });
    expect(res.status).toBe(401);
    const rows = await t.db.query<{ FailureTypeId: number; FailureMessage: string | null }>(
      `SELECT "FailureTypeId", "FailureMessage" FROM "UserLogin" WHERE "CreatedUser" = 'erin'`,
    );
    expect(rows).toEqual([{ FailureTypeId: FailureTypeId.SecondFactorRejected, FailureMessage: null }]);
  });
});
