import { generateKeyPairSync } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { messageOf } from '../../src/common/errors';
import { Browser } from './http';

/**
 * A real OpenID provider (the `oidc-provider` package) on loopback, for driving the whole browser flow
 * of contract 8 with HTTP requests. Its HTTP server starts first (so the issuer URL is known before
 * the service starts); the provider itself is built by `configure()` once the service's callback URL
 * is known. Interactions are a tiny JSON/form API instead of pages: POST /interaction/:uid/login with
 * `account=<id>` signs that account in and grants every requested scope; POST /interaction/:uid/abort
 * denies (access_denied).
 */
export interface OidcProvider {
  issuer: string;
  /** Claims of each account, by account id (= sub). Tests add accounts as they need them. */
  accounts: Map<string, Record<string, unknown>>;
  configure(options: { redirectUris: string[]; clientId?: string; clientSecret?: string; authMethod?: 'client_secret_post' | 'client_secret_basic' }): Promise<void>;
  /**
   * Follows the provider's redirects from the authorization URL as a browser would, signs `account` in
   * (or denies when account is null), and returns the authorization response the browser would carry
   * back: a form_post form or a query redirect.
   */
  authorize(authorizationUrl: string, account: string | null, denyDescription?: string): Promise<{ method: 'GET' | 'POST'; action: string; params: Record<string, string> }>;
  stop(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req) text += chunk.toString();
  return new URLSearchParams(text);
}

function decodeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export async function startOidcProvider(): Promise<OidcProvider> {
  let provider: any = null;
  const accounts = new Map<string, Record<string, unknown>>();

  const interaction = async (req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) => {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error('interaction mismatch');
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ uid, prompt: details.prompt.name }));
      return;
    }
    const body = await readBody(req);
    if (action === 'abort') {
      const description = body.get('description') || 'End-User aborted interaction';
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: description }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = body.get('account') ?? '';
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  };

  const server: Server = createServer((req, res) => {
    const match = /^\/interaction\/([^/?]+)(?:\/(login|abort))?/.exec(req.url ?? '');
    if (!provider) {
      res.writeHead(503).end();
      return;
    }
    if (match) {
      interaction(req, res, match[1], match[2]).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(messageOf(error));
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    accounts,
    async configure({ redirectUris, clientId = 'tm-client', clientSecret = 'tm-client-secret-0123456789', authMethod = 'client_secret_post' }) {
      // @ts-expect-error oidc-provider ships no type declarations
      const { default: Provider } = await import('oidc-provider');
      const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
      provider = new (Provider as any)(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: redirectUris,
            response_types: ['code'],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: authMethod,
          },
        ],
        async findAccount(_ctx: unknown, id: string) {
          if (!accounts.has(id)) return undefined;
          return { accountId: id, async claims() { return { sub: id, ...accounts.get(id) }; } };
        },
        claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'upn', 'unique_name'], email: ['email'] },
        cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
        jwks: { keys: [{ ...jwk, alg: 'RS256', use: 'sig', kid: 'test' }] },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx: unknown, i: { uid: string }) => `/interaction/${i.uid}` },
        pkce: { required: () => true },
        responseTypes: ['code'],
        ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
      });
      // Quiet: the provider reports handled errors (e.g. invalid_grant) on its own event emitter.
      provider.on('server_error', () => undefined);
    },
    async authorize(authorizationUrl, account, denyDescription) {
      const browser = new Browser('', {});
      let res = await browser.get(authorizationUrl);
      let location = res.headers.get('location');
      if (!location || !/\/interaction\//.test(location)) throw new Error(`expected an interaction, got ${res.status} ${res.text}`);
      const interactionUrl = new URL(location, issuer).href;
      res = await browser.request('POST', `${interactionUrl}/${account === null ? 'abort' : 'login'}`, {
        body: new URLSearchParams({ account: account ?? '', description: denyDescription ?? '' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      location = res.headers.get('location');
      if (!location) throw new Error(`interaction did not finish: ${res.status} ${res.text}`);
      res = await browser.get(new URL(location, issuer).href);
      return readAuthorizationResponse(res);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The provider's last answer as the browser would act on it: follow a redirect, or submit the form. */
export function readAuthorizationResponse(res: { status: number; headers: Headers; text: string }): {
  method: 'GET' | 'POST';
  action: string;
  params: Record<string, string>;
} {
  const location = res.headers.get('location');
  if (res.status >= 300 && res.status < 400 && location) {
    const url = new URL(location);
    const params = Object.fromEntries(url.searchParams.entries());
    url.search = '';
    return { method: 'GET', action: url.href, params };
  }
  const form = /<form[^>]*method="post"[^>]*action="([^"]+)"/i.exec(res.text);
  if (!form) throw new Error(`no authorization response in ${res.status} ${res.text.slice(0, 500)}`);
  const params: Record<string, string> = {};
  for (const input of res.text.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)) params[decodeHtml(input[1])] = decodeHtml(input[2]);
  return { method: 'POST', action: decodeHtml(form[1]), params };
}
