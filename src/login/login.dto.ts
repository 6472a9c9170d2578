import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { PasskeyAssertionDto } from '../passkeys/passkeys.dto';

/** Password fields may be RSA-OAEP ciphertext in base64 (4096-bit keys give 684 characters). */
const PASSWORD_FIELD_MAX = 2048;

export class PasswordSignInDto {
  @ApiProperty({ maxLength: 256 })
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  userName!: string;

  @ApiPropertyOptional({ description: 'Plaintext, wire hash, or RSA-OAEP ciphertext (see PasswordPublicKey).' })
  @IsOptional()
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  password?: string;

  @ApiPropertyOptional({ description: 'Required when the password has expired.' })
  @IsOptional()
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  newPassword?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  repeatNewPassword?: string;

  @ApiPropertyOptional({ description: 'One-time passcode, when the second factor is enabled.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  mfa?: string;

  @ApiPropertyOptional({ type: PasskeyAssertionDto, description: 'The passkey second factor, answering the challenge of the 202 (contract 20).' })
  @IsOptional()
  @ValidateNested()
  @Type(() => PasskeyAssertionDto)
  passkey?: PasskeyAssertionDto;
}

export class ChangePasswordDto {
  @ApiProperty()
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  password!: string;

  @ApiProperty()
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  newPassword!: string;

  @ApiProperty()
  @IsString()
  @MaxLength(PASSWORD_FIELD_MAX)
  repeatNewPassword!: string;
}

export class WirePasswordHashQueryDto {
  @ApiProperty({ maxLength: 256 })
  @IsString()
  @MaxLength(256)
  userName!: string;
}

export class TokenDto {
  @ApiProperty() token!: string;
  @ApiProperty({ description: 'ISO-8601 instant the token expires.' }) expiration!: string;
}

export class MfaRequiredDto {
  @ApiProperty({ example: true }) mfaRequired!: boolean;
  @ApiPropertyOptional({ example: ['passkey', 'passcode'], description: 'When a passkey is asked for: the ways to answer.' }) methods?: string[];
  @ApiPropertyOptional({ format: 'uuid', description: 'When a passkey is asked for: re-post with passkey { challengeId, response }.' }) challengeId?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'PublicKeyCredentialRequestOptions JSON (the user\'s passkeys allowed).' })
  options?: unknown;
}

export class WirePasswordHashDto {
  @ApiProperty() wirePasswordHash!: boolean;
}

export class PasswordPublicKeyDto {
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ example: 'RSA-OAEP-256' }) algorithm!: string;
  @ApiProperty({ nullable: true, type: String, description: 'SPKI PEM' }) publicKey!: string | null;
}
