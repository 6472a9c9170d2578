import { Controller, Get, Query, UseInterceptors } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Authenticated } from '../access/decorators';
import { badRequest } from '../common/problem';
import { Permission } from '../access/permissions';
import { SEALED_TABLES } from './canonical';
import {
  AuditLogService,
  CheckpointView,
  CHECKPOINTS_PAGE,
  ConsistencyView,
  LeafView,
  LEAVES_PAGE,
  ProofView,
  PublicKeyView,
  StatusView,
} from './audit-log.service';
import type { RetentionRunRow } from './audit-retention-run.repository';
import { StatementTimeoutInterceptor } from './statement-timeout.interceptor';

const B64 = 'standard base64 with padding';

export class PublicKeyDto implements PublicKeyView {
  @ApiProperty({ description: 'The origin line of every checkpoint (AuditLogOrigin).' }) origin!: string;
  @ApiProperty({ description: 'Hex: first 4 bytes of SHA-256(origin || 0x0A || 0x01 || public key).' }) keyId!: string;
  @ApiProperty({ description: `The 32 raw Ed25519 public key bytes, ${B64}.` }) publicKey!: string;
  @ApiProperty({ description: 'The note verifier key: <origin>+<keyId hex>+<base64(0x01 || public key)>.' }) verifierKey!: string;
}

export class CheckpointDto implements CheckpointView {
  @ApiProperty({ description: 'Leaves covered by this checkpoint.' }) treeSize!: number;
  @ApiProperty({ description: `RFC 6962 root of the first treeSize leaves, ${B64}.` }) rootHash!: string;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: Date;
  @ApiProperty({ description: 'The signed note (C2SP tlog-checkpoint).' }) note!: string;
}

export class ProofDto implements ProofView {
  @ApiProperty() leafIndex!: number;
  @ApiProperty() treeSize!: number;
  @ApiProperty({ description: `SHA-256(0x00 || leaf record), ${B64}.` }) leafHash!: string;
  @ApiProperty({ description: 'The leaf record text: table, row id, date, base64 row hash, each line ending in a newline.' }) leafRecord!: string;
  @ApiProperty({ type: String, nullable: true, description: 'The row\'s canonical form now; null once retention removed the row.' }) canonical!: string | null;
  @ApiProperty({ type: [String], description: `RFC 6962 audit path, leaf side first, ${B64}.` }) auditPath!: string[];
}

export class ConsistencyDto implements ConsistencyView {
  @ApiProperty() first!: number;
  @ApiProperty() second!: number;
  @ApiProperty({ type: [String], description: `RFC 6962 consistency proof, ${B64}.` }) proof!: string[];
}

export class LeafDto implements LeafView {
  @ApiProperty() leafIndex!: number;
  @ApiProperty({ enum: SEALED_TABLES }) table!: LeafView['table'];
  @ApiProperty({ description: 'Decimal.' }) rowId!: string;
  @ApiProperty({ description: 'UTC with six fractional digits.' }) rowCreatedDate!: string;
  @ApiProperty({ description: B64 }) rowHash!: string;
  @ApiProperty({ description: B64 }) leafHash!: string;
  @ApiProperty({ type: String, nullable: true, description: 'The row\'s canonical form now; null where the row is gone.' }) canonical!: string | null;
}

export class RetentionRunDto implements RetentionRunRow {
  @ApiProperty({ description: 'Decimal.' }) id!: string;
  @ApiProperty({ description: 'UTC with six fractional digits.' }) runDate!: string;
  @ApiProperty() tableName!: string;
  @ApiProperty() partitionName!: string;
  @ApiProperty({ description: 'UTC with six fractional digits: rows dated before it were dropped.' }) cutoff!: string;
  @ApiProperty({ description: 'Decimal.' }) rowCount!: string;
}

export class StatusDto implements StatusView {
  @ApiPropertyOptional({ type: CheckpointDto, nullable: true }) latest!: CheckpointDto | null;
  @ApiProperty({ description: 'Rows written and not yet sealed.' }) pendingRows!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Seconds the oldest of them has waited; null when none waits.' }) oldestPendingSeconds!: number | null;
  @ApiProperty({ description: 'AuditSealInterval in milliseconds.' }) sealIntervalMilliseconds!: number;
  @ApiPropertyOptional({ type: RetentionRunDto, nullable: true, description: 'null while retention has never dropped a partition.' }) lastRetentionRun!: RetentionRunDto | null;
  @ApiProperty() verifierKey!: string;
}

const SAFE_MAX = Number.MAX_SAFE_INTEGER;
const BIGINT_MAX = 9_223_372_036_854_775_807n;

/** A whole number query parameter, or a 400 naming it. `fallback` when absent (undefined: optional). */
function whole(name: string, value: unknown, fallback?: number): number | undefined;
function whole(name: string, value: unknown, fallback: number | 'required'): number;
function whole(name: string, value: unknown, fallback?: number | 'required'): number | undefined {
  if (value === undefined) {
    if (fallback === 'required') throw badRequest(`${name}: required.`, [{ field: name, message: 'required' }]);
    return fallback;
  }
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value) || Number(value) > SAFE_MAX) {
    throw badRequest(`${name}: expected a whole number from 0 to ${SAFE_MAX}.`, [{ field: name, message: 'a whole number, 0 or more' }]);
  }
  return Number(value);
}

