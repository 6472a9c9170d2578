import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_REGISTRY_ID } from '../users/registry-id';
import { IsRegistryName, NAME_MAX } from '../users/registry-validation';

const PERMISSIONS_MAX = 1000;

/** An optional list of PermissionSpecification ids, as POST and PUT of a role take it. */
const IsPermissionIds = () =>
  applyDecorators(
    IsOptional(),
    IsArray(),
    ArrayMaxSize(PERMISSIONS_MAX),
    IsInt({ each: true }),
    Min(1, { each: true }),
    Max(MAX_REGISTRY_ID, { each: true }),
  );

/** POST /api/RoleRegistry. */
export class CreateRoleDto {
  @ApiProperty({ maxLength: NAME_MAX, description: 'Unique within its tenant, case-insensitively.' })
  @IsRegistryName()
  name!: string;

  @ApiPropertyOptional({ description: 'Landlord callers only; defaults to the caller\'s own tenant.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_REGISTRY_ID)
  tenantRegistryId?: number;

  @ApiPropertyOptional({
    type: [Number],
    default: [],
    description: 'PermissionSpecification ids. A non-landlord caller can grant only permissions it holds itself (403).',
  })
  @IsPermissionIds()
  permissions?: number[];

  @ApiPropertyOptional({ default: true, description: 'Users of an inactive role hold no permission.' })
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

/**
 * PUT /api/RoleRegistry/{id}: the same body as POST. Omitted members are left unchanged; a role never
 * moves to another tenant (its users would move with it).
 */
export class UpdateRoleDto {
  @ApiPropertyOptional({ maxLength: NAME_MAX })
  @IsOptional()
  @IsRegistryName()
  name?: string;

  @ApiPropertyOptional({ description: 'Must be the role\'s own tenant when given.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_REGISTRY_ID)
  tenantRegistryId?: number;

  @ApiPropertyOptional({ type: [Number], description: 'Replaces the role\'s permissions when given.' })
  @IsPermissionIds()
  permissions?: number[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

export class RoleDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty() tenantRegistryId!: number;
  @ApiProperty() tenantName!: string;
  @ApiProperty() active!: boolean;
  @ApiProperty({ type: [Number], description: 'PermissionSpecification ids.' }) permissions!: number[];
}

export class PermissionSpecificationDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
}
