import { createHash } from 'node:crypto';

/**
 * The name a generated statement is prepared under: `prefix` and a digest of its text, so a name
 * node-postgres has prepared on a connection always means the same statement (it refuses a second text
 * under one name), and a changed text gets a new name rather than the old plan.
 */
export function statementName(prefix: string, text: string): string {
  return `${prefix}-${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}
