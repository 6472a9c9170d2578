import { applyDecorators } from '@nestjs/common';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PgErrorCode, pgErrorCode } from '../common/errors';
import { conflict } from '../common/problem';
import { CONTROL_CHARACTER_RANGE } from '../common/text';

/** Bound of every registry name and of Email (contract 6 and 12). */
export const NAME_MAX = 256;
export const EMAIL_MAX = 256;
/** Password fields may carry RSA-OAEP ciphertext in base64 (see PasswordTransport). */
export const PASSWORD_FIELD_MAX = 2048;

const NO_CONTROL_NOT_BLANK = new RegExp(`^(?=.*\\S)[^${CONTROL_CHARACTER_RANGE}]*$`, 'su');
const EMAIL = new RegExp(`^$|^[^\\s@${CONTROL_CHARACTER_RANGE}]+@[^\\s@${CONTROL_CHARACTER_RANGE}]+$`, 'u');

/**
 * A registry name: 1 to 256 characters, not blank, no control characters. A name with control
 * characters is refused rather than silently stripped, so what the administrator typed is what the
 * user signs in with.
 */
export function IsRegistryName(): PropertyDecorator {
  return applyDecorators(
    IsString(),
    MinLength(1),
    MaxLength(NAME_MAX),
    Matches(NO_CONTROL_NOT_BLANK, { message: '$property must not be blank nor contain control characters' }),
  );
}

/** An e-mail address: at most 256 characters (longer is refused, never truncated); empty clears it. */
export function IsRegistryEmail(): PropertyDecorator {
  return applyDecorators(
    IsString(),
    MaxLength(EMAIL_MAX),
    Matches(EMAIL, { message: '$property must be an e-mail address' }),
  );
}

/** True for PostgreSQL's unique_violation, so a duplicate name answers 409 even under a race. */
export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === PgErrorCode.UniqueViolation;
}

/** Runs `work`, turning a unique violation into a 409 problem with `detail`. */
export async function uniqueOr409<T>(work: () => Promise<T>, detail: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(detail);
    throw error;
  }
}
