import { createHash } from 'node:crypto';

/**
 * The canonical form of an audit row and its leaf record (contract 15). Pure: no I/O. These bytes
 * are what every signed checkpoint commits to, so any program (the verifier, an auditor's own
 * script) must produce exactly the same bytes from the same row; every input is checked strictly
 * rather than coerced, because a silently different rendering would be a false tamper alarm or,
 * worse, two rows with one hash.
 */

/**
 * The tables whose rows the log seals (contracts 15, 16, 18), in the order the sealer takes them. Not
 * the tables retention partitions: those are PARTITIONED_AUDIT_TABLES (retention/partition-plan.ts),
 * which has no AuditRetentionRun (a record of drops is never dropped).
 */
export type SealedTableName = 'UserLogin' | 'UserLogout' | 'AuditRetentionRun' | 'AdminChange';
export const SEALED_TABLES: readonly SealedTableName[] = Object.freeze(['UserLogin', 'UserLogout', 'AuditRetentionRun', 'AdminChange'] as const);

/**
 * A row as read from the database, every column as TEXT the way the sealer selects it: dates already
 * formatted as canonical timestamps (see canonicalTimestampSql), numbers as decimal strings, booleans
 * as 't'/'f' or true/false, null as null. Keys are the column names of contract section 9 / 16.
 */
export type AuditRowText = Record<string, string | boolean | null>;

export type ColumnKind = 'id' | 'date' | 'int' | 'bool' | 'text';

/**
 * Column order of each table's canonical form (contract 9: UserLogin, UserLogout; 16:
 * AuditRetentionRun), with each column's JSON kind. The order is part of the hash: never reorder,
 * only a new table version could add columns.
 */
const CANONICAL_COLUMNS = Object.freeze({
  UserLogin: Object.freeze([
    { name: 'Id', kind: 'id' },
    { name: 'CreatedDate', kind: 'date' },
    { name: 'CreatedUser', kind: 'text' },
    { name: 'UserRegistryId', kind: 'int' },
    { name: 'TenantRegistryId', kind: 'int' },
    { name: 'AuthenticationTypeId', kind: 'int' },
    { name: 'Failed', kind: 'bool' },
    { name: 'FailureTypeId', kind: 'int' },
    { name: 'FailureMessage', kind: 'text' },
    { name: 'RemoteIp', kind: 'text' },
    { name: 'LocalIp', kind: 'text' },
    { name: 'UserAgent', kind: 'text' },
  ] as const),
  UserLogout: Object.freeze([
    { name: 'Id', kind: 'id' },
    { name: 'CreatedDate', kind: 'date' },
    { name: 'CreatedUser', kind: 'text' },
    { name: 'UserRegistryId', kind: 'int' },
    { name: 'TenantRegistryId', kind: 'int' },
    { name: 'ReasonId', kind: 'int' },
    { name: 'OutcomeId', kind: 'int' },
    { name: 'RemoteIp', kind: 'text' },
    { name: 'LocalIp', kind: 'text' },
    { name: 'UserAgent', kind: 'text' },
    { name: 'SessionStartDate', kind: 'date' },
    { name: 'CutByUser', kind: 'text' },
    { name: 'Message', kind: 'text' },
  ] as const),
  AuditRetentionRun: Object.freeze([
    { name: 'Id', kind: 'id' },
    { name: 'RunDate', kind: 'date' },
    { name: 'TableName', kind: 'text' },
    { name: 'PartitionName', kind: 'text' },
    { name: 'Cutoff', kind: 'date' },
    { name: 'RowCount', kind: 'int' },
  ] as const),
  /** Contract 18; the read of GET /api/AdminChange is built from this list too (admin-changes/admin-change.table.ts). */
  AdminChange: Object.freeze([
    { name: 'Id', kind: 'id' },
    { name: 'CreatedDate', kind: 'date' },
    { name: 'CreatedUser', kind: 'text' },
    { name: 'UserRegistryId', kind: 'int' },
    { name: 'TenantRegistryId', kind: 'int' },
    { name: 'CredentialTypeId', kind: 'int' },
    { name: 'CredentialId', kind: 'text' },
    { name: 'ActionTypeId', kind: 'int' },
    { name: 'TargetTable', kind: 'text' },
    { name: 'TargetId', kind: 'int' },
    { name: 'TargetName', kind: 'text' },
    { name: 'TargetTenantRegistryId', kind: 'int' },
    { name: 'Failed', kind: 'bool' },
    { name: 'Changes', kind: 'text' },
    { name: 'RemoteIp', kind: 'text' },
    { name: 'LocalIp', kind: 'text' },
    { name: 'UserAgent', kind: 'text' },
  ] as const),
});

/** A column of a sealed table's canonical form. */
export interface CanonicalColumn<Name extends string = string> {
  readonly name: Name;
  readonly kind: ColumnKind;
}

/** The column names of `T`, as the list below spells them (so a description naming one is checked). */
export type CanonicalColumnName<T extends SealedTableName> = (typeof CANONICAL_COLUMNS)[T][number]['name'];

