import { Controller, Delete, Get, HttpCode, Param, Req, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiParam, ApiProperty, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { Permission } from '../access/permissions';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { RegistryIdParam } from '../users/registry-id';
import { SessionView, UserSessions } from './user-sessions.service';

/** One session not ended (contract 14). */
export class SessionRowDto implements SessionView {
  @ApiProperty({ format: 'uuid', description: 'The session id: the `sid` claim of its tokens.' }) id!: string;
  @ApiProperty({ type: String, format: 'date-time', description: 'The sign-in (the session start).' }) createdDate!: Date;
  @ApiProperty({ type: String, format: 'date-time', description: 'Last request, written at most once a minute.' }) lastSeenDate!: Date;
  @ApiProperty({ type: String, nullable: true, description: 'Address of the sign-in.' }) remoteIp!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'User agent of the sign-in.' }) userAgent!: string | null;
  @ApiProperty({ description: '1 Username and Password, 2 Negotiate, 3 OAuth / OpenID Connect.' }) authenticationTypeId!: number;
  @ApiProperty() authenticationType!: string;
  @ApiProperty({ description: 'The session of this request (always false in an administrator\'s list).' }) current!: boolean;
}

const SESSION_ID_PARAM = { format: 'uuid', description: 'A session id from the list; anything else is 404.' };

/** The caller's own sessions (contract 14): JWT callers only, an API key has no session (401). */
@ApiTags('Authentication')
@Controller('api/Authentication/Sessions')
export class OwnSessionsController {
  constructor(private readonly sessions: UserSessions) {}

  @Get()
  @Authenticated()
  @ApiOkResponse({ type: [SessionRowDto], description: 'The caller\'s sessions not ended, newest first.' })
  @ApiUnauthorizedResponse({ description: 'No valid session, or an API key.' })
  list(@CurrentPrincipal() caller: Principal): Promise<SessionView[]> {
    return this.sessions.listOwn(caller);
  }

  @Delete(':id')
  @RecordsAdminChange(ActionTypeId.SessionEnded, 'UserSession')
  @HttpCode(204)
  @Authenticated()
  @ApiParam({ name: 'id', ...SESSION_ID_PARAM })
  @ApiNoContentResponse({
    description: 'Ended (UserLogout ReasonId 4), its streams closed on every node; ending the current session also deletes both cookies.',
  })
  @ApiNotFoundResponse({ description: 'Another user\'s session, an unknown or ended one.' })
  async end(
    @Param('id') id: string,
    @CurrentPrincipal() caller: Principal,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.sessions.endOwn(caller, id, req, res);
  }
}

/** A user's sessions, for an administrator (contract 14): permission 35, within the tenant scope. */
@ApiTags('UserRegistry')
@Controller('api/UserRegistry')
export class UserSessionsController {
  constructor(private readonly sessions: UserSessions) {}

  @Get(':id/Sessions')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiParam({ name: 'id', type: Number })
  @ApiOkResponse({ type: [SessionRowDto], description: 'The user\'s sessions not ended, newest first (`current` always false).' })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant.' })
  list(@RegistryIdParam() id: number, @CurrentPrincipal() caller: Principal): Promise<SessionView[]> {
    return this.sessions.listOf(caller, id);
  }

  @Delete(':id/Sessions/:sessionId')
  @RecordsAdminChange(ActionTypeId.SessionEnded, 'UserSession')
  @HttpCode(204)
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiParam({ name: 'id', type: Number })
  @ApiParam({ name: 'sessionId', ...SESSION_ID_PARAM })
  @ApiNoContentResponse({ description: 'Ended (UserLogout ReasonId 4, CutByUser the caller), its streams closed on every node.' })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant, or no such open session of that user.' })
  async end(
    @RegistryIdParam() id: number,
    @Param('sessionId') sessionId: string,
    @CurrentPrincipal() caller: Principal,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.sessions.endOf(caller, id, sessionId, req, res);
  }
}
