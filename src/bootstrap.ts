import { Logger, LoggerService, LogLevel, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import cookieParser from 'cookie-parser';
import express from 'express';
import { AppModule } from './app.module';
import { AppLogger } from './common/app-logger';
import { refuseDeepJson, refuseNonJsonBodies } from './common/body-rules';
import { displayUrl as openableUrl } from './common/display-url';
import { Clock } from './common/clock';
import { ProblemFilter, sendProblem, validationFailed } from './common/problem';
import { isDatabaseUnavailable } from './database/deadlines';
import { AppSettings } from './config/config.module';
import { setupExplorer } from './explorer';
import { OAUTH_CALLBACK_PATH } from './login/oauth.scheme';

/** Longest a client may take to send its request headers, then its whole request (slow clients). */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;

export interface CreateAppOptions {
  clock?: Clock;
  /** Nest's own logger levels (tests keep it quiet); by default the AppLogger of LogLevel and LogFormat. */
  logger?: LogLevel[] | false | LoggerService;
}

/** Rejects a NUL byte in the path or query (raw or percent-encoded) before routing (contract 2). */
function refuseNul(req: express.Request, res: express.Response, next: express.NextFunction): void {
  if (/%00|\u0000/i.test(req.originalUrl)) {
    sendProblem(res, { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'NUL is not allowed in a URL.' });
    return;
  }
  next();
}

const BODY_PROBLEMS: Record<string, { status: number; detail: string }> = {
  'entity.too.large': { status: 413, detail: 'The request body is larger than 32 KiB.' },
  'entity.parse.failed': { status: 400, detail: 'The request body is not valid JSON.' },
  'encoding.unsupported': { status: 415, detail: 'The request body encoding is not supported.' },
  'charset.unsupported': { status: 415, detail: 'The request body charset is not supported.' },
  'request.aborted': { status: 400, detail: 'The request body was not received completely.' },
  'request.size.invalid': { status: 400, detail: 'The request body does not match its Content-Length.' },
};

/** Answers body-parser failures with a fixed problem, never the parser's own message. */
function refuseUnreadableBody(error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction): void {
  const known = BODY_PROBLEMS[String((error as { type?: unknown } | null)?.type)];
  if (!known) return next(error);
  const titles: Record<number, string> = { 400: 'Bad Request', 413: 'Payload Too Large', 415: 'Unsupported Media Type' };
  sendProblem(res, { type: 'about:blank', title: titles[known.status], status: known.status, detail: known.detail });
}

/**
 * Builds the application exactly as `npm start` runs it; the tests call this too, with their own
 * settings and clock, so they exercise the real pipeline.
 */
export async function createApp(settings: AppSettings, options: CreateAppOptions = {}): Promise<NestExpressApplication> {
  const logger = options.logger !== undefined ? options.logger : new AppLogger({ level: settings.logLevel, format: settings.logFormat });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings, options.clock), {
    bodyParser: false,
    logger,
  });
  // A client that sends its request slowly (slowloris) holds a socket at most this long: 10 s for the
  // headers, 30 s for the whole request (bodies are 32 KiB at most). Answers are not bound by these:
  // a stream or an export paced by its reader has its own rules (contract 13).
  const server = app.getHttpServer() as import('node:http').Server;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  // A hop count or the proxies' addresses (contract 13); never Express's `true` (every hop trusted).
  app.set('trust proxy', settings.trustProxy);
  app.disable('x-powered-by');
  app.use(refuseNul);
  // 32 KiB bodies at most (413 beyond). JSON everywhere; a form body only for the OpenID Connect
  // form_post callback (contract 13: a cross-site form can drive nothing else), and no JSON nested
  // deeper than 32 levels reaches the recursive transformation and validation.
  app.use(refuseNonJsonBodies([OAUTH_CALLBACK_PATH]));
  app.use(express.json({ limit: '32kb', strict: true }));
  app.use(OAUTH_CALLBACK_PATH, express.urlencoded({ limit: '32kb', extended: false }));
  app.use(refuseUnreadableBody);
  app.use(refuseDeepJson);
  app.use(cookieParser());
  // A database that cannot be reached in time is a 503 for any route, never a 500.
  app.useGlobalFilters(new ProblemFilter(isDatabaseUnavailable));
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: false,
      transform: true,
      exceptionFactory: validationFailed,
    }),
  );
  setupExplorer(app);
  // process.exit() after a clean shutdown (not a re-raised signal), so 'exit' listeners run: the
  // logger writes the counts of repeated errors it held back.
  app.enableShutdownHooks([], { useProcessExit: true });
  return app;
}

export async function listen(app: NestExpressApplication, settings: AppSettings): Promise<void> {
  if (settings.bindAddress) await app.listen(settings.port, settings.bindAddress);
  else await app.listen(settings.port);
  new Logger('Bootstrap').log(`listening on ${displayUrl(app, settings)}`);
}

/** The address a person can open (see common/display-url.ts): the service and the demo print the same host. */
export function displayUrl(app: NestExpressApplication, settings: Pick<AppSettings, 'bindAddress'>): string {
  const { port } = app.getHttpServer().address() as { port: number };
  return openableUrl(port, settings.bindAddress);
}
