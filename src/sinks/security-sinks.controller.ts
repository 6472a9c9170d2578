import { Body, Controller, Delete, Get, HttpCode, Post, Put, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { Permission } from '../access/permissions';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { RegistryIdParam } from '../users/registry-id';
import { SecuritySinks, SinkView } from './security-sinks.service';
import { TestReply } from './sink-sender';

export class SinkBodyDto {
  @ApiProperty({ maxLength: 64 }) name!: string;
  @ApiProperty({ enum: ['webhook', 'syslog'] }) type!: string;
  @ApiProperty({ maxLength: 512, description: 'https://… (http:// only to a loopback host) for a webhook; syslog://host:port or syslog+tls://host:port.' }) url!: string;
  @ApiProperty({ enum: ['ocsf', 'cef'], description: 'cef for syslog sinks only.' }) format!: string;
  @ApiPropertyOptional({ description: 'The webhook HMAC signing key (required for a webhook, at least 16 characters), or the syslog TLS client key (PEM). Never served back; left out on PUT it stays.' })
  secret?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Webhook only: extra headers. Served back as "****"; sending "****" back keeps that value.' })
  headers?: Record<string, string>;
  @ApiPropertyOptional({ default: true }) active?: boolean;
  @ApiPropertyOptional({ description: 'POST only: the first leaf to send (default: the latest checkpoint\'s tree size).' }) startLeafIndex?: number;
}

export class SinkDto implements SinkView {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['webhook', 'syslog'] }) type!: SinkView['type'];
  @ApiProperty() url!: string;
  @ApiProperty({ enum: ['ocsf', 'cef'] }) format!: SinkView['format'];
  @ApiProperty({ description: 'Whether a secret is set; the secret itself is never served.' }) secretSet!: boolean;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: 'Header names, values "****".' }) headers!: Record<string, string> | null;
  @ApiProperty() active!: boolean;
  @ApiProperty({ description: 'The first leaf not yet acknowledged.' }) nextLeafIndex!: number;
  @ApiProperty({ description: 'The latest checkpoint\'s tree size less nextLeafIndex, never below 0.' }) behindLeaves!: number;
  @ApiProperty({ description: 'Age of the oldest sealed leaf not yet acknowledged; 0 when none.' }) behindSeconds!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastDeliveredDate!: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastAttemptDate!: Date | null;
  @ApiProperty({ type: String, nullable: true }) lastError!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) failingSince!: Date | null;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: Date;
  @ApiProperty({ type: String, nullable: true }) createdUser!: string | null;
  @ApiProperty({ enum: ['paused', 'failing', 'behind', 'delivering'] }) state!: SinkView['state'];
}

export class ReplayDto {
  @ApiProperty({ description: 'The leaf to send again from: at most the sink\'s nextLeafIndex.' }) fromLeafIndex!: number;
}

export class TestReplyDto implements TestReply {
  @ApiProperty() delivered!: boolean;
  @ApiProperty({ type: Number, nullable: true, description: 'The webhook\'s HTTP status; null for syslog or without an answer.' }) status!: number | null;
  @ApiProperty({ description: 'What the receiver answered (its first 512 characters), or what happened.' }) detail!: string;
}

const RULE = { permission: Permission.ReadWriteSecurityUser, landlord: true };
/**
 * A sink write refused (403: no permission 35, or not the landlord tenant) is a failed AdminChange
 * (contract 18). Sinks have no tenant, so a 404 only says the sink does not exist: not a refusal.
 */
const Refused = (action: ActionTypeId, idParam?: string) => RecordsAdminChange(action, 'SecuritySink', idParam, [403]);

/**
 * SIEM sinks (contract 19): landlord administrators only (permission 35 and the landlord tenant). Every
 * answer carries the sink's delivery state; secrets are set, never served back.
 */
@ApiTags('SecuritySink')
@Controller('api/SecuritySink')
export class SecuritySinksController {
  constructor(private readonly sinks: SecuritySinks) {}

  @Get()
  @Authenticated(RULE)
  @ApiOkResponse({ type: [SinkDto] })
  list(): Promise<SinkView[]> {
    return this.sinks.list();
  }

  @Get(':id')
  @Authenticated(RULE)
  @ApiOkResponse({ type: SinkDto })
  @ApiNotFoundResponse({ description: 'No such sink.' })
  get(@RegistryIdParam() id: number): Promise<SinkView> {
    return this.sinks.get(id);
  }

  @Post()
  @Authenticated(RULE)
  @Refused(ActionTypeId.SinkCreated)
  @ApiBody({ type: SinkBodyDto })
  @ApiCreatedResponse({ type: SinkDto })
  @ApiBadRequestResponse({ description: 'Every bad field, named.' })
  @ApiConflictResponse({ description: 'A sink of that name exists.' })
  create(@Body() body: unknown, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<SinkView> {
    return this.sinks.create(body, adminActor(caller, req));
  }

  @Put(':id')
  @Authenticated(RULE)
  @Refused(ActionTypeId.SinkChanged, 'id')
  @ApiBody({ type: SinkBodyDto })
  @ApiOkResponse({ type: SinkDto })
  @ApiBadRequestResponse({ description: 'Every bad field, named.' })
  @ApiNotFoundResponse({ description: 'No such sink.' })
  @ApiConflictResponse({ description: 'Another sink has that name.' })
  update(@RegistryIdParam() id: number, @Body() body: unknown, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<SinkView> {
    return this.sinks.update(id, body, adminActor(caller, req));
  }

  @Delete(':id')
  @HttpCode(204)
  @Authenticated(RULE)
  @Refused(ActionTypeId.SinkDeleted, 'id')
  @ApiNoContentResponse({ description: 'Deleted; delivery to it stops.' })
  @ApiNotFoundResponse({ description: 'No such sink.' })
  async remove(@RegistryIdParam() id: number, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<void> {
    await this.sinks.remove(id, adminActor(caller, req));
  }

  @Post(':id/Replay')
  @HttpCode(200)
  @Authenticated(RULE)
  @Refused(ActionTypeId.SinkReplayed, 'id')
  @ApiBody({ type: ReplayDto })
  @ApiOkResponse({ type: SinkDto, description: 'The cursor set back: leaves from fromLeafIndex are sent again, in order.' })
  @ApiBadRequestResponse({ description: 'fromLeafIndex missing, not a whole number, or above the sink\'s nextLeafIndex.' })
  @ApiNotFoundResponse({ description: 'No such sink.' })
  replay(@RegistryIdParam() id: number, @Body() body: unknown, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<SinkView> {
    return this.sinks.replay(id, body, adminActor(caller, req));
  }

  @Post(':id/Test')
  @HttpCode(200)
  @Authenticated(RULE)
  @ApiOkResponse({ type: TestReplyDto, description: 'One test event sent outside the log, and what the receiver said.' })
  @ApiNotFoundResponse({ description: 'No such sink.' })
  test(@RegistryIdParam() id: number): Promise<TestReply> {
    return this.sinks.test(id);
  }
}
