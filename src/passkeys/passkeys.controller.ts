import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { adminActor } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { JsonBodyOnly } from '../common/body-rules';
import { notFound } from '../common/problem';
import { clientAddress } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Permission } from '../access/permissions';
import { RegistryIdPipe } from '../users/registry-id.pipe';
import { CreatedPasskeyDto, PasskeyDto, RegisterPasskeyDto, RenamePasskeyDto } from './passkeys.dto';
import { Passkeys } from './passkeys.service';

/** With Passkeys=False every passkey route answers 404, as a disabled scheme does (contract 20). */
abstract class PasskeyRoutes {
  protected constructor(private readonly enabled: boolean) {}

  protected on(): void {
    if (!this.enabled) throw notFound();
  }
}

/** The signed-in user's own passkeys (contract 20). */
@ApiTags('Authentication')
@Controller('api/Authentication/Passkeys')
export class PasskeysController extends PasskeyRoutes {
  constructor(
    private readonly passkeys: Passkeys,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    super(settings.passkeys);
  }

  @Post('Options')
  @HttpCode(200)
  @Authenticated()
  @ApiOkResponse({ description: 'PublicKeyCredentialCreationOptions JSON (resident key required; the caller\'s passkeys excluded).' })
  @ApiForbiddenResponse({ description: '`code: "ReauthenticationRequired"`: no sign-in within the last 5 minutes (an API key never counts).' })
  options(@CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<unknown> {
    this.on();
    return this.passkeys.registrationOptions(caller, clientAddress(req));
  }

  @Post()
  @Authenticated()
  @JsonBodyOnly()
  @ApiCreatedResponse({ type: CreatedPasskeyDto })
  @ApiBadRequestResponse({ description: 'Attestation, challenge or policy refused the passkey.' })
  @ApiForbiddenResponse({ description: '`code: "ReauthenticationRequired"`.' })
  register(@Body() body: RegisterPasskeyDto, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<CreatedPasskeyDto> {
    this.on();
    return this.passkeys.register(adminActor(caller, req), body.name, body.response);
  }

  @Get()
  @Authenticated()
  @ApiOkResponse({ type: [PasskeyDto] })
  list(@CurrentPrincipal() caller: Principal): Promise<PasskeyDto[]> {
    this.on();
    return this.passkeys.listOwn(caller);
  }

  @Put(':id')
  @Authenticated()
  @JsonBodyOnly()
  @ApiOkResponse({ type: PasskeyDto })
  @ApiNotFoundResponse({ description: 'No such passkey of the caller.' })
  rename(@Param('id', RegistryIdPipe) id: number, @Body() body: RenamePasskeyDto, @CurrentPrincipal() caller: Principal): Promise<PasskeyDto> {
    this.on();
    return this.passkeys.rename(caller, id, body.name);
  }

  @Delete(':id')
  @HttpCode(204)
  @Authenticated()
  @ApiNoContentResponse({ description: 'Removed; it signs nobody in any more.' })
  @ApiNotFoundResponse({ description: 'No such passkey of the caller.' })
  async remove(@Param('id', RegistryIdPipe) id: number, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<void> {
    this.on();
    await this.passkeys.removeOwn(adminActor(caller, req), id);
  }
}

/** A user's passkeys for administrators (permission 35, tenant scope of contract 6). */
@ApiTags('UserRegistry')
@Controller('api/UserRegistry')
export class UserPasskeysController extends PasskeyRoutes {
  constructor(
    private readonly passkeys: Passkeys,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    super(settings.passkeys);
  }

  @Get(':id/Passkeys')
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiOkResponse({ type: [PasskeyDto] })
  @ApiNotFoundResponse({ description: 'No such user within the caller\'s tenant.' })
  list(@Param('id', RegistryIdPipe) id: number, @CurrentPrincipal() caller: Principal): Promise<PasskeyDto[]> {
    this.on();
    return this.passkeys.listOf(caller, id);
  }

  @Delete(':id/Passkeys/:passkeyId')
  @RecordsAdminChange(ActionTypeId.PasskeyRemoved, 'UserPasskey', 'passkeyId')
  @HttpCode(204)
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiNotFoundResponse({ description: 'No such user within reach, or no such passkey of that user.' })
  async remove(
    @Param('id', RegistryIdPipe) id: number,
    @Param('passkeyId', RegistryIdPipe) passkeyId: number,
    @CurrentPrincipal() caller: Principal,
    @Req() req: Request,
  ): Promise<void> {
    this.on();
    await this.passkeys.removeOf(adminActor(caller, req), id, passkeyId);
  }
}
