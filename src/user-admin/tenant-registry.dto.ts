import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { IsRegistryName, NAME_MAX } from '../users/registry-validation';

/** POST /api/TenantRegistry. A created tenant is never a landlord. */
export class CreateTenantDto {
  @ApiProperty({ maxLength: NAME_MAX, description: 'Unique, case-insensitively; no control characters.' })
  @IsRegistryName()
  name!: string;

  @ApiPropertyOptional({ default: true, description: 'Users of an inactive tenant cannot sign in or use a session.' })
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

/** PUT /api/TenantRegistry/{id}: the same members; an omitted one is left unchanged. */
export class UpdateTenantDto {
  @ApiPropertyOptional({ maxLength: NAME_MAX })
  @IsOptional()
  @IsRegistryName()
  name?: string;

  @ApiPropertyOptional({ description: 'The landlord tenant cannot be deactivated.' })
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

export class TenantDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'Users of the landlord tenant hold every permission and see every tenant.' }) landlord!: boolean;
  @ApiProperty() active!: boolean;
}
