import { enabledSchemes } from './enabled-schemes';

describe('enabledSchemes', () => {
  const settings = (oauth: boolean, negotiate: boolean, mfa: boolean) => ({
    oauthAuthentication: oauth,
    negotiateAuthentication: negotiate,
    enableMultifactorAuthentication: mfa,
  });

  it('offers password sign-in only when neither OAuth nor Negotiate is on', () => {
    expect(enabledSchemes(settings(false, false, false))).toEqual({ password: true, oauth: false, negotiate: false, mfa: false });
    expect(enabledSchemes(settings(true, false, false)).password).toBe(false);
    expect(enabledSchemes(settings(false, true, false)).password).toBe(false);
    expect(enabledSchemes(settings(true, true, false)).password).toBe(false);
  });

  it('asks for a passcode after password or Negotiate, never after OpenID Connect', () => {
    expect(enabledSchemes(settings(false, false, true)).mfa).toBe(true);
    expect(enabledSchemes(settings(false, true, true)).mfa).toBe(true);
    expect(enabledSchemes(settings(true, false, true)).mfa).toBe(false);
  });
});
