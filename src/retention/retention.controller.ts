import { Controller, Get, UseInterceptors } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../access/decorators';
import { Permission } from '../access/permissions';
import { StatementTimeoutInterceptor } from '../audit-log/statement-timeout.interceptor';
import { HeldPartition, PartitionMaintenance } from './partition-maintenance.service';

export class HoldingSinkDto {
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'The first leaf the sink has not acknowledged.' }) nextLeafIndex!: number;
}

export class HeldPartitionDto implements HeldPartition {
  @ApiProperty({ description: 'The partition past retention that is kept.' }) partition!: string;
  @ApiProperty({ description: 'The highest leaf of its rows: every active sink must acknowledge it before the drop.' }) lastLeafIndex!: number;
  @ApiProperty({ type: [HoldingSinkDto], description: 'The active sinks not yet past that leaf.' }) sinks!: HoldingSinkDto[];
}

/**
 * What retention keeps for sinks (contract 19 over contract 16), for the Audit integrity page. Here,
 * under /api/Audit beside the log's own routes, because the log (audit-log) cannot read retention
 * without a module cycle: retention reads the sinks, which read the log.
 */
@ApiTags('Audit')
@Controller('api/Audit')
@UseInterceptors(StatementTimeoutInterceptor)
@ApiServiceUnavailableResponse({ description: 'The database did not answer within its deadline (Retry-After).' })
export class RetentionController {
  constructor(private readonly maintenance: PartitionMaintenance) {}

  @Get('RetentionHeld')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @ApiOperation({ summary: 'Audit partitions past retention kept because an active security sink has not acknowledged their leaves (contract 19).' })
  @ApiOkResponse({ type: [HeldPartitionDto], description: 'Empty when retention holds nothing back.' })
  retentionHeld(): Promise<HeldPartition[]> {
    return this.maintenance.heldForSinksNow();
  }
}
