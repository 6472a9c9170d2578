import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString } from 'class-validator';
import type { Request } from 'express';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { Permission } from '../access/permissions';
import { OutsideRow } from './audit-outside.repository';
import { AuditOutside } from './audit-outside.service';
import { SEALED_TABLES, SealedTableName, isSealedTable } from '../audit-log/canonical';

/**
 * The table a refused adoption is recorded against: the one its body names when that is a sealed
 * table; otherwise AdminChange, the log's own table (a refused caller's body is not validated, and
 * the row must still be written; docs/decisions/0031-admin-changes.md).
 */
function requestedTable(req: Request): SealedTableName {
  const table: unknown = (req.body as { table?: unknown } | undefined)?.table;
  return isSealedTable(table) ? table : 'AdminChange';
}

export class OutsideRowDto implements OutsideRow {
  @ApiProperty({ enum: SEALED_TABLES }) table!: OutsideRow['table'];
  @ApiProperty({ description: 'The row\'s Id, decimal text.' }) rowId!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Its date (CreatedDate; RunDate of a retention run), canonical text.' }) createdDate!: string | null;
  @ApiProperty({ description: 'Its canonical form (contract 15), what a leaf would commit to.' }) canonical!: string;
  @ApiProperty({ enum: ['not-in-log', 'waiting'] }) reason!: OutsideRow['reason'];
}

export class OutsideDto {
  @ApiProperty() total!: number;
  @ApiProperty({ type: [OutsideRowDto], description: 'The oldest first, at most 1000.' }) rows!: OutsideRowDto[];
}

export class AdoptDto {
  @ApiProperty({ enum: SEALED_TABLES }) @IsString() table!: string;
  @ApiProperty({ type: [String], description: '1 to 1000 row ids, each of a row of the table outside the log.' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  rowIds!: string[];
}

export class AdoptedDto {
  @ApiProperty() adopted!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'The size of the checkpoint that sealed them.' }) treeSize!: number | null;
}

/**
 * No row outside the log (contract 18): landlord administrators only, like the rest of the log's routes.
 */
@ApiTags('Audit')
@Controller('api/Audit/Outside')
export class AuditOutsideController {
  constructor(private readonly outside: AuditOutside) {}

  @Get()
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  @ApiOkResponse({ type: OutsideDto, description: 'Rows of the sealed tables neither in the log nor waiting, or waiting more than 60 s.' })
  find(): Promise<OutsideDto> {
    return this.outside.find();
  }

  @Post('Adopt')
  @HttpCode(200)
  @Authenticated({ permission: Permission.ReadWriteSecurityUser, landlord: true })
  // Contract 18: a refused adoption (403) is a Failed RowsAdopted row, TargetId null like every adoption's.
  @RecordsAdminChange(ActionTypeId.RowsAdopted, requestedTable, undefined, [403])
  @ApiOkResponse({ type: AdoptedDto, description: 'The rows are leaves now; an AdminChange RowsAdopted records who adopted them.' })
  @ApiBadRequestResponse({ description: 'An unknown table, or an id that names no row outside the log.' })
  @ApiConflictResponse({ description: 'An id under which a second row shares a sealed row\'s Id (another date), or a leaf outside the signed tree: outside the log, never adoptable.' })
  adopt(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Body() body: AdoptDto): Promise<AdoptedDto> {
    return this.outside.adopt(adminActor(principal, req), body?.table, body?.rowIds);
  }
}
