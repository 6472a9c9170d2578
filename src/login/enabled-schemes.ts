import type { AppSettings } from '../config/config.module';

/** Which sign-in schemes this node offers; the one place that derives it from the settings. */
export interface EnabledSchemes {
  /** Username and password routes exist only when neither OAuth nor Negotiate is enabled (service.md 5.2). */
  password: boolean;
  oauth: boolean;
  negotiate: boolean;
  /** A passcode follows password or Negotiate sign-in (OpenID Connect leaves the second factor to the provider). */
  mfa: boolean;
}

export function enabledSchemes(
  settings: Pick<AppSettings, 'oauthAuthentication' | 'negotiateAuthentication' | 'enableMultifactorAuthentication'>,
): EnabledSchemes {
  const { oauthAuthentication: oauth, negotiateAuthentication: negotiate } = settings;
  return { password: !oauth && !negotiate, oauth, negotiate, mfa: settings.enableMultifactorAuthentication && !oauth };
}
