import { FieldProblem } from '../common/problem';

/**
 * Rules for a new password set in plaintext (contract 3): 12 to 128 characters, one upper-case, one
 * lower-case, one digit and one other character. Returns every rule broken, for the 400 answer.
 */
export function passwordRuleProblems(password: string, field = 'newPassword'): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const length = Array.from(password).length;
  if (length < 12) problems.push({ field, message: 'must be at least 12 characters long' });
  if (length > 128) problems.push({ field, message: 'must be at most 128 characters long' });
  if (!/\p{Lu}/u.test(password)) problems.push({ field, message: 'must contain an upper-case letter' });
  if (!/\p{Ll}/u.test(password)) problems.push({ field, message: 'must contain a lower-case letter' });
  if (!/\p{Nd}/u.test(password)) problems.push({ field, message: 'must contain a digit' });
  if (!/[^\p{L}\p{Nd}]/u.test(password)) problems.push({ field, message: 'must contain a character that is neither a letter nor a digit' });
  return problems;
}

/** What the browser sends for a WirePasswordHash user: lowercase hex SHA-256 of (password + userName). */
const WIRE_HASH = /^[0-9a-f]{64}$/;

/**
 * A password of a WirePasswordHash user can only be checked for its form (the server never sees the
 * password itself, so strength rules do not apply).
 */
export function wireHashProblems(value: string, field: string): FieldProblem[] {
  return WIRE_HASH.test(value) ? [] : [{ field, message: 'must be the 64-character hex SHA-256 wire hash' }];
}
