import { Body, Controller, Get, Post, Put, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { Permission } from '../access/permissions';
import { RegistryIdParam } from '../users/registry-id';
import type { Request } from 'express';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { CreateRoleDto, PermissionSpecificationDto, RoleDto, UpdateRoleDto } from './role-registry.dto';
import { RoleRegistryService } from './role-registry.service';

/** Roles of the caller's tenant (contract 6): permission 34. */
@ApiTags('Registry')
@Controller('api/RoleRegistry')
export class RoleRegistryController {
  constructor(private readonly roles: RoleRegistryService) {}

  @Get()
  @Authenticated({ permission: Permission.ReadWriteSecurityRole })
  @ApiOkResponse({ type: [RoleDto], description: 'The caller\'s tenant; every tenant for a landlord.' })
  list(@CurrentPrincipal() principal: Principal): Promise<RoleDto[]> {
    return this.roles.list(principal);
  }

  @Get('Assignable')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiOkResponse({
    type: [RoleDto],
    description:
      'The roles the caller may give a user (permission 35 suffices, so a user administrator without 34 can still pick a role): ' +
      'those of its tenant (every tenant for a landlord) holding no permission the caller lacks.',
  })
  assignable(@CurrentPrincipal() principal: Principal): Promise<RoleDto[]> {
    return this.roles.assignable(principal);
  }

  @Post()
  @Authenticated({ permission: Permission.ReadWriteSecurityRole })
  @RecordsAdminChange(ActionTypeId.RoleCreated, 'RoleRegistry')
  @ApiCreatedResponse({ type: RoleDto })
  @ApiBadRequestResponse({ description: 'Invalid name, or an unknown permission id.' })
  @ApiNotFoundResponse({ description: 'tenantRegistryId is not a tenant the caller administers.' })
  @ApiConflictResponse({ description: 'A role with this name exists in the tenant.' })
  create(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Body() body: CreateRoleDto): Promise<RoleDto> {
    return this.roles.create(adminActor(principal, req), body);
  }

  @Put(':id')
  @ApiParam({ name: 'id', type: Number, description: 'A positive integer; anything else answers 400.' })
  @Authenticated({ permission: Permission.ReadWriteSecurityRole })
  @RecordsAdminChange(ActionTypeId.RoleChanged, 'RoleRegistry', 'id')
  @ApiOkResponse({ type: RoleDto })
  @ApiNotFoundResponse({ description: 'No such role in the caller\'s tenant.' })
  @ApiConflictResponse({ description: 'A role with this name exists in the tenant.' })
  update(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
    @RegistryIdParam() id: number,
    @Body() body: UpdateRoleDto,
  ): Promise<RoleDto> {
    return this.roles.update(adminActor(principal, req), id, body);
  }
}

/** The permission catalogue, for any authenticated caller (the pages build their role editor from it). */
@ApiTags('Registry')
@Controller('api/PermissionSpecification')
export class PermissionSpecificationController {
  constructor(private readonly roles: RoleRegistryService) {}

  @Get()
  @Authenticated()
  @ApiOkResponse({ type: [PermissionSpecificationDto] })
  list(): Promise<PermissionSpecificationDto[]> {
    return this.roles.listPermissions();
  }
}
