import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CookieOptions, Request, Response } from 'express';
import type * as OpenIdClient from 'openid-client';
import { AuthenticationTypeId, FailureTypeId } from '../sign-in-trail/audit.types';
import { requestOrigin } from '../guard/same-origin';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { isLoopbackHost } from '../config/settings';
import { localPath } from '../common/local-path';
import { hasControlCharacter } from '../common/text';
import { enabledSchemes } from './enabled-schemes';
import { bindingMatches, newBinding, OAuthFlow, OAuthStateSealer } from './oauth-state';
import { Identified, SignInFailure, SignInResult, SignInScheme } from './sign-in-scheme';
import { messageOf } from '../common/errors';

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

/** How an OpenID Connect sign-in fails to the browser: a redirect to the sign-in page with an error code. */
export class SignInRedirect extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
  }
}

/** The callback's input: how the authorization response arrived. */
export interface OAuthCallbackInput {
  method: 'GET' | 'POST';
}

/** Where the browser goes after signing in (from the sealed state). */
export interface OAuthEvidence {
  returnUrl: string;
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
 * unless OAuthForceGet (GET, query). The identity claim (proved by the signed ID token) is the user
 * name SignInFlow matches to an existing, Active, unlocked user; no account is ever created and no
 * second factor follows (the provider owns MFA).
 *
 * The flow's secrets travel in the sealed state (see OAuthStateSealer for why), so any node can finish
 * a flow another node started. Every failure, an unexpected error included, writes a UserLogin row
 * (AuthenticationTypeId 3) and sends the browser to /Account/Login?error=<code>.
 */
@Injectable()
export class OAuthScheme implements SignInScheme<OAuthCallbackInput, OAuthEvidence> {
  readonly type = AuthenticationTypeId.OAuth;
  private readonly logger = new Logger('OAuth');
  private readonly sealer: OAuthStateSealer;
  private configuration: Promise<OpenIdClient.Configuration> | null = null;
  /** Set when the provider refused client_secret_post and accepted client_secret_basic. */
  private basicAuthentication = false;

  constructor(
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {
    this.sealer = new OAuthStateSealer(settings.jwtKey);
  }

  get enabled(): boolean {
    return enabledSchemes(this.settings).oauth;
  }

  /**
   * GET OAuth/Login, run by SignInFlow.begin (an address past the throttle is not even sent to the
   * provider, contract 13): the provider's authorization URL for a new flow, or a SignInFailure
   * (RemoteFailure) when the provider cannot be reached.
   */
  async authorizationUrl(req: Request, res: Response, returnUrl: unknown): Promise<string> {
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
      throw error instanceof SignInFailure ? error : new SignInFailure(FailureTypeId.RemoteFailure, messageOf(error));
    }
  }

  /** Where the browser goes after the callback's sign-in went through. */
  landing(result: SignInResult<OAuthEvidence>): string {
    if (result.kind === 'signedIn') this.logger.log(`user ${result.account.id} signed in by OpenID Connect`);
    return this.settings.oauthForceRedirect ?? result.evidence.returnUrl;
  }

  claimedName(): null {
    return null;
  }

  /** Validates the provider's answer: the identity claim of a checked ID token, or SignInFailure. */
  async identify(input: OAuthCallbackInput, req: Request, res: Response): Promise<Identified<OAuthEvidence>> {
    res.clearCookie(OAUTH_BINDING_COOKIE, this.bindingCookieOptions(req));
    const { method } = input;
    const params = this.responseParameters(req, method);
    if (params.error !== undefined) {
      throw new SignInFailure(FailureTypeId.RemoteFailure, [params.error, params.error_description].filter(Boolean).join(': '));
    }
    const expected = this.settings.oauthForceGet ? 'GET' : 'POST';
    if (method !== expected) {
      throw new SignInFailure(FailureTypeId.LocalValidationFailure, `the authorization response arrived by ${method}, ${expected} expected`);
    }
    const flow = this.sealer.open(params.state);
    if (!flow) throw new SignInFailure(FailureTypeId.LocalValidationFailure, 'state is missing or not valid');
    if (flow.expires < this.clock.nowMs()) throw new SignInFailure(FailureTypeId.LocalValidationFailure, 'state has expired');
    const cookie = (req.cookies as Record<string, string> | undefined)?.[OAUTH_BINDING_COOKIE];
    if (cookie !== undefined ? !bindingMatches(cookie, flow.binding) : this.bindingRequired(req)) {
      throw new SignInFailure(FailureTypeId.LocalValidationFailure, 'state was not started by this browser');
    }

    const claims = await this.redeem(flow, params);
    const identity = identityClaim(claims);
    if (identity === null) throw new SignInFailure(FailureTypeId.NoIdentityClaim, 'the identity provider ticket has no usable identity claim');
    return { userName: identity, evidence: { returnUrl: localPath(flow.returnUrl) ?? '/' } };
  }

  /** Every failure goes back to the sign-in page with its code (its row is already written). */
  refusal(failure: SignInFailure): Error {
    const code = (failure.failureTypeId !== null ? ERROR_CODES[failure.failureTypeId] : undefined) ?? 'sign_in_failed';
    this.logger.warn(`OpenID Connect sign-in failed (FailureTypeId ${failure.failureTypeId})`);
    return new SignInRedirect(`/Account/Login?error=${code}`);
  }

  /** A browser back from the provider cannot read a 503: any other error is a refusal too (10). */
  unexpected(error: unknown, createdUser: string | null): SignInFailure {
    return new SignInFailure(FailureTypeId.InternalError, messageOf(error), createdUser);
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
      if (error instanceof SignInFailure) throw error;
      const { failureTypeId, message } = classifyProviderError(error);
      throw new SignInFailure(failureTypeId, message);
    }
  }

  /** Only string parameters, from the body (form_post) or the query; repeated parameters are refused. */
  private responseParameters(req: Request, method: 'GET' | 'POST'): Record<string, string> {
    const source = (method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(source ?? {})) {
      if (typeof value !== 'string') {
        throw new SignInFailure(FailureTypeId.LocalValidationFailure, `the authorization response parameter ${name.slice(0, 64)} is malformed`);
      }
      params[name] = value;
    }
    return params;
  }

  private redirectUri(req: Request): string {
    if (this.settings.oauthRedirectUri) return this.settings.oauthRedirectUri;
    const origin = requestOrigin(req);
    if (!origin) throw new SignInFailure(FailureTypeId.InternalError, 'the request has no Host to build the redirect URI from');
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
      throw new SignInFailure(FailureTypeId.RemoteFailure, `discovery failed: ${message}`);
    });
  }
}