/**
 * Each sealed table's columns, the one list of them: the canonical form and the sealer's SQL
 * (audited-rows.repository.ts), Proof and the verifier read it, and so do the reads of UserLogin,
 * UserLogout (audit/audit.tables.ts) and AdminChange (admin-changes/admin-change.table.ts).
 */
export const AUDIT_COLUMNS: { readonly [T in SealedTableName]: ReadonlyArray<CanonicalColumn<CanonicalColumnName<T>>> } = CANONICAL_COLUMNS;

/** The column whose value is a leaf record's date: CreatedDate, or RunDate for a retention run. */
export const LEAF_DATE_COLUMN: Record<SealedTableName, string> = Object.freeze({
  UserLogin: 'CreatedDate',
  UserLogout: 'CreatedDate',
  AuditRetentionRun: 'RunDate',
  AdminChange: 'CreatedDate',
});

/** 2026-11-25T19:19:32.123456Z: UTC, exactly six fractional digits (PostgreSQL's microseconds). */
export const CANONICAL_TIMESTAMP = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{6}Z$/;
const DECIMAL_ID = /^(0|[1-9]\d*)$/;
const DECIMAL_INT = /^(0|-?[1-9]\d*)$/;

export function isSealedTable(value: unknown): value is SealedTableName {
  return typeof value === 'string' && (SEALED_TABLES as readonly string[]).includes(value);
}

/**
 * SQL expression rendering a timestamptz column as the canonical text 2026-11-25T19:19:32.123456Z.
 * `column` is a bare column name (quoted here) or an already-quoted expression such as `l."CreatedDate"`.
 * to_char on the value shifted to UTC, not ::text: ::text follows the session's DateStyle and TimeZone
 * and drops trailing zeros of the fraction.
 */
