// The API explorer (/swagger/index.html): Swagger UI over this service's OpenAPI document. "Try it
// out" calls the API from this page, so the browser's session cookie goes with each request and the
// browser marks it same-origin (Sec-Fetch-Site), which the CSRF check accepts. A file of its own
// because the Content-Security-Policy allows no inline script.
/**
 * Swagger UI's bundle (swagger-ui-bundle.js, loaded from /swagger/ before this file, which sets the
 * global SwaggerUIBundle), as far as this page uses it.
 * @type {((options: Record<string, unknown>) => { preauthorizeApiKey(scheme: string, value: string): void }) & { presets: { apis: unknown } }}
 */
const swaggerUiBundle = /** @type {any} */ (globalThis).SwaggerUIBundle;

/** The cookie security scheme of the document (src/explorer.ts addCookieAuth). */
const COOKIE_SCHEME = 'authentication-jwt';
/**
 * What the curl lines show for the session cookie. The real value is HttpOnly: no script, this one
 * included, can read it, and the explorer does not ask the server for it (that would hand the
 * session to any script on the page). The placeholder says which cookie to paste.
 */
const COOKIE_PLACEHOLDER = 'PASTE-YOUR-SESSION-COOKIE';

const ui = swaggerUiBundle({
  url: '/swagger/v1/swagger.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [swaggerUiBundle.presets.apis],
  layout: 'BaseLayout',
  // No call to the public validator service: nothing leaves this origin.
  validatorUrl: null,
  // An API key entered under Authorize lives in this page only: kept in localStorage it would
  // outlive the session and be readable by any script of this origin.
  persistAuthorization: false,
  /** @param {{ credentials: string }} request */
  requestInterceptor: (request) => {
    // The browser sends its own session cookie (same origin); the Cookie header Swagger UI adds for
    // the cookie scheme carries only the placeholder, and a browser drops that header anyway.
    request.credentials = 'same-origin';
    return request;
  },
  onComplete: () => void showSession(),
});

/**
 * Who is signed in, in the bar above the explorer; while signed in, the cookie scheme counts as
 * authorised, so the operations' locks show closed and each curl line names the cookie it needs.
 */
async function showSession() {
  const holder = /** @type {HTMLElement} */ (document.getElementById('explorer-session'));
  try {
    const response = await fetch('/api/Authentication/Session', { credentials: 'same-origin', headers: { accept: 'application/json' }, cache: 'no-store' });
    if (!response.ok) {
      holder.textContent = 'Not signed in';
      return;
    }
    const session = await response.json();
    holder.textContent = `Signed in as ${session.userName} (${session.tenantName})`;
    document.body.dataset.signedIn = 'true';
    ui.preauthorizeApiKey(COOKIE_SCHEME, COOKIE_PLACEHOLDER);
  } catch {
    holder.textContent = 'The service could not be reached';
  }
}
