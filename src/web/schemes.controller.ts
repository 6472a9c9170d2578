import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../access/decorators';
import { AppSettings, SETTINGS } from '../config/config.module';
import { enabledSchemes } from '../login/enabled-schemes';

/** Which sign-in steps the sign-in page must offer (service.md 5.2, 5.3). */
export class SchemesDto {
  @ApiProperty({ description: 'Username and password sign-in is available (neither OAuth nor Negotiate is on).' })
  password!: boolean;
  @ApiProperty({ description: 'OAuth / OpenID Connect is on: the sign-in page goes to the identity provider.' })
  oauth!: boolean;
  @ApiProperty({ description: 'Negotiate is on: the sign-in page tries GET ByNegotiate first.' })
  negotiate!: boolean;
  @ApiProperty({ description: 'A one-time passcode follows password or Negotiate sign-in.' })
  mfa!: boolean;
}

/** Public, because the sign-in page needs it before anyone is signed in; it reveals only settings. */
@ApiTags('Authentication')
@Controller('api/Authentication')
export class SchemesController {
  constructor(@Inject(SETTINGS) private readonly settings: AppSettings) {}

  @Get('Schemes')
  @Public()
  @ApiOkResponse({ type: SchemesDto })
  schemes(): SchemesDto {
    return enabledSchemes(this.settings);
  }
}
