// Administration > Security > Audit integrity (landlord administrators, contract 15): the latest
// signed checkpoint of the tamper-evident audit log, what waits to be sealed and for how long, the
// last retention run, the partitions retention keeps for security sinks, and how to verify the log
// from outside (the verifier key and the command).
import { api, problemLines } from './api.js';
import { formatDate, formatNumber, h, notice } from './dom.js';
import { content, startPage } from './layout.js';

await startPage();
const root = content();

/**
 * A list of facts, each `[label, value, testid]`.
 * @param {[string, import('./page-types.js').Child, string?][]} rows
 * @param {boolean} [stacked]
 */
const facts = (rows, stacked = false) => h('dl', { class: stacked ? 'facts stacked' : 'facts' }, rows.flatMap(([label, value, testid]) => [h('dt', {}, label), h('dd', { 'data-testid': testid }, value)]));

/** A wait in words: "12 s", "4 min 3 s", "2 h 5 min". @param {number | null | undefined} value */
function seconds(value) {
  if (value === null || value === undefined) return '';
  if (value < 1) return 'less than a second';
  if (value < 120) return `${formatNumber(Math.round(value))} s`;
  if (value < 7200) return `${formatNumber(Math.floor(value / 60))} min ${Math.round(value % 60)} s`;
  return `${formatNumber(Math.floor(value / 3600))} h ${Math.floor((value % 3600) / 60)} min`;
}

/**
 * GET /api/Audit/Status (contract 15), as this page reads it.
 * @typedef {{
 *   latest: { treeSize: number, rootHash: string, createdDate: string, note?: string } | null,
 *   pendingRows: number,
 *   oldestPendingSeconds: number | null,
 *   sealIntervalMilliseconds: number,
 *   lastRetentionRun: { runDate: string, tableName: string, partitionName: string, cutoff: string, rowCount: number } | null,
 *   verifierKey: string,
 * }} AuditStatus
 */

/**
 * GET /api/Audit/Outside (contract 18), as this page reads it.
 * @typedef {{ total: number, rows: { table: string, rowId: string, createdDate: string | null, reason: string }[] }} AuditOutside
 */

