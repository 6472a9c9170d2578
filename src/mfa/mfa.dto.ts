import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';

/** One collected input of a credential; for SECURID the passcode itself. */
export class MfaCollectedInputDto {
  @ApiProperty({ example: 'SECURID', maxLength: 64 })
  @IsString()
  @MaxLength(64)
  name!: string;

  @ApiProperty({ description: 'The one-time passcode.', maxLength: 256 })
  @IsString()
  @MaxLength(256)
  value!: string;
}

export class MfaSubjectCredentialDto {
  @ApiProperty({ example: 'SECURID', maxLength: 64 })
  @IsString()
  @MaxLength(64)
  methodId!: string;

  @ApiProperty({ type: [MfaCollectedInputDto] })
  @IsArray()
  @ArrayMaxSize(8)
  @ValidateNested({ each: true })
  @Type(() => MfaCollectedInputDto)
  collectedInputs!: MfaCollectedInputDto[];
}

/** The attempt the shipped provider posts to the passcode endpoint (contract 7). */
export class MfaAttemptDto {
  @ApiPropertyOptional({ description: 'MultifactorAuthenticationApplicationId of the caller.', maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  clientId?: string;

  @ApiProperty({ description: 'The user name.', maxLength: 256 })
  @IsString()
  @MaxLength(256)
  subjectName!: string;

  @ApiProperty({ type: [MfaSubjectCredentialDto] })
  @IsArray()
  @ArrayMaxSize(8)
  @ValidateNested({ each: true })
  @Type(() => MfaSubjectCredentialDto)
  subjectCredentials!: MfaSubjectCredentialDto[];
}

/** The GET form of the mock: the same attempt in the query string. */
export class MfaAttemptQueryDto {
  @ApiPropertyOptional({ maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  subjectName?: string;

  @ApiPropertyOptional({ description: 'The one-time passcode.', maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  passcode?: string;
}

export class MfaAttemptResponseDto {
  @ApiProperty({ enum: ['SUCCESS', 'FAIL'] })
  attemptResponseCode!: 'SUCCESS' | 'FAIL';
}
