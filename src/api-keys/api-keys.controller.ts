import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { badRequest } from '../common/problem';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { Permission } from '../access/permissions';
import { RegistryIdPipe } from '../users/registry-id.pipe';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto } from './api-keys.dto';
import { ApiKeys } from './api-keys.service';

/** API keys of a user of the registry (contract 5). Permission 35; the user must be within reach. */
@ApiTags('UserRegistry')
@Controller('api/UserRegistry')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeys) {}

  @Post(':id/ApiKey')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @RecordsAdminChange(ActionTypeId.ApiKeyCreated, 'UserRegistryApiKey')
  @ApiCreatedResponse({ type: CreatedApiKeyDto, description: 'The clear key is in `apiKey`, this once only.' })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant.' })
  create(
    @Param('id', RegistryIdPipe) id: number,
    @Body() body: CreateApiKeyDto,
    @CurrentPrincipal() caller: Principal,
    @Req() req: Request,
  ): Promise<CreatedApiKeyDto> {
    return this.apiKeys.create(adminActor(caller, req), id, body);
  }

  @Get(':id/ApiKey')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiQuery({
    name: 'includeRevoked',
    required: false,
    schema: { type: 'boolean', default: false },
    description: 'true: revoked keys follow the active ones, with revoked, revokedDate and revokedBy (the history).',
  })
  @ApiOkResponse({ type: [ApiKeyDto], description: 'Active keys; revoked keys are left out unless includeRevoked=true.' })
  @ApiBadRequestResponse({ description: 'includeRevoked is neither true nor false.' })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant.' })
  list(
    @Param('id', RegistryIdPipe) id: number,
    @CurrentPrincipal() caller: Principal,
    @Query('includeRevoked') includeRevoked?: unknown,
  ): Promise<ApiKeyDto[]> {
    return this.apiKeys.list(caller, id, { includeRevoked: booleanQuery('includeRevoked', includeRevoked) });
  }

  @Delete(':id/ApiKey/:keyId')
  @HttpCode(204)
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @RecordsAdminChange(ActionTypeId.ApiKeyRevoked, 'UserRegistryApiKey', 'keyId')
  @ApiNoContentResponse({ description: 'Revoked on every node; revoking again answers the same.' })
  @ApiNotFoundResponse({ description: 'No such user within reach, or no such key of that user.' })
  async revoke(
    @Param('id', RegistryIdPipe) id: number,
    @Param('keyId', RegistryIdPipe) keyId: number,
    @CurrentPrincipal() caller: Principal,
    @Req() req: Request,
  ): Promise<void> {
    await this.apiKeys.revoke(adminActor(caller, req), id, keyId);
  }
}

/** An optional true/false query parameter (any case); anything else, or given twice, is a 400 naming it. */
function booleanQuery(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : null;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw badRequest('The query is not valid.', [{ field: name, message: `${name} must be true or false.` }]);
}
