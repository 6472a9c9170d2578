import { Body, Controller, Get, Post, Put, Req } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import { RegistryIdParam } from '../users/registry-id';
import type { Request } from 'express';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import type { Principal } from '../access/principal';
import { CreateTenantDto, TenantDto, UpdateTenantDto } from './tenant-registry.dto';
import { TenantRegistryService } from './tenant-registry.service';

/** Tenants (contract 6): landlord users only. */
@ApiTags('Registry')
@Controller('api/TenantRegistry')
export class TenantRegistryController {
  constructor(private readonly tenants: TenantRegistryService) {}

  @Get()
  @Authenticated({ landlord: true })
  @ApiOkResponse({ type: [TenantDto] })
  list(): Promise<TenantDto[]> {
    return this.tenants.list();
  }

  @Post()
  @Authenticated({ landlord: true })
  @RecordsAdminChange(ActionTypeId.TenantCreated, 'TenantRegistry')
  @ApiCreatedResponse({ type: TenantDto })
  @ApiBadRequestResponse({ description: 'Name missing, too long or with control characters.' })
  @ApiConflictResponse({ description: 'A tenant with this name exists.' })
  create(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Body() body: CreateTenantDto): Promise<TenantDto> {
    return this.tenants.create(adminActor(principal, req), body);
  }

  @Put(':id')
  @ApiParam({ name: 'id', type: Number, description: 'A positive integer; anything else answers 400.' })
  @Authenticated({ landlord: true })
  @RecordsAdminChange(ActionTypeId.TenantChanged, 'TenantRegistry', 'id')
  @ApiOkResponse({ type: TenantDto })
  @ApiNotFoundResponse({ description: 'No such tenant.' })
  @ApiConflictResponse({ description: 'Duplicate name, or deactivating the landlord tenant.' })
  update(@CurrentPrincipal() principal: Principal, @Req() req: Request, @RegistryIdParam() id: number, @Body() body: UpdateTenantDto): Promise<TenantDto> {
    return this.tenants.update(adminActor(principal, req), id, body);
  }
}
