import { EventFacts, factsOf, Row } from './event-facts';

/**
 * The events a sink sends (contract 19): OCSF 1.3 JSON, CEF, and the RFC 5424 syslog message around
 * either, with RFC 6587 octet-counting framing. Pure: the deliverer reads the leaves, rows and
 * checkpoints and hands them here.
 */

/** A sealed leaf, its row (null once retention removed it) and the signed checkpoint that first covered it. */
export interface SealedLeaf {
  leafIndex: number;
  table: string;
  rowId: string;
  /** The leaf record's date, canonical text (microseconds). */
  rowDate: string;
  rowHash: Buffer;
  leafHash: Buffer;
  row: Row | null;
  canonical: string | null;
  treeSize: number;
  rootHash: Buffer;
}

export interface EventSource {
  /** AuditLogOrigin: the first part of metadata.uid. */
  origin: string;
  /** The service's version (package.json). */
  version: string;
  /** The Instance setting: the syslog HOSTNAME. */
  instance: string;
}

export const PRODUCT_NAME = 'transaction-monitoring';
const OCSF_VERSION = '1.3.0';

/** Epoch milliseconds of a canonical date, rounded down (the microseconds dropped, never rounded up). */
export function epochMilliseconds(canonical: string): number {
  return Date.parse(`${canonical.slice(0, 23)}Z`);
}

export function leafRecordText(leaf: SealedLeaf): string {
  return `${leaf.table}\n${leaf.rowId}\n${leaf.rowDate}\n${leaf.rowHash.toString('base64')}\n`;
}

const STATUS = { success: { id: 1, name: 'Success' }, change: { id: 1, name: 'Success' }, failure: { id: 2, name: 'Failure' } } as const;
const SEVERITY = { success: { id: 1, name: 'Informational' }, change: { id: 2, name: 'Low' }, failure: { id: 3, name: 'Medium' } } as const;

const user = (u: { name: string | null; uid: string | null }) => ({ ...(u.name !== null ? { name: u.name } : {}), ...(u.uid !== null ? { uid: u.uid } : {}) });

/** The OCSF 1.3 event of a leaf. Keys in a fixed order, so the same leaf always gives the same bytes. */
export function ocsfEvent(leaf: SealedLeaf, source: EventSource, facts: EventFacts = factsOf(leaf.table, leaf.row)): Record<string, unknown> {
  const removed = leaf.row === null;
  const event: Record<string, unknown> = {
    class_uid: facts.classUid,
    class_name: facts.className,
    category_uid: facts.categoryUid,
    category_name: facts.categoryName,
    activity_id: facts.activityId,
    activity_name: facts.activityName,
    type_uid: facts.classUid * 100 + facts.activityId,
    time: epochMilliseconds(leaf.rowDate),
    status_id: removed ? 0 : STATUS[facts.outcome].id,
    status: removed ? 'Unknown' : STATUS[facts.outcome].name,
  };
  if (facts.statusDetail !== null) event.status_detail = facts.statusDetail;
  event.severity_id = SEVERITY[facts.outcome].id;
  event.severity = SEVERITY[facts.outcome].name;
  if (facts.user) event.user = user(facts.user);
  if (facts.actor) event.actor = { user: user(facts.actor) };
  if (facts.ip !== null) event.src_endpoint = { ip: facts.ip };
  if (facts.userAgent !== null) event.http_request = { user_agent: facts.userAgent };
  if (facts.authProtocol) {
    event.auth_protocol = facts.authProtocol.name;
    event.auth_protocol_id = facts.authProtocol.id;
  }
  event.metadata = {
    uid: `${source.origin}/${leaf.leafIndex}`,
    version: OCSF_VERSION,
    product: { name: PRODUCT_NAME, vendor_name: PRODUCT_NAME, version: source.version },
    log_name: leaf.table,
  };
  event.unmapped = {
    leafIndex: leaf.leafIndex,
    leafHash: leaf.leafHash.toString('base64'),
    leafRecord: leafRecordText(leaf),
    canonical: leaf.canonical,
    treeSize: leaf.treeSize,
    rootHash: leaf.rootHash.toString('base64'),
  };
  return event;
}

/** CEF header field escaping: backslash and pipe. */
export const cefHeader = (value: string): string => value.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[\r\n]/g, ' ');
/** CEF extension value escaping: backslash, equals sign, and line breaks as \n / \r. */
export const cefValue = (value: string): string => value.replace(/\\/g, '\\\\').replace(/=/g, '\\=').replace(/\r/g, '\\r').replace(/\n/g, '\\n');

