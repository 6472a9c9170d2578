import {
  AUTHENTICATION_TYPE_NAMES,
  AuthenticationTypeId,
  FAILURE_TYPE_NAMES,
  FAILURE_TYPE_NOTES,
  FailureTypeId,
  LOGOUT_OUTCOME_NAMES,
  LOGOUT_REASON_NAMES,
  LogoutOutcomeId,
  LogoutReasonId,
} from '../sign-in-trail/audit.types';
import { CAPTURE_QUEUE_IDS, CAPTURE_QUEUE_NAMES } from '../telemetry/telemetry.tables';
import { ACTION_TYPE_NAMES, ActionTypeId, CREDENTIAL_TYPE_NAMES, CredentialTypeId } from '../admin-changes/admin-change.types';
import { ARCHIVER_STAGE_NAMES, ArchiverStage, CASE_CREATION_STAGE_NAMES, CaseCreationStage } from '../telemetry/telemetry.types';
import { Permission, PERMISSION_NAMES, PERMISSION_NOTES } from '../access/permissions';

/**
 * One code of a table: its id (as stored and as the API's filters take it), its key (the name of the
 * server's enum member, so a page can say "PasswordExpired" instead of repeating 4), the name the API
 * puts next to the id in a row, and for some codes a note that only the pages show.
 */
export interface Code {
  id: number;
  key: string;
  name: string;
  note?: string;
}

export type CodeTables = Readonly<Record<string, readonly Code[]>>;

/** The name of the generated module under /assets (see WebAssets). */
export const CODE_TABLES_ASSET = 'code-tables.js';

/**
 * A code table from an enum-like object and the names the read row codecs use. The enum and the names
 * must list the same ids: a code with no name (or a name with no code) stops the service at start,
 * rather than reaching a page as a number or a filter that can never match.
 */
export function codeTable(codes: Record<string, string | number>, names: Record<number, string>, notes: Record<number, string> = {}): Code[] {
  const members = Object.entries(codes).filter((entry): entry is [string, number] => typeof entry[1] === 'number');
  const ids = members.map(([, id]) => id).sort((a, b) => a - b);
  const named = Object.keys(names)
    .map(Number)
    .sort((a, b) => a - b);
  if (ids.join() !== named.join()) throw new Error(`code table mismatch: codes ${ids.join(',')} but names ${named.join(',')}`);
  const unexplained = Object.keys(notes).filter((id) => !(Number(id) in names));
  if (unexplained.length > 0) throw new Error(`code table notes for unknown codes: ${unexplained.join(',')}`);
  return members
    .sort(([, a], [, b]) => a - b)
    .map(([key, id]) => (notes[id] === undefined ? { id, key, name: names[id] } : { id, key, name: names[id], note: notes[id] }));
}

/**
 * Every vocabulary the pages show, from the constants the server itself reads and writes with
 * (service.md 2.3, 2.4, 4.3; contract 6): the only copy the browser gets (decision 0024).
 */
export function codeTables(): CodeTables {
  return {
    authenticationTypes: codeTable(AuthenticationTypeId, AUTHENTICATION_TYPE_NAMES),
    failureReasons: codeTable(FailureTypeId, FAILURE_TYPE_NAMES, FAILURE_TYPE_NOTES),
    logoutReasons: codeTable(LogoutReasonId, LOGOUT_REASON_NAMES),
    logoutOutcomes: codeTable(LogoutOutcomeId, LOGOUT_OUTCOME_NAMES),
    archiverStages: codeTable(ArchiverStage, ARCHIVER_STAGE_NAMES),
    caseCreationStages: codeTable(CaseCreationStage, CASE_CREATION_STAGE_NAMES),
    captureQueues: codeTable(CAPTURE_QUEUE_IDS, CAPTURE_QUEUE_NAMES),
    permissions: codeTable(Permission, PERMISSION_NAMES, PERMISSION_NOTES),
    actionTypes: codeTable(ActionTypeId, ACTION_TYPE_NAMES),
    credentialTypes: codeTable(CredentialTypeId, CREDENTIAL_TYPE_NAMES),
  };
}

/**
 * The tables as an ES module, served as /assets/code-tables.js: a static import for the pages (no
 * request before they can draw, nothing inline, so the CSP stays `script-src 'self'`). JSON is a
 * valid expression; `<` is escaped so no name could ever close a script element it is pasted into.
 */
export function codeTablesModule(tables: CodeTables = codeTables()): string {
  const json = JSON.stringify(tables, null, 2).replace(/</g, '\\u003c');
  return `// Generated at start by src/web/code-tables.ts from the server's own constants; there is no file to edit.
export const CODE_TABLES = ${json};
`;
}
