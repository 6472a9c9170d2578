import type { LeafWithRow } from '../audit-log/audited-rows.repository';
import { EventFacts, factsOf, Row } from './event-facts';

/**
 * The events a sink sends (contract 19): OCSF 1.3 JSON, CEF, and the RFC 5424 syslog message around
 * either, with RFC 6587 octet-counting framing. Pure: the deliverer reads the leaves, rows and
 * checkpoints and hands them here.
 */

/** A sealed leaf, its row (null once retention removed it) and the signed checkpoint that first covered it. */
export interface SealedLeaf extends Pick<LeafWithRow, 'leafIndex' | 'table' | 'rowId' | 'rowDate' | 'rowHash' | 'leafHash'> {
  row: Row | null;
  canonical: string | null;
  treeSize: number;
  rootHash: string;
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
  return `${leaf.table}\n${leaf.rowId}\n${leaf.rowDate}\n${leaf.rowHash}\n`;
}

const STATUS = { success: { id: 1, name: 'Success' }, change: { id: 1, name: 'Success' }, failure: { id: 2, name: 'Failure' } } as const;
const SEVERITY = { success: { id: 1, name: 'Informational' }, change: { id: 2, name: 'Low' }, failure: { id: 3, name: 'Medium' } } as const;

const json = JSON.stringify;
/** A JSON number as JSON.stringify writes it (NaN and ±Infinity as null). */
const num = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');
const userJson = (u: { name: string | null; uid: string | null }): string =>
  u.name !== null ? (u.uid !== null ? `{"name":${json(u.name)},"uid":${json(u.uid)}}` : `{"name":${json(u.name)}}`) : u.uid !== null ? `{"uid":${json(u.uid)}}` : '{}';

/**
 * The OCSF 1.3 event of a leaf as JSON text, keys in a fixed order, so the same leaf always gives the
 * same bytes. Written as text (JSON.stringify only on the strings) rather than an object serialised
 * whole: the deliverer writes one per leaf, and this is most of its CPU per event (bench/RESULTS.md,
 * issue 30). The one definition of the event: ocsfEvent parses it.
 */
export function ocsfJson(leaf: SealedLeaf, source: EventSource, facts: EventFacts = factsOf(leaf.table, leaf.row)): string {
  const removed = leaf.row === null;
  const status = STATUS[facts.outcome];
  const severity = SEVERITY[facts.outcome];
  let out =
    `{"class_uid":${num(facts.classUid)},"class_name":${json(facts.className)},"category_uid":${num(facts.categoryUid)},` +
    `"category_name":${json(facts.categoryName)},"activity_id":${num(facts.activityId)},"activity_name":${json(facts.activityName)},` +
    `"type_uid":${num(facts.classUid * 100 + facts.activityId)},"time":${num(epochMilliseconds(leaf.rowDate))},` +
    (removed ? '"status_id":0,"status":"Unknown"' : `"status_id":${status.id},"status":${json(status.name)}`);
  if (facts.statusDetail !== null) out += `,"status_detail":${json(facts.statusDetail)}`;
  out += `,"severity_id":${severity.id},"severity":${json(severity.name)}`;
  if (facts.user) out += `,"user":${userJson(facts.user)}`;
  if (facts.actor) out += `,"actor":{"user":${userJson(facts.actor)}}`;
  if (facts.ip !== null) out += `,"src_endpoint":{"ip":${json(facts.ip)}}`;
  if (facts.userAgent !== null) out += `,"http_request":{"user_agent":${json(facts.userAgent)}}`;
  if (facts.authProtocol) out += `,"auth_protocol":${json(facts.authProtocol.name)},"auth_protocol_id":${num(facts.authProtocol.id)}`;
  out +=
    `,"metadata":{"uid":${json(`${source.origin}/${leaf.leafIndex}`)},"version":${json(OCSF_VERSION)},` +
    `"product":{"name":${json(PRODUCT_NAME)},"vendor_name":${json(PRODUCT_NAME)},"version":${json(source.version)}},"log_name":${json(leaf.table)}}` +
    `,"unmapped":{"leafIndex":${num(leaf.leafIndex)},"leafHash":${json(leaf.leafHash)},"leafRecord":${json(leafRecordText(leaf))},` +
    `"canonical":${leaf.canonical === null ? 'null' : json(leaf.canonical)},"treeSize":${num(leaf.treeSize)},"rootHash":${json(leaf.rootHash)}}}`;
  return out;
}

/** The OCSF 1.3 event of a leaf as an object: ocsfJson read back (the tests and the Test route compare objects). */
export function ocsfEvent(leaf: SealedLeaf, source: EventSource, facts: EventFacts = factsOf(leaf.table, leaf.row)): Record<string, unknown> {
  return JSON.parse(ocsfJson(leaf, source, facts)) as Record<string, unknown>;
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
  const body = format === 'cef' ? cefLine(leaf, source, facts) : ocsfJson(leaf, source, facts);
  const sd = `[leaf@32473 index="${leaf.leafIndex}" hash="${sdValue(leaf.leafHash)}"]`;
  return `<${pri}>1 ${leaf.rowDate} ${syslogField(source.instance, 255)} ${PRODUCT_NAME} - ${syslogField(leaf.table, 32)} ${sd} ${body}`;
}

/** RFC 6587 octet counting as text: `<length in bytes> <message>` (a batch is joined, then encoded once). */
export function octetFrame(message: string): string {
  return `${Buffer.byteLength(message, 'utf8')} ${message}`;
}

/** RFC 6587 octet counting: `<length in bytes> <message>`. */
export function octetCounted(message: string): Buffer {
  return Buffer.from(octetFrame(message), 'utf8');
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