// Contract 18: rows of the sealed tables that are neither leaves nor waiting (or waiting over 60 s).
/** @param {AuditOutside} outside */
function outsideCard(outside) {
  const rows = outside.rows.slice(0, 50);
  return h(
    'section',
    { class: 'card', 'data-testid': 'audit-outside' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Rows outside the log'), h('span', { class: ['badge', outside.total > 0 ? 'badge-bad' : 'badge-good'] }, outside.total > 0 ? formatNumber(outside.total) : 'None')),
    outside.total > 0
      ? [
          h('p', {}, 'These rows are in the audit tables but in no signed checkpoint: inserted with the triggers off, their waiting entry removed, or waiting for more than a minute. A landlord who has checked them may adopt them (POST /api/Audit/Outside/Adopt), which records who did.'),
          h('ul', { class: 'outside-rows', 'data-testid': 'outside-rows' }, rows.map((row) => h('li', {}, h('code', { class: 'mono' }, `${row.table} ${row.rowId}`), ` ${row.reason}, dated ${row.createdDate ?? 'no date'}`))),
        ]
      : h('p', { 'data-testid': 'outside-none' }, 'Every row of the audit tables is sealed or about to be.'),
  );
}

/**
 * GET /api/Audit/RetentionHeld (contract 19), as this page reads it.
 * @typedef {{ partition: string, lastLeafIndex: number, sinks: { name: string, nextLeafIndex: number }[] }[]} RetentionHeld
 */

// Contract 19: audit partitions past retention that stay because an active sink owes their events to its SIEM.
/** @param {RetentionHeld} held */
function heldCard(held) {
  return h(
    'section',
    { class: 'card', 'data-testid': 'retention-held' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Kept for security sinks'), h('span', { class: ['badge', held.length > 0 ? 'badge-warn' : 'badge-good'] }, held.length > 0 ? formatNumber(held.length) : 'None')),
    held.length > 0
      ? [
          h('p', {}, 'These partitions are past retention but are kept until every active sink has acknowledged their leaves; the next retention run after that drops them.'),
          h(
            'ul',
            { class: 'outside-rows', 'data-testid': 'retention-held-partitions' },
            held.map((p) =>
              h(
                'li',
                {},
                h('code', { class: 'mono' }, p.partition),
                ` leaves up to ${formatNumber(p.lastLeafIndex)}, owed by `,
                p.sinks.map((sink, i) => [i > 0 ? ', ' : '', h('strong', {}, sink.name), ` (next leaf ${formatNumber(sink.nextLeafIndex)})`]),
              ),
            ),
          ),
        ]
      : h('p', { 'data-testid': 'retention-held-none' }, 'None: retention keeps no partition for a sink.'),
  );
}

/**
 * @param {AuditStatus} status
 * @param {AuditOutside} outside
 * @param {RetentionHeld} held
 */
function render(status, outside, held) {
  const latest = status.latest;
  const checkpoint = h(
    'section',
    { class: 'card', 'data-testid': 'audit-checkpoint' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Latest checkpoint')),
    latest
      ? [
          facts([
            ['Leaves (tree size)', formatNumber(latest.treeSize), 'checkpoint-size'],
            ['Signed at', formatDate(latest.createdDate), 'checkpoint-time'],
          ]),
          facts([['Root hash (SHA-256, base64)', h('code', { class: 'mono' }, latest.rootHash), 'checkpoint-root']], true),
          h('details', { class: 'history' }, h('summary', {}, 'Signed note'), h('pre', { class: 'mono note', 'data-testid': 'checkpoint-note' }, latest.note)),
        ]
      : h('p', { class: 'muted' }, 'No checkpoint yet.'),
  );

  const waiting = status.pendingRows > 0;
  const late = waiting && (status.oldestPendingSeconds ?? 0) * 1000 > Math.max(10_000, 5 * status.sealIntervalMilliseconds);
  const pending = h(
    'section',
    { class: 'card', 'data-testid': 'audit-pending' },
    h(
      'div',
      { class: 'card-head' },
      h('h2', {}, 'Waiting to be sealed'),
      h('span', { class: ['badge', late ? 'badge-bad' : waiting ? 'badge-warn' : 'badge-good'] }, late ? 'Behind' : waiting ? 'Sealing' : 'Up to date'),
    ),
    facts([
      ['Rows waiting', formatNumber(status.pendingRows), 'pending-rows'],
      ['Oldest has waited', waiting ? seconds(status.oldestPendingSeconds) : 'nothing waits', 'pending-age'],
      ['Sealed every', seconds(status.sealIntervalMilliseconds / 1000), 'seal-interval'],
    ]),
    h('p', { class: 'hint' }, 'Every sign-in and sign-out row becomes a leaf of the log within about one interval; until then it is not yet covered by a signed checkpoint.'),
  );

  const run = status.lastRetentionRun;
  const retention = h(
    'section',
    { class: 'card', 'data-testid': 'audit-retention' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Last retention run')),
    run
      ? facts([
          ['Run at', formatDate(run.runDate), 'retention-date'],
          ['Table', run.tableName],
          ['Partition dropped', run.partitionName],
          ['Rows dated before', formatDate(run.cutoff)],
          ['Rows removed', formatNumber(run.rowCount)],
        ])
      : h('p', { 'data-testid': 'retention-none' }, 'None: no audit row has been removed by retention.'),
  );

  const origin = location.origin;
  const command = `npm run audit:verify -- --url ${origin} --api-key <an API key of a landlord administrator> --verifier-key '${status.verifierKey}' --known audit-checkpoints.txt`;
  const verify = h(
    'section',
    { class: 'card', 'data-testid': 'audit-verify' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Verify it yourself')),
    h('p', {}, 'Anyone holding the verifier key can check the whole log over HTTP, without trusting this service or its database: every leaf against its row, every checkpoint\u2019s signature, root and consistency with the one before.'),
    facts([['Verifier key', h('code', { class: 'mono' }, status.verifierKey), 'verifier-key']], true),
    h('p', { class: 'hint' }, 'Keep the verifier key somewhere this service cannot change it. Keep the --known file between runs: it catches a history cut back or rewritten, even by someone holding the signing key.'),
    h('pre', { class: 'mono command', 'data-testid': 'verify-command' }, command),
  );

  root.append(h('div', { class: 'audit-integrity' }, checkpoint, pending, outsideCard(outside), retention, heldCard(held), verify));
}

try {
  const [{ json }, outside, held] = await Promise.all([api('GET', '/api/Audit/Status'), api('GET', '/api/Audit/Outside'), api('GET', '/api/Audit/RetentionHeld')]);
  render(json, outside.json, held.json);
} catch (error) {
  root.append(notice('error', problemLines(error)));
}
root.dataset.ready = 'true';
document.body.dataset.ready = 'true';
