import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { GridReads } from '../reads/grid-read.service';
import { GridReadDocs } from '../reads/read-docs';
import { Permission } from '../access/permissions';
import { ADMIN_CHANGE_TABLE } from './admin-change.table';

/** Administrative changes (contract 18): permission 35; a tenant administrator sees its tenant's (as actor's or as target's). */
@ApiTags('Audit')
@Controller('api')
export class AdminChangesController {
  constructor(private readonly reads: GridReads) {}

  @Get('AdminChange')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @GridReadDocs(ADMIN_CHANGE_TABLE, 'Administrative changes: who changed what, from where, with which credential; refused writes as failed rows.')
  adminChange(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() principal: Principal): Promise<void> {
    return this.reads.answer(ADMIN_CHANGE_TABLE, req, res, principal);
  }
}
