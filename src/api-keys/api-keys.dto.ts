import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

/** Generate API Key (contract 5). */
export class CreateApiKeyDto {
  @ApiProperty({ maxLength: 256, description: 'Required; control characters are removed.' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  name!: string;

  @ApiPropertyOptional({ maxLength: 1024, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string | null;
}

/** The answer to a creation: the only time the clear key is ever shown. */
export class CreatedApiKeyDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty({ description: 'The clear key, shown this once only; never stored, never recoverable.' }) apiKey!: string;
  @ApiProperty({ description: 'The first eight characters of the key, for audit and support.' }) apiKeyDisplay!: string;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: string;
}

/** An active key in a user's list; the clear value is never part of it. */
export class ApiKeyDto {
  @ApiProperty() id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty() apiKeyDisplay!: string;
  @ApiProperty({ type: String, format: 'date-time' }) createdDate!: string;
  @ApiProperty({ nullable: true, type: String }) createdUser!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'Written at most once a minute.' })
  lastUsedDate!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    maxLength: 512,
    description: 'User-Agent of the use lastUsedDate records, control characters removed; null before the first use or when none was sent.',
  })
  lastUsedUserAgent!: string | null;
  @ApiPropertyOptional({ description: 'Only with includeRevoked=true: whether the key is revoked.' })
  revoked?: boolean;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time', description: 'Only with includeRevoked=true: when it was revoked.' })
  revokedDate?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Only with includeRevoked=true: the user name of whoever revoked it.' })
  revokedBy?: string | null;
}
