import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Express, NextFunction, Request, Response } from 'express';
import { dirname, join } from 'node:path';
import { Authenticator } from './guard/authenticator.service';
import { SlidingRefresh } from './guard/sliding-refresh';
import { sendProblem, toProblem } from './common/problem';
import { setSecurityHeaders } from './web/html';

/** Swagger UI's own files, served from the swagger-ui-dist package; nothing else in that folder is. */
const SWAGGER_UI_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

/**
 * The explorer page. No inline script or style at all, so it runs under the same strict
 * Content-Security-Policy as every other page (script-src 'self', style-src 'self'): Swagger UI's
 * bundle and stylesheet come from /swagger/, its start-up from /assets/explorer.js. Absolute paths,
 * because the page answers at /swagger, /swagger/ and /swagger/index.html alike (Nest's own page used
 * relative ones that resolved to /swagger/swagger/… from /swagger/index.html and left it blank).
 */
const EXPLORER_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transaction monitoring API</title>
<link rel="icon" type="image/png" href="/swagger/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="/swagger/favicon-16x16.png" sizes="16x16">
<link rel="stylesheet" href="/swagger/swagger-ui.css">
<link rel="stylesheet" href="/assets/explorer.css">
</head>
<body>
<header class="explorer-bar">
<a class="explorer-back" href="/">← Back to Transaction Monitoring</a>
<span id="explorer-session" class="explorer-session"></span>
</header>
<p class="explorer-note">Requests sent from this page go with your session cookie, so the locks show closed while you are signed in. The cookie is HttpOnly and is never shown to scripts: curl lines name it as a placeholder. For a curl line that runs on its own, choose Authorize and enter an API key (x-api-key); it is kept for this page only.</p>
<div id="swagger-ui"><noscript>The API explorer needs JavaScript.</noscript></div>
<script src="/swagger/swagger-ui-bundle.js"></script>
<script src="/assets/explorer.js"></script>
</body>
</html>
`;

/**
 * The API explorer and its OpenAPI document, served to authenticated callers only (contract 11): a
 * browser without a session is sent to the login page and back, anyone else gets 401.
 */
export function setupExplorer(app: NestExpressApplication): void {
  const authenticator = app.get(Authenticator);
  const refresh = app.get(SlidingRefresh);
  const gate = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const principal = await authenticator.tryAuthenticate(req);
      if (principal) {
        refresh.renew(req, res, principal);
        setSecurityHeaders(res);
        return next();
      }
    } catch (error) {
      return sendProblem(res, toProblem(error).problem);
    }
    if ((req.get('accept') ?? '').includes('text/html')) {
      res.redirect(302, `/Account/Login?returnUrl=${encodeURIComponent(req.originalUrl)}`);
      return;
    }
    sendProblem(res, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'Authentication is required.' });
  };
  app.use('/swagger', gate);

  const config = new DocumentBuilder()
    .setTitle('Transaction monitoring: security and telemetry')
    .setDescription(
      'Authentication, sessions, audit trails and background-processing telemetry. Each route states the ' +
        'permission it requires; API keys (x-api-key) are for integration, JWTs for the user interface.',
    )
    .setVersion('1')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key' }, 'x-api-key')
    .addBearerAuth()
    // Named as the routes name it (@ApiCookieAuth('authentication-jwt') in access/decorators.ts): under
    // Nest's default name 'cookie' every route pointed at a scheme the document did not define.
    .addCookieAuth('authentication-jwt', { type: 'apiKey', in: 'cookie' }, 'authentication-jwt')
    .build();
  // Built at its first request, not at start: scanning every route's metadata costs about 0.1 s of
  // CPU that a restart would wait for before listening (issue 33); Nest keeps the document once built.
  const document = () => SwaggerModule.createDocument(app, config);
  // The documents only; the page and Swagger UI's files are served below.
  SwaggerModule.setup('swagger', app, document, {
    ui: false,
    raw: ['json', 'yaml'],
    jsonDocumentUrl: 'swagger/v1/swagger.json',
    yamlDocumentUrl: 'swagger/v1/swagger.yaml',
  });

  const http = app.getHttpAdapter().getInstance() as Express;
  const page = (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).type('html').send(EXPLORER_HTML);
  };
  http.get(['/swagger', '/swagger/', '/swagger/index.html'], page);
  const swaggerUi = dirname(require.resolve('swagger-ui-dist/package.json'));
  http.get('/swagger/:file', (req: Request, res: Response, next: NextFunction) => {
    const file = String(req.params.file);
    if (!SWAGGER_UI_FILES.has(file)) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(join(swaggerUi, file));
  });
}