export function canonicalTimestampSql(column: string): string {
  const expression = /^[A-Za-z_][A-Za-z0-9_]*$/.test(column) ? `"${column}"` : column;
  return `to_char((${expression}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

function renderColumn(table: SealedTableName, name: string, kind: ColumnKind, value: string | boolean | null | undefined): string {
  if (value === undefined) throw new Error(`${table}.${name}: missing from the row`);
  if (value === null) {
    if (kind === 'id') throw new Error(`${table}.${name}: the id cannot be null`);
    return 'null';
  }
  // Numbers are accepted too (a caller reading through a driver that parses ints): rendered by the same rules.
  const text = typeof value === 'number' ? String(value) : value;
  switch (kind) {
    case 'id':
      if (typeof text !== 'string' || !DECIMAL_ID.test(text)) throw new Error(`${table}.${name}: expected a decimal id, got ${JSON.stringify(value)}`);
      return JSON.stringify(text);
    case 'int':
      if (typeof text !== 'string' || !DECIMAL_INT.test(text)) throw new Error(`${table}.${name}: expected a decimal integer, got ${JSON.stringify(value)}`);
      // Written from the decimal text, so bigint values past 2^53 keep every digit.
      return text;
    case 'bool':
      if (text === true || text === 't' || text === 'true') return 'true';
      if (text === false || text === 'f' || text === 'false') return 'false';
      throw new Error(`${table}.${name}: expected a boolean, got ${JSON.stringify(value)}`);
    case 'date':
      if (typeof text !== 'string' || !CANONICAL_TIMESTAMP.test(text)) {
        throw new Error(`${table}.${name}: expected a canonical timestamp such as 2026-11-25T19:19:32.123456Z, got ${JSON.stringify(value)}`);
      }
      return JSON.stringify(text);
    case 'text':
      if (typeof text !== 'string') throw new Error(`${table}.${name}: expected text, got ${JSON.stringify(value)}`);
      return JSON.stringify(text);
  }
}

/** The canonical form: UTF-8 bytes of the JSON array ["<table>", col1, col2, ...], no spaces. */
export function canonicalRow(table: SealedTableName, row: AuditRowText): Buffer {
  if (!isSealedTable(table)) throw new Error(`not an audit table: ${JSON.stringify(table)}`);
  const parts = [JSON.stringify(table)];
  for (const { name, kind } of AUDIT_COLUMNS[table]) parts.push(renderColumn(table, name, kind, row[name]));
  return Buffer.from(`[${parts.join(',')}]`, 'utf8');
}

/**
 * Reads a canonical form back: the table and each column's JSON value (strings for id, date and
 * text; numbers' decimal text for int, so no digit is lost; booleans; null). The verifier uses it to
 * compare the row's table, id and date with its leaf record. Throws if the bytes are not exactly what
 * canonicalRow would write for that row.
 */
export function parseCanonicalRow(bytes: Buffer): { table: SealedTableName; row: AuditRowText } {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new Error('canonical form: not valid UTF-8');
  const values = scanFlatJsonArray(text);
  if (!Array.isArray(values) || !isSealedTable(values[0])) throw new Error('canonical form: does not start with an audit table name');
  const table = values[0];
  const columns = AUDIT_COLUMNS[table];
  if (values.length !== columns.length + 1) throw new Error(`canonical form: ${table} has ${columns.length} columns, got ${values.length - 1}`);
  const row: AuditRowText = {};
  columns.forEach(({ name }, i) => {
    const v = values[i + 1];
    row[name] = v !== null && typeof v === 'object' ? v.int : v;
  });
  let rebuilt: Buffer;
  try {
    rebuilt = canonicalRow(table, row);
  } catch (error) {
    throw new Error(`canonical form: ${(error as Error).message}`);
  }
  if (!rebuilt.equals(bytes)) throw new Error(`canonical form: not in canonical ${table} form`);
  return { table, row };
}

/**
 * The table, id and leaf date a canonical form names, read with JSON.parse: the fast path of the
 * verifier, which has already checked the bytes against the sealed row hash and needs only to know
 * the row is the leaf's (parseCanonicalRow is the strict, slower reading). Throws if the shape is wrong.
 */
export function canonicalIdentity(bytes: Buffer): { table: SealedTableName; id: string; date: string } {
  let values: unknown;
  try {
    values = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error('canonical form: not JSON');
  }
  if (!Array.isArray(values) || !isSealedTable(values[0])) throw new Error('canonical form: does not start with an audit table name');
  const table = values[0];
  const columns = AUDIT_COLUMNS[table];
  if (values.length !== columns.length + 1) throw new Error(`canonical form: ${table} has ${columns.length} columns, got ${values.length - 1}`);
  const dateIndex = columns.findIndex((c) => c.name === LEAF_DATE_COLUMN[table]) + 1;
  const id = values[1] as unknown;
  const date = values[dateIndex] as unknown;
  if (typeof id !== 'string' || typeof date !== 'string') throw new Error('canonical form: the id or date is not text');
  return { table, id, date };
}

/**
 * A flat JSON array of scalars, scanned by hand so that integers keep their decimal text (JSON.parse
 * would round a bigint past 2^53). Strings are decoded by JSON.parse one at a time; anything else
 * (nesting, spaces) is refused, since canonical forms have neither.
 */
function scanFlatJsonArray(text: string): Array<string | boolean | null | { int: string }> {
  if (!text.startsWith('[') || !text.endsWith(']')) throw new Error('canonical form: not a JSON array');
  const values: Array<string | boolean | null | { int: string }> = [];
  let i = 1;
  while (i < text.length - 1 || values.length === 0) {
    if (text[i] === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw new Error('canonical form: unterminated string');
      try {
        values.push(JSON.parse(text.slice(i, j + 1)) as string);
      } catch {
        throw new Error('canonical form: bad string');
      }
      i = j + 1;
    } else {
      const match = /^(true|false|null|-?\d+)(?=[,\]])/.exec(text.slice(i, i + 32));
      if (!match) throw new Error(`canonical form: unexpected text at offset ${i}`);
      const token = match[1];
      values.push(token === 'true' ? true : token === 'false' ? false : token === 'null' ? null : { int: token });
      i += token.length;
    }
    if (i === text.length - 1) break;
    if (text[i] !== ',') throw new Error(`canonical form: expected a comma at offset ${i}`);
    i += 1;
  }
  return values;
}

export function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The leaf record text "<table>\n<rowId>\n<date>\n<base64 rowHash>\n" as bytes. */
export function leafRecord(table: SealedTableName, rowId: string, rowCreatedDate: string, rowHash: Buffer): Buffer {
  if (!isSealedTable(table)) throw new Error(`not an audit table: ${JSON.stringify(table)}`);
  if (!DECIMAL_ID.test(rowId)) throw new Error(`leaf record: expected a decimal row id, got ${JSON.stringify(rowId)}`);
  if (!CANONICAL_TIMESTAMP.test(rowCreatedDate)) throw new Error(`leaf record: expected a canonical timestamp, got ${JSON.stringify(rowCreatedDate)}`);
  if (rowHash.length !== 32) throw new Error(`leaf record: a row hash has 32 bytes, got ${rowHash.length}`);
  return Buffer.from(`${table}\n${rowId}\n${rowCreatedDate}\n${rowHash.toString('base64')}\n`, 'utf8');
}

/** Strict inverse of leafRecord: throws unless the bytes are exactly what leafRecord writes. */
export function parseLeafRecord(record: Buffer): { table: SealedTableName; rowId: string; rowCreatedDate: string; rowHash: Buffer } {
  const text = record.toString('utf8');
  const lines = text.split('\n');
  if (lines.length !== 5 || lines[4] !== '') throw new Error('leaf record: expected four lines, each ending in a newline');
  const [table, rowId, rowCreatedDate, hash] = lines;
  if (!isSealedTable(table)) throw new Error(`leaf record: not an audit table: ${JSON.stringify(table)}`);
  const rowHash = Buffer.from(hash, 'base64');
  if (rowHash.length !== 32 || rowHash.toString('base64') !== hash) throw new Error('leaf record: the row hash is not 32 bytes of standard base64');
  const rebuilt = leafRecord(table, rowId, rowCreatedDate, rowHash);
  if (!rebuilt.equals(record)) throw new Error('leaf record: not in canonical form');
  return { table, rowId, rowCreatedDate, rowHash };
}
