import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { Permission } from '../access/permissions';
import { GridReads } from '../reads/grid-read.service';
import { ColumnStatisticsDto, GridReadDocs } from '../reads/read-docs';
import { USER_LOGIN_TABLE, USER_LOGOUT_TABLE } from './audit.tables';

/** The sign-in and sign-out trails (service.md 4.2): tenant-scoped for tenant administrators. */
@ApiTags('Audit')
@ApiExtraModels(ColumnStatisticsDto)
@Controller('api')
export class AuditReadsController {
  constructor(private readonly reads: GridReads) {}

  @Get('UserLogin')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @GridReadDocs(USER_LOGIN_TABLE, 'Sign-in attempts; a landlord also sees failures against unknown user names.')
  userLogin(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() principal: Principal): Promise<void> {
    return this.reads.answer(USER_LOGIN_TABLE, req, res, principal);
  }

  @Get('UserLogout')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @GridReadDocs(USER_LOGOUT_TABLE, 'Session cuts.')
  userLogout(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() principal: Principal): Promise<void> {
    return this.reads.answer(USER_LOGOUT_TABLE, req, res, principal);
  }
}
