import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/decorators';
import type { Principal } from '../auth/principal';
import { Permission } from '../users/permissions';
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
  @ApiCreatedResponse({ type: CreatedApiKeyDto, description: 'The clear key is in `apiKey`, this once only.' })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant.' })
  create(
    @Param('id', RegistryIdPipe) id: number,
    @Body() body: CreateApiKeyDto,
    @CurrentPrincipal() caller: Principal,
  ): Promise<CreatedApiKeyDto> {
    return this.apiKeys.create(caller, id, body);
  }

  @Get(':id/ApiKey')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiOkResponse({ type: [ApiKeyDto], description: 'Active keys; revoked keys are left out.' })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant.' })
  list(@Param('id', RegistryIdPipe) id: number, @CurrentPrincipal() caller: Principal): Promise<ApiKeyDto[]> {
    return this.apiKeys.list(caller, id);
  }

  @Delete(':id/ApiKey/:keyId')
  @HttpCode(204)
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiNoContentResponse({ description: 'Revoked on every node; revoking again answers the same.' })
  @ApiNotFoundResponse({ description: 'No such user within reach, or no such key of that user.' })
  async revoke(
    @Param('id', RegistryIdPipe) id: number,
    @Param('keyId', RegistryIdPipe) keyId: number,
    @CurrentPrincipal() caller: Principal,
  ): Promise<void> {
    await this.apiKeys.revoke(caller, id, keyId);
  }
}
