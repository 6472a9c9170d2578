import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../access/decorators';
import { Health } from './health.service';

/**
 * Liveness and readiness for load balancers and Kubernetes. Public (a probe carries no credential),
 * cheap, and they say nothing about users or data: only whether this node can serve.
 */
@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: Health) {}

  @Get('live')
  @Public()
  @ApiOperation({ summary: 'Liveness: the process answers HTTP. Restart the node only when this fails.' })
  @ApiOkResponse({ description: '`{ "status": "live" }`' })
  live(@Res() res: Response): void {
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({ status: 'live' });
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    summary: 'Readiness: PostgreSQL answers within its deadline and Redis, when configured, is connected. Send traffic only while this is 200.',
  })
  @ApiOkResponse({ description: '`{ "status": "ready" }`' })
  @ApiServiceUnavailableResponse({
    description: 'Problem details naming the failing parts in `failing` (`database`, `redis`).',
  })
  async ready(@Res() res: Response): Promise<void> {
    const readiness = await this.health.readiness();
    res.setHeader('Cache-Control', 'no-store');
    if (readiness.ready) {
      res.status(200).json({ status: 'ready' });
      return;
    }
    res
      .status(503)
      .type('application/problem+json')
      .send(
        JSON.stringify({
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: `Not ready: ${readiness.failing.join(', ')}.`,
          failing: readiness.failing,
        }),
      );
  }
}