/** A row id: a decimal bigint, kept as text (an Id may pass 2^53). */
function rowIdParam(value: unknown): string {
  if (typeof value !== 'string' || !/^\d{1,19}$/.test(value) || BigInt(value) > BIGINT_MAX) {
    throw badRequest('id: expected a row id (a whole number).', [{ field: 'id', message: 'a whole number, 0 or more' }]);
  }
  return BigInt(value).toString();
}

const NUMBER = (name: string, description: string, required = false) => ApiQuery({ name, required, description, schema: { type: 'integer', minimum: 0 } });
const BAD = ApiBadRequestResponse({ description: 'A parameter that is not a whole number ≥ 0, or out of range; the problem names it.' });

/**
 * The tamper-evident audit log (contract 15): landlord administrators only (permission 35 and the
 * landlord tenant; 403 otherwise). What these serve lets anyone check the log without trusting the
 * database or the service (`npm run audit:verify`).
 */
@ApiTags('Audit')
@Controller('api/Audit')
@UseInterceptors(StatementTimeoutInterceptor)
@ApiServiceUnavailableResponse({ description: 'The database did not answer within its deadline (Retry-After).' })
export class AuditLogController {
  constructor(private readonly log: AuditLogService) {}

  @Get('PublicKey')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @ApiOkResponse({ type: PublicKeyDto, description: 'The key that signs the checkpoints.' })
  publicKey(): PublicKeyView {
    return this.log.publicKey();
  }

  @Get('Checkpoint')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @NUMBER('treeSize', 'That checkpoint instead of the latest.')
  @ApiOkResponse({ type: CheckpointDto })
  @ApiNotFoundResponse({ description: 'No checkpoint has that tree size.' })
  @BAD
  checkpoint(@Query('treeSize') treeSize?: unknown): Promise<CheckpointView> {
    return this.log.checkpoint(whole('treeSize', treeSize));
  }

  @Get('Checkpoints')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @NUMBER('from', 'The smallest tree size wanted (default 0).')
  @ApiOkResponse({ type: [CheckpointDto], description: `Checkpoints with TreeSize ≥ from, oldest first, at most ${CHECKPOINTS_PAGE}.` })
  @BAD
  checkpoints(@Query('from') from?: unknown): Promise<CheckpointView[]> {
    return this.log.checkpointsFrom(whole('from', from, 0) ?? 0);
  }

  @Get('Proof')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @ApiQuery({ name: 'table', required: true, enum: SEALED_TABLES })
  @ApiQuery({ name: 'id', required: true, description: 'The row\'s Id.', schema: { type: 'string', pattern: '^\\d+$' } })
  @NUMBER('treeSize', 'Against that checkpoint instead of the latest.')
  @ApiOkResponse({ type: ProofDto, description: 'RFC 6962 inclusion proof of the row\'s leaf.' })
  @ApiNotFoundResponse({ description: 'The row is not sealed in that checkpoint (yet), or no checkpoint has that size.' })
  @ApiBadRequestResponse({ description: 'A table that is not one of the three, or a bad id or treeSize; the problem names it.' })
  proof(@Query('table') table?: unknown, @Query('id') id?: unknown, @Query('treeSize') treeSize?: unknown): Promise<ProofView> {
    if (typeof table !== 'string') throw badRequest(`table: expected one of ${SEALED_TABLES.join(', ')}.`, [{ field: 'table', message: 'required' }]);
    return this.log.proof(table, rowIdParam(id), whole('treeSize', treeSize));
  }

  @Get('Consistency')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @NUMBER('first', 'The earlier checkpoint size.', true)
  @NUMBER('second', 'The later checkpoint size (≥ first).', true)
  @ApiOkResponse({ type: ConsistencyDto, description: 'RFC 6962 consistency proof.' })
  @ApiNotFoundResponse({ description: 'No checkpoint has one of these sizes.' })
  @BAD
  consistency(@Query('first') first?: unknown, @Query('second') second?: unknown): Promise<ConsistencyView> {
    return this.log.consistency(whole('first', first, 'required'), whole('second', second, 'required'));
  }

  @Get('Leaves')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @NUMBER('start', 'The first leaf index.', true)
  @NUMBER('end', `One past the last leaf index (at most start + ${LEAVES_PAGE}).`, true)
  @ApiOkResponse({ type: [LeafDto], description: 'Leaves start ≤ index < end (those that exist), in order.' })
  @BAD
  leaves(@Query('start') start?: unknown, @Query('end') end?: unknown): Promise<LeafView[]> {
    return this.log.leavesBetween(whole('start', start, 'required'), whole('end', end, 'required'));
  }

  @Get('RetentionRuns')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @ApiOkResponse({ type: [RetentionRunDto], description: 'Every partition retention dropped (contract 16), oldest first.' })
  retentionRuns(): Promise<RetentionRunRow[]> {
    return this.log.retentionRuns();
  }

  @Get('Status')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @ApiOkResponse({ type: StatusDto, description: 'For the Audit integrity page: the latest checkpoint, what waits to be sealed, the last retention run.' })
  status(): Promise<StatusView> {
    return this.log.status();
  }
}
