import { Body, Controller, Get, Headers, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Public } from '../access/decorators';
import { unauthorized } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { DEFAULT_MFA_CLIENT_KEY, MOCK_MFA_PASSCODE } from '../config/settings';
import { MfaAttemptDto, MfaAttemptQueryDto, MfaAttemptResponseDto } from './mfa.dto';

/** Constant-time equality of two texts of any length (hashes first, so lengths do not leak). */
function sameText(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The bundled one-time-passcode mock (service.md 4.1, contract 7): the default passcode endpoint, so a
 * fresh install with MFA switched on works end to end. It accepts one fixed passcode, and only while
 * both the caller's `client-key` and this service's MultifactorAuthenticationClientKey are still the
 * shipped default: changing the key (as production must) turns the mock off.
 */
@ApiTags('Multi-factor authentication mock')
@Controller('api/mfa')
export class MfaMockController {
  constructor(@Inject(SETTINGS) private readonly settings: AppSettings) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Checks a passcode given in the query string.' })
  @ApiHeader({ name: 'client-key', required: true })
  @ApiOkResponse({ type: MfaAttemptResponseDto })
  @ApiUnauthorizedResponse({ description: 'Missing or wrong client-key, or the client key is no longer the shipped default.' })
  attemptByQuery(@Query() query: MfaAttemptQueryDto, @Headers('client-key') clientKey?: string): MfaAttemptResponseDto {
    return this.answer(clientKey, query.passcode);
  }

  @Post()
  @HttpCode(200)
  @Public()
  @ApiOperation({ summary: 'Checks a passcode given as the provider protocol body.' })
  @ApiHeader({ name: 'client-key', required: true })
  @ApiOkResponse({ type: MfaAttemptResponseDto })
  @ApiUnauthorizedResponse({ description: 'Missing or wrong client-key, or the client key is no longer the shipped default.' })
  attempt(@Body() body: MfaAttemptDto, @Headers('client-key') clientKey?: string): MfaAttemptResponseDto {
    const passcode = body.subjectCredentials
      .filter((credential) => credential.methodId === 'SECURID')
      .flatMap((credential) => credential.collectedInputs)
      .find((input) => input.name === 'SECURID')?.value;
    return this.answer(clientKey, passcode);
  }

  private answer(clientKey: string | undefined, passcode: string | undefined): MfaAttemptResponseDto {
    const keyAccepted =
      typeof clientKey === 'string' &&
      sameText(clientKey, DEFAULT_MFA_CLIENT_KEY) &&
      sameText(this.settings.multifactorAuthenticationClientKey, DEFAULT_MFA_CLIENT_KEY);
    if (!keyAccepted) throw unauthorized('The client key is not accepted.');
    const ok = typeof passcode === 'string' && sameText(passcode, MOCK_MFA_PASSCODE);
    return { attemptResponseCode: ok ? 'SUCCESS' : 'FAIL' };
  }
}
