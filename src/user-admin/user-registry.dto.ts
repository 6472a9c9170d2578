import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { MAX_REGISTRY_ID } from '../users/registry-id';
import { EMAIL_MAX, IsRegistryEmail, IsRegistryName, NAME_MAX, PASSWORD_FIELD_MAX } from '../users/registry-validation';

const PASSWORD_DESCRIPTION =
  'Plaintext (the password rules apply), or with wirePasswordHash the lowercase hex SHA-256 of (password + userName). ' +
  'With PasswordAsymmetricEncryption, RSA-OAEP ciphertext of that value in base64.';

/** POST /api/UserRegistry. */
export class CreateUserDto {
  @ApiProperty({ maxLength: NAME_MAX, description: 'Unique among users that are not deleted, case-insensitively.' })
  @IsRegistryName()
  name!: string;

  @ApiPropertyOptional({ maxLength: EMAIL_MAX, nullable: true })
  @IsOptional()
  @IsRegistryEmail()
  email?: string | null;

  @ApiProperty({ description: 'A role of a tenant the caller administers; the user\'s tenant is the role\'s.' })
  @IsInt()
  @Min(1)
  @Max(MAX_REGISTRY_ID)
  roleRegistryId!: number;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  active?: boolean;

  @ApiProperty({ description: PASSWORD_DESCRIPTION })
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  password!: string;

  @ApiPropertyOptional({ default: false, description: 'The browser sends the SHA-256 wire hash instead of the password.' })
  @IsOptional()
  @IsBoolean()
  wirePasswordHash?: boolean;

  @ApiPropertyOptional({ default: false, description: 'The password is created expired: the first sign-in must change it.' })
  @IsOptional()
  @IsBoolean()
  mustChangePassword?: boolean;
}

/** PUT /api/UserRegistry/{id}: omitted members are left unchanged. */
export class UpdateUserDto {
  @ApiPropertyOptional({ maxLength: EMAIL_MAX, nullable: true, description: 'Empty or null clears it.' })
  @IsOptional()
  @IsRegistryEmail()
  email?: string | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_REGISTRY_ID)
  roleRegistryId?: number;

  @ApiPropertyOptional({ description: 'false ends every session of the user (UserLogout ReasonId 2).' })
  @IsOptional()
  @IsBoolean()
  active?: boolean;

  @ApiPropertyOptional({ description: 'false unlocks and resets the failed password count; true locks.' })
  @IsOptional()
  @IsBoolean()
  passwordLocked?: boolean;
}

/** POST /api/UserRegistry/{id}/Password: an administrator's reset. */
export class ResetPasswordDto {
  @ApiProperty({ description: PASSWORD_DESCRIPTION })
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  password!: string;

  @ApiPropertyOptional({ default: false, description: 'Sets the user\'s WirePasswordHash flag as given.' })
  @IsOptional()
  @IsBoolean()
  wirePasswordHash?: boolean;

  @ApiPropertyOptional({ default: true, description: 'The password is set expired: the next sign-in must change it.' })
  @IsOptional()
  @IsBoolean()
  mustChangePassword?: boolean;
}

/** A user as the registry shows it; the password hash never leaves the service. */
export class UserDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String }) email!: string | null;
  @ApiProperty() roleRegistryId!: number;
  @ApiProperty() roleName!: string;
  @ApiProperty() tenantRegistryId!: number;
  @ApiProperty() tenantName!: string;
  @ApiProperty() active!: boolean;
  @ApiProperty() passwordLocked!: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) passwordLockedDate!: Date | null;
  @ApiProperty() failedPasswordCount!: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) passwordExpiryDate!: Date | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) passwordCreatedDate!: Date | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) lastLoginDate!: Date | null;
  @ApiProperty() wirePasswordHash!: boolean;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: Date;
  @ApiProperty({ nullable: true, type: String }) createdUser!: string | null;
}
