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
