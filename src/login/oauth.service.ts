import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CookieOptions, Request, Response } from 'express';
import type * as OpenIdClient from 'openid-client';
import { AuthenticationTypeId, FailureTypeId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { requestOrigin } from '../auth/same-origin';
import { Clock } from '../common/clock';
import { requestContext } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { isLoopbackHost } from '../config/settings';
import { SignInAccount, UserAccounts } from '../users/user-accounts.service';
import { localPath } from '../common/local-path';
import { hasControlCharacter } from '../common/text';
import { bindingMatches, newBinding, OAuthFlow, OAuthStateSealer } from './oauth-state';
import { SignInCompletion } from './sign-in-completion.service';
import { SignInThrottle } from './sign-in-throttle.service';

export const OAUTH_CALLBACK_PATH = '/api/Authentication/OAuth/Callback';
export const OAUTH_BINDING_COOKIE = 'oauth-binding';
const BINDING_COOKIE_PATH = '/api/Authentication/OAuth';
/** How long a started sign-in may take at the provider. */
const FLOW_LIFETIME_MS = 10 * 60_000;
/** The identity claims tried in order (contract 8). */
export const IDENTITY_CLAIMS = ['preferred_username', 'email', 'upn', 'unique_name', 'name', 'sub'] as const;
const NAME_MAX = 256;

/** The `error` code of /Account/Login?error=… for each failure type. */
const ERROR_CODES: Partial<Record<FailureTypeId, string>> = {
  [FailureTypeId.NoUser]: 'unknown_user',
  [FailureTypeId.NotActive]: 'inactive_user',
  [FailureTypeId.PasswordLocked]: 'locked_user',
  [FailureTypeId.NoIdentityClaim]: 'no_identity_claim',
  [FailureTypeId.RemoteFailure]: 'provider_error',
  [FailureTypeId.LocalValidationFailure]: 'validation_failed',
  [FailureTypeId.InternalError]: 'internal_error',
};

/** A failed sign-in, thrown inside the flow and turned into a UserLogin row and a redirect. */
class OAuthFailure extends Error {
  constructor(
    readonly failureTypeId: FailureTypeId,
    message: string,
    readonly createdUser: string | null = null,
    readonly account: SignInAccount | null = null,
  ) {
    super(message);
  }
}

function messageOf(error: unknown): string {
  return String((error as { message?: unknown } | null)?.message ?? error);
}

/**
 * Sorts what openid-client throws into contract 12's failure types: an error the provider returned
 * (at the authorization or token endpoint), or a provider that cannot be reached or answers nonsense,
 * is 8; a check of ours failing (state, nonce, ID-token signature/claims/times, or a grant refused
 * because the PKCE verifier or redirect URI does not fit the code) is 9; anything else is 10.
 */
export function classifyProviderError(error: unknown): { failureTypeId: FailureTypeId; message: string } {
  const e = (error ?? {}) as { name?: string; code?: string; error?: string; error_description?: string; cause?: unknown };
  if (e.name === 'AuthorizationResponseError' || e.name === 'ResponseBodyError' || e.name === 'WWWAuthenticateChallengeError') {
    const message = [e.error, e.error_description].filter(Boolean).join(': ') || messageOf(error);
    return { failureTypeId: e.error === 'invalid_grant' ? FailureTypeId.LocalValidationFailure : FailureTypeId.RemoteFailure, message };
  }
  const code = typeof e.code === 'string' ? e.code : '';
  if (['OAUTH_RESPONSE_IS_NOT_JSON', 'OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_HTTP_REQUEST_FORBIDDEN'].includes(code)) {
    return { failureTypeId: FailureTypeId.RemoteFailure, message: messageOf(error) };
  }
  if (code.startsWith('OAUTH_') || code.startsWith('ERR_JOSE') || code.startsWith('ERR_JW')) {
    return { failureTypeId: FailureTypeId.LocalValidationFailure, message: messageOf(error) };
  }
  if (e.name === 'TypeError' && /fetch failed/i.test(messageOf(error))) {
    return { failureTypeId: FailureTypeId.RemoteFailure, message: `${messageOf(error)}: ${messageOf(e.cause)}` };
  }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return { failureTypeId: FailureTypeId.RemoteFailure, message: messageOf(error) };
  return { failureTypeId: FailureTypeId.InternalError, message: messageOf(error) };
}

/** The first identity claim that is present and usable as a user name (a non-empty string that fits). */
export function identityClaim(claims: Record<string, unknown>): string | null {
  for (const name of IDENTITY_CLAIMS) {
    const value = claims[name];
    if (typeof value !== 'string') continue;
    const trimmed = value.trim();
    if (trimmed.length === 0 || trimmed.length > NAME_MAX || hasControlCharacter(trimmed)) continue;
    return trimmed;
  }
  return null;
}

/**
 * OpenID Connect sign-in (service.md 5.2, contract 8 and 12) with openid-client 6: discovery from
 * OAuthAuthority, authorization code with S256 PKCE, state and nonce, callback by form_post (POST)
 * unless OAuthForceGet (GET, query). The identity claim is matched to an existing, Active, unlocked
 * user; no account is ever created and no second factor follows (the provider owns MFA).
 *
 * The flow's secrets travel in the sealed state (see OAuthStateSealer for why), so any node can finish
 * a flow another node started. Every failure writes a UserLogin row (AuthenticationTypeId 3) and sends
 * the browser to /Account/Login?error=<code>.
 */
@Injectable()
export class OAuthSignIn {
  private readonly logger = new Logger('OAuth');
  private readonly sealer: OAuthStateSealer;
  private configuration: Promise<OpenIdClient.Configuration> | null = null;
  /** Set when the provider refused client_secret_post and accepted client_secret_basic. */
  private basicAuthentication = false;

  constructor(
    private readonly accounts: UserAccounts,
    private readonly audit: AuditWriter,
    private readonly completion: SignInCompletion,
    private readonly clock: Clock,
    private readonly throttle: SignInThrottle,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {
    this.sealer = new OAuthStateSealer(settings.jwtKey);
  }

  get enabled(): boolean {
    return this.settings.oauthAuthentication;
  }

  /** GET OAuth/Login: the provider's authorization URL for a new flow (or the login page with an error). */
  async start(req: Request, res: Response, returnUrl: unknown): Promise<string> {
    // An address past SignInThrottle is not even sent to the provider (contract 13): 429.
    await this.throttle.check(req, AuthenticationTypeId.OAuth);
    try {
      const client = await this.library();
      const config = await this.discover();
      const codeVerifier = client.randomPKCECodeVerifier();
      const nonce = client.randomNonce();
      const binding = newBinding();
      const redirectUri = this.redirectUri(req);
      const flow: OAuthFlow = {
        codeVerifier,
        nonce,
        redirectUri,
        returnUrl: localPath(returnUrl) ?? '/',
        binding: binding.hash,
        expires: this.clock.nowMs() + FLOW_LIFETIME_MS,
      };
      res.cookie(OAUTH_BINDING_COOKIE, binding.cookie, { ...this.bindingCookieOptions(req), maxAge: FLOW_LIFETIME_MS });
      return client.buildAuthorizationUrl(config, {
        response_type: 'code',
        response_mode: this.settings.oauthForceGet ? 'query' : 'form_post',
        redirect_uri: redirectUri,
        scope: 'openid profile email',
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: this.sealer.seal(flow),
        nonce,
      }).href;
    } catch (error) {
      const failure = error instanceof OAuthFailure ? error : new OAuthFailure(FailureTypeId.RemoteFailure, messageOf(error));
      return this.failed(failure, req);
    }
  }

  /** The callback, by GET (query) or POST (form_post): where to send the browser next. */
  async callback(req: Request, res: Response, method: 'GET' | 'POST'): Promise<string> {
    // Counted before the state, the code or the ID token is looked at (contract 13): 429 past the limit.
    const ticket = await this.throttle.enter(req, AuthenticationTypeId.OAuth, null);
    res.clearCookie(OAUTH_BINDING_COOKIE, this.bindingCookieOptions(req));
    try {
      const params = this.responseParameters(req, method);
      const account = await this.establish(req, params, method);
      if (!(await this.accounts.recordSuccess(account.id))) {
        throw new OAuthFailure(FailureTypeId.PasswordLocked, 'the user was locked during the sign-in', account.name, account);
      }
      await this.completion.complete(account, AuthenticationTypeId.OAuth, req, res);
      this.logger.log(`user ${account.id} signed in by OpenID Connect`);
      await ticket.release();
      return this.settings.oauthForceRedirect ?? this.returnUrlOf(params);
    } catch (error) {
      const failure =
        error instanceof OAuthFailure ? error : new OAuthFailure(FailureTypeId.InternalError, messageOf(error));
      return this.failed(failure, req);
    }
  }

  private returnUrlOf(params: Record<string, string>): string {
    return localPath(this.sealer.open(params.state)?.returnUrl) ?? '/';
  }

  /** Validates the provider's answer and finds the user; throws OAuthFailure for every refusal. */
  private async establish(req: Request, params: Record<string, string>, method: 'GET' | 'POST'): Promise<SignInAccount> {
    if (params.error !== undefined) {
      throw new OAuthFailure(FailureTypeId.RemoteFailure, [params.error, params.error_description].filter(Boolean).join(': '));
    }
    const expected = this.settings.oauthForceGet ? 'GET' : 'POST';
    if (method !== expected) {
      throw new OAuthFailure(FailureTypeId.LocalValidationFailure, `the authorization response arrived by ${method}, ${expected} expected`);
    }
    const flow = this.sealer.open(params.state);
    if (!flow) throw new OAuthFailure(FailureTypeId.LocalValidationFailure, 'state is missing or not valid');
    if (flow.expires < this.clock.nowMs()) throw new OAuthFailure(FailureTypeId.LocalValidationFailure, 'state has expired');
    const cookie = (req.cookies as Record<string, string> | undefined)?.[OAUTH_BINDING_COOKIE];
    if (cookie !== undefined ? !bindingMatches(cookie, flow.binding) : this.bindingRequired(req)) {
      throw new OAuthFailure(FailureTypeId.LocalValidationFailure, 'state was not started by this browser');
    }

    const claims = await this.redeem(flow, params);
    const identity = identityClaim(claims);
    if (identity === null) throw new OAuthFailure(FailureTypeId.NoIdentityClaim, 'the identity provider ticket has no usable identity claim');

    let account: SignInAccount | null;
    try {
      account = await this.accounts.findByName(identity);
    } catch (error) {
      throw new OAuthFailure(FailureTypeId.InternalError, messageOf(error), identity);
    }
    if (!account) throw new OAuthFailure(FailureTypeId.NoUser, 'no user matches the identity claim', identity);
    if (!account.active) throw new OAuthFailure(FailureTypeId.NotActive, 'the user is not active', identity, account);
    if (account.passwordLocked) throw new OAuthFailure(FailureTypeId.PasswordLocked, 'the user is locked', identity, account);
    return account;
  }

  /** Code for tokens (PKCE verifier, nonce and ID token checked by openid-client), then the claims. */
  private async redeem(flow: OAuthFlow, params: Record<string, string>): Promise<Record<string, unknown>> {
    const client = await this.library();
    const current = new URL(flow.redirectUri);
    for (const [name, value] of Object.entries(params)) current.searchParams.append(name, value);
    const checks = { pkceCodeVerifier: flow.codeVerifier, expectedNonce: flow.nonce, expectedState: params.state, idTokenExpected: true };
    try {
      let config = await this.discover();
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, current, checks);
      } catch (error) {
        // A client registered for client_secret_basic refuses the (default) post method before the
        // code is spent; try once with basic and remember it.
        const refused = (error as { name?: string; error?: string }).error === 'invalid_client';
        if (!refused || this.basicAuthentication || !this.settings.oauthClientSecret) throw error;
        this.basicAuthentication = true;
        this.configuration = null;
        config = await this.discover();
        tokens = await client.authorizationCodeGrant(config, current, checks);
      }
      const idClaims = (tokens.claims() ?? {}) as Record<string, unknown>;
      let userInfo: Record<string, unknown> = {};
      if (tokens.access_token && config.serverMetadata().userinfo_endpoint && typeof idClaims.sub === 'string') {
        userInfo = (await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) as Record<string, unknown>;
      }
      // The signed ID token wins; userinfo (same subject, checked) fills in what it leaves out.
      return { ...userInfo, ...idClaims };
    } catch (error) {
      if (error instanceof OAuthFailure) throw error;
      const { failureTypeId, message } = classifyProviderError(error);
      throw new OAuthFailure(failureTypeId, message);
    }
  }

  private async failed(failure: OAuthFailure, req: Request): Promise<string> {
    const code = ERROR_CODES[failure.failureTypeId] ?? 'sign_in_failed';
    try {
      await this.audit.login({
        createdUser: failure.account?.name ?? failure.createdUser,
        userRegistryId: failure.account?.id ?? null,
        tenantRegistryId: failure.account?.tenantRegistryId ?? null,
        authenticationTypeId: AuthenticationTypeId.OAuth,
        failureTypeId: failure.failureTypeId,
        failureMessage: failure.message,
        context: requestContext(req),
      });
    } catch (error) {
      this.logger.error(`could not write the failed OpenID Connect sign-in row: ${messageOf(error)}`);
    }
    this.logger.warn(`OpenID Connect sign-in failed (FailureTypeId ${failure.failureTypeId})`);
    return `/Account/Login?error=${code}`;
  }

  /** Only string parameters, from the body (form_post) or the query; repeated parameters are refused. */
  private responseParameters(req: Request, method: 'GET' | 'POST'): Record<string, string> {
    const source = (method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(source ?? {})) {
      if (typeof value !== 'string') {
        throw new OAuthFailure(FailureTypeId.LocalValidationFailure, `the authorization response parameter ${name.slice(0, 64)} is malformed`);
      }
      params[name] = value;
    }
    return params;
  }

  private redirectUri(req: Request): string {
    if (this.settings.oauthRedirectUri) return this.settings.oauthRedirectUri;
    const origin = requestOrigin(req);
    if (!origin) throw new OAuthFailure(FailureTypeId.InternalError, 'the request has no Host to build the redirect URI from');
    return origin + OAUTH_CALLBACK_PATH;
  }

  /**
   * The binding cookie is sent with the GET (query) callback, a top-level navigation, and with a
   * cross-site form_post only when SameSite=None; Secure, which browsers accept over HTTPS only.
   */
  private bindingCookieOptions(req: Request): CookieOptions {
    const secure = this.settings.secureHttpCookie || req.secure;
    return {
      httpOnly: true,
      path: BINDING_COOKIE_PATH,
      secure,
      sameSite: !this.settings.oauthForceGet && secure ? 'none' : 'lax',
    };
  }

  private bindingRequired(req: Request): boolean {
    return this.settings.oauthForceGet || this.settings.secureHttpCookie || req.secure;
  }

  private async library(): Promise<typeof OpenIdClient> {
    // ESM-only package: a dynamic import from our CommonJS output.
    return import('openid-client');
  }

  /** Discovery, once per node (retried after a failure). An http:// authority is loopback only. */
  private discover(): Promise<OpenIdClient.Configuration> {
    if (!this.configuration) {
      const attempt = (async () => {
        const client = await this.library();
        const authority = new URL(this.settings.oauthAuthority!);
        const insecure = authority.protocol === 'http:';
        if (insecure && !isLoopbackHost(authority.hostname)) throw new Error('http:// authority is accepted only for a loopback host');
        const secret = this.settings.oauthClientSecret;
        const authentication = secret
          ? this.basicAuthentication
            ? client.ClientSecretBasic(secret)
            : client.ClientSecretPost(secret)
          : client.None();
        const config = await client.discovery(authority, this.settings.oauthClientId!, secret ?? undefined, authentication, {
          execute: insecure ? [client.allowInsecureRequests] : [],
          timeout: 10,
        });
        return config;
      })();
      this.configuration = attempt;
      attempt.catch(() => {
        if (this.configuration === attempt) this.configuration = null;
      });
    }
    return this.configuration.catch((error: unknown) => {
      const { message } = classifyProviderError(error);
      throw new OAuthFailure(FailureTypeId.RemoteFailure, `discovery failed: ${message}`);
    });
  }
}
