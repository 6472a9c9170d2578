import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { CHANNELS } from '../bus/bus';
import { StreamRegistry } from './stream-registry.service';

const DESCRIPTION =
  'Server-Sent Events: a comment heartbeat every 15 s, each bus message as `data:` lines. Closed when ' +
  'the session ends (logout, revocation or this one session ended, on any node, at once; absolute lifetime, ' +
  'deactivation or anything missed at the next re-check).';

/** The live streams (contract 11). */
@ApiTags('Streams')
@Controller('api')
export class StreamController {
  constructor(private readonly streams: StreamRegistry) {}

  @Get('Watcher/Stream')
  @Authenticated()
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: `Activation events. ${DESCRIPTION}` })
  watcher(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Res() res: Response): void {
    this.streams.open(CHANNELS.watcher, principal, req, res);
  }

  @Get('ServiceChange/Stream')
  @Authenticated()
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: `A message whenever users, roles, tenants or API keys change. ${DESCRIPTION}` })
  serviceChange(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Res() res: Response): void {
    this.streams.open(CHANNELS.serviceChange, principal, req, res);
  }
}
