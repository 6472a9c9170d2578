import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';

/** A passkey's name: 1 to 64 characters once control characters are removed; not necessarily unique. */
const NAME = { minLength: 1, maxLength: 64 } as const;

/** Register a passkey (contract 20): its name and the browser's `PublicKeyCredential.toJSON()`. */
export class RegisterPasskeyDto {
  @ApiProperty({ ...NAME, description: 'Control characters are removed.' })
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  name!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'RegistrationResponseJSON: `credential.toJSON()` of navigator.credentials.create().' })
  @IsObject()
  response!: Record<string, unknown>;
}

export class RenamePasskeyDto {
  @ApiProperty({ ...NAME, description: 'Control characters are removed.' })
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  name!: string;
}

/** An assertion answering a challenge: a passkey sign-in, or the second factor after a password. */
export class PasskeyAssertionDto {
  @ApiProperty({ format: 'uuid', description: 'From Passkey/Options, or from the 202 of a password sign-in.' })
  @IsUUID()
  challengeId!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'AuthenticationResponseJSON: `credential.toJSON()` of navigator.credentials.get().' })
  @IsObject()
  response!: Record<string, unknown>;
}

/**
 * A passkey sign-in (contract 20). `mfa`: the passcode (contract 7), asked for by a 202 when the passkey
 * did not verify its user (PasskeyUserVerification=preferred) and the passcode factor is on; the client
 * posts again with a fresh assertion (a challenge answers once) plus `mfa`.
 */
export class PasskeySignInDto extends PasskeyAssertionDto {
  @ApiPropertyOptional({ maxLength: 64, description: 'The passcode, when a 202 asked for it.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  mfa?: string;
}

/** A passkey as its owner and administrators see it. */
export class PasskeyDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'Written at most once a minute.' }) lastUsedDate!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The User-Agent of that use.' }) lastUsedDevice!: string | null;
  @ApiProperty({ description: 'Synced (may be copied to other devices); false: device-bound.' }) backupEligible!: boolean;
  @ApiProperty() backedUp!: boolean;
}

/** The answer to a registration. */
export class CreatedPasskeyDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: string;
  @ApiProperty() backupEligible!: boolean;
  @ApiProperty() backedUp!: boolean;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid', description: 'The authenticator model, when it says.' }) aaguid!: string | null;
}

/** Passkey/Options: the challenge's id (to post back) and the PublicKeyCredentialRequestOptions JSON. */
export class PasskeyChallengeDto {
  @ApiProperty({ format: 'uuid' }) challengeId!: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) options!: Record<string, unknown>;
}