const CEF_SEVERITY = { success: 3, change: 5, failure: 7 } as const;

/** The CEF line of a leaf (contract 19), one line. */
export function cefLine(leaf: SealedLeaf, source: EventSource, facts: EventFacts = factsOf(leaf.table, leaf.row)): string {
  const header = ['CEF:0', PRODUCT_NAME, 'security', source.version, facts.signatureId, facts.cefName, String(CEF_SEVERITY[facts.outcome])].map((v, i) => (i === 0 ? v : cefHeader(v)));
  const who = facts.actor ?? facts.user;
  const extension: Array<[string, string | null]> = [
    ['rt', String(epochMilliseconds(leaf.rowDate))],
    ['suser', who?.name ?? null],
    ['src', facts.ip],
    ['requestClientApplication', facts.userAgent],
    ['outcome', facts.outcome === 'failure' ? 'failure' : 'success'],
    ['cs1Label', 'leafIndex'],
    ['cs1', String(leaf.leafIndex)],
  ];
  return `${header.join('|')}|${extension
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k}=${cefValue(v!)}`)
    .join(' ')}`;
}

/** RFC 5424 SD-PARAM value escaping: `"`, `\` and `]`. */
const sdValue = (value: string) => value.replace(/[\\"\]]/g, (c) => `\\${c}`);
/** An RFC 5424 header field: printable US-ASCII without spaces, 1 to `max` characters, `-` when empty. */
export const syslogField = (value: string, max: number): string => value.replace(/[^\x21-\x7e]/g, '_').slice(0, max) || '-';

/** authpriv (10); severity 6 informational (success), 5 notice (a change that took effect), 4 warning (failure). */
const SYSLOG_SEVERITY = { success: 6, change: 5, failure: 4 } as const;
export const AUTHPRIV = 10;

/**
 * The RFC 5424 message of a leaf: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME - MSGID [leaf@32473 …] MSG`,
 * TIMESTAMP the row's date with its microseconds, MSG the OCSF JSON or the CEF line.
 */
export function syslogMessage(leaf: SealedLeaf, source: EventSource, format: 'ocsf' | 'cef'): string {
  const facts = factsOf(leaf.table, leaf.row);
  const pri = AUTHPRIV * 8 + SYSLOG_SEVERITY[facts.outcome];
  const body = format === 'cef' ? cefLine(leaf, source, facts) : JSON.stringify(ocsfEvent(leaf, source, facts));
  const sd = `[leaf@32473 index="${leaf.leafIndex}" hash="${sdValue(leaf.leafHash.toString('base64'))}"]`;
  return `<${pri}>1 ${leaf.rowDate} ${syslogField(source.instance, 255)} ${PRODUCT_NAME} - ${syslogField(leaf.table, 32)} ${sd} ${body}`;
}

/** RFC 6587 octet counting: `<length in bytes> <message>`. */
export function octetCounted(message: string): Buffer {
  const bytes = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${bytes.length} `, 'ascii'), bytes]);
}

/** The one event POST /api/SecuritySink/{id}/Test sends: outside the log (no leaf, no index), marked as a test. */
export function testEvent(source: EventSource, at: Date, format: 'ocsf' | 'cef'): { json: Record<string, unknown>; syslog: string } {
  const json = {
    class_uid: 6003,
    class_name: 'API Activity',
    category_uid: 6,
    category_name: 'Application Activity',
    activity_id: 99,
    activity_name: 'Other',
    type_uid: 600399,
    time: at.getTime(),
    status_id: 1,
    status: 'Success',
    severity_id: 1,
    severity: 'Informational',
    message: 'Test event from transaction-monitoring: not part of the audit log',
    metadata: { uid: `${source.origin}/test/${at.getTime()}`, version: OCSF_VERSION, product: { name: PRODUCT_NAME, vendor_name: PRODUCT_NAME, version: source.version }, log_name: 'Test' },
    unmapped: { test: true },
  };
  const body =
    format === 'cef'
      ? `CEF:0|${PRODUCT_NAME}|security|${cefHeader(source.version)}|Test:0|Test event|1|rt=${at.getTime()} outcome=success msg=not part of the audit log`
      : JSON.stringify(json);
  const stamp = at.toISOString().replace('Z', '000Z');
  return { json, syslog: `<${AUTHPRIV * 8 + 6}>1 ${stamp} ${syslogField(source.instance, 255)} ${PRODUCT_NAME} - Test - ${body}` };
}
