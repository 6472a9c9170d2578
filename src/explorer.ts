import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { Authenticator } from './auth/authenticator.service';
import { sendProblem, toProblem } from './common/problem';

/**
 * The API explorer and its OpenAPI document, served to authenticated callers only (contract 11): a
 * browser without a session is sent to the login page and back, anyone else gets 401.
 */
export function setupExplorer(app: NestExpressApplication): void {
  const authenticator = app.get(Authenticator);
  const gate = async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (await authenticator.tryAuthenticate(req, res)) return next();
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
    .addCookieAuth('authentication-jwt')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('swagger', app, document, {
    jsonDocumentUrl: 'swagger/v1/swagger.json',
    yamlDocumentUrl: 'swagger/v1/swagger.yaml',
    customSiteTitle: 'Transaction monitoring API',
  });
}
