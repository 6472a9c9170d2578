import { Body, Controller, Delete, Get, HttpCode, Post, Put, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiParam,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { requestContext } from '../common/request-context';
import { Permission } from '../access/permissions';
import { RegistryIdParam } from '../users/registry-id';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { CreateUserDto, ResetPasswordDto, UpdateUserDto, UserDto } from './user-registry.dto';
import { UserRegistryService } from './user-registry.service';

const USER = Permission.ReadWriteSecurityUser;

/**
 * Users of the caller's tenant (contract 6): permission 35. API keys and RevokeTokens live in their
 * own controller under the same prefix.
 */
@ApiTags('Registry')
@Controller('api/UserRegistry')
export class UserRegistryController {
  constructor(private readonly users: UserRegistryService) {}

  @Get()
  @Authenticated({ permission: USER })
  @ApiOkResponse({ type: [UserDto], description: 'The caller\'s tenant; every tenant for a landlord.' })
  list(@CurrentPrincipal() principal: Principal): Promise<UserDto[]> {
    return this.users.list(principal);
  }

  @Post()
  @RecordsAdminChange(ActionTypeId.UserCreated, 'UserRegistry')
  @Authenticated({ permission: USER })
  @ApiCreatedResponse({ type: UserDto })
  @ApiBadRequestResponse({ description: 'Invalid member; `errors` lists every password rule broken.' })
  @ApiNotFoundResponse({ description: 'The role is not one of a tenant the caller administers.' })
  @ApiConflictResponse({ description: 'A user with this name exists.' })
  create(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Body() body: CreateUserDto): Promise<UserDto> {
    return this.users.create(adminActor(principal, req), body);
  }

  @Get(':id')
  @ApiParam({ name: 'id', type: Number, description: 'A positive integer; anything else answers 400.' })
  @Authenticated({ permission: USER })
  @ApiOkResponse({ type: UserDto })
  @ApiNotFoundResponse({ description: 'No such user in the caller\'s tenant.' })
  get(@CurrentPrincipal() principal: Principal, @RegistryIdParam() id: number): Promise<UserDto> {
    return this.users.get(principal, id);
  }

  @Put(':id')
  @RecordsAdminChange(ActionTypeId.UserChanged, 'UserRegistry', 'id')
  @ApiParam({ name: 'id', type: Number, description: 'A positive integer; anything else answers 400.' })
  @Authenticated({ permission: USER })
  @ApiOkResponse({ type: UserDto })
  @ApiNotFoundResponse({ description: 'No such user (or role) in the caller\'s tenant.' })
  @ApiConflictResponse({ description: 'Deactivating one\'s own account.' })
  @ApiServiceUnavailableResponse({ description: 'Deactivating: the sessions could not be ended; nothing changed.' })
  update(
    @CurrentPrincipal() principal: Principal,
    @RegistryIdParam() id: number,
    @Body() body: UpdateUserDto,
    @Req() req: Request,
  ): Promise<UserDto> {
    return this.users.update(adminActor(principal, req), id, body);
  }

  @Delete(':id')
  @RecordsAdminChange(ActionTypeId.UserDeleted, 'UserRegistry', 'id')
  @ApiParam({ name: 'id', type: Number, description: 'A positive integer; anything else answers 400.' })
  @HttpCode(204)
  @Authenticated({ permission: USER })
  @ApiNoContentResponse({ description: 'Deleted (soft); every session of the user ended (ReasonId 2).' })
  @ApiNotFoundResponse({ description: 'No such user in the caller\'s tenant.' })
  @ApiConflictResponse({ description: 'Deleting one\'s own account.' })
  async delete(@CurrentPrincipal() principal: Principal, @RegistryIdParam() id: number, @Req() req: Request): Promise<void> {
    await this.users.delete(adminActor(principal, req), id);
  }

  @Post(':id/Password')
  @RecordsAdminChange(ActionTypeId.PasswordSetByAdministrator, 'UserRegistry', 'id')
  @ApiParam({ name: 'id', type: Number, description: 'A positive integer; anything else answers 400.' })
  @HttpCode(204)
  @Authenticated({ permission: USER })
  @ApiNoContentResponse({ description: 'Password set; every session of the user ended (ReasonId 3).' })
  @ApiBadRequestResponse({ description: '`errors` lists every password rule broken, or the wire hash is malformed.' })
  @ApiNotFoundResponse({ description: 'No such user in the caller\'s tenant.' })
  async resetPassword(
    @CurrentPrincipal() principal: Principal,
    @RegistryIdParam() id: number,
    @Body() body: ResetPasswordDto,
    @Req() req: Request,
  ): Promise<void> {
    await this.users.resetPassword(adminActor(principal, req), id, body);
  }
}
