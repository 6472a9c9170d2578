import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';

/** The caller's own session (contract 4). */
export class SessionDto {
  @ApiProperty() userName!: string;
  @ApiProperty() userRegistryId!: number;
  @ApiProperty() tenantRegistryId!: number;
  @ApiProperty() tenantName!: string;
  @ApiProperty() landlord!: boolean;
  @ApiProperty({ type: [Number], description: 'Permission specification ids, evaluated server side.' }) permissions!: number[];
  @ApiProperty({ enum: ['ApiKey', 'Bearer', 'Cookie'] }) authenticationType!: string;
  @ApiPropertyOptional({ nullable: true, description: 'Null for API keys.' }) sessionStartDate!: string | null;
  @ApiPropertyOptional({ nullable: true, description: 'Null for API keys.' }) expiration!: string | null;
  @ApiPropertyOptional({ nullable: true, description: 'Null for API keys.' }) absoluteExpiration!: string | null;
}

@ApiTags('Authentication')
@Controller('api/Authentication')
export class SessionController {
  @Get('Session')
  @Authenticated()
  @ApiOkResponse({ type: SessionDto })
  session(@CurrentPrincipal() principal: Principal): SessionDto {
    return {
      userName: principal.userName,
      userRegistryId: principal.userRegistryId,
      tenantRegistryId: principal.tenantRegistryId,
      tenantName: principal.tenantName,
      landlord: principal.landlord,
      permissions: principal.permissions,
      authenticationType: principal.authenticationType,
      sessionStartDate: principal.sessionStartDate?.toISOString() ?? null,
      expiration: principal.expiration?.toISOString() ?? null,
      absoluteExpiration: principal.absoluteExpiration?.toISOString() ?? null,
    };
  }
}
