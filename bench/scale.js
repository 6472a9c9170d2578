/* eslint-disable */
// Grid reads as the tables grow (issue 12). Run: npm run build && node bench/scale.js
//
// A dedicated database (dropped at the end) grows to each of BENCH_SIZES rows (default 1M, 10M) in
// both ArchiverWarning (telemetry) and UserLogin (audit), made with INSERT … SELECT generate_series.
// The density stays that of the issue's harness (1M rows over 14 h: ≈ 71,000 rows per hour, so the
// default one-hour window holds the same number of rows at every size; 10M rows are 140 h of
// history): what must stay flat is what a read touches outside its window. At each size the rows of
// the newest hour are written last and, first, measured before any VACUUM has seen them (as on a
// busy system between autovacuum runs), then once autovacuum has visited them (migration AppendOnlyAutovacuum).
//
// Measured over HTTP against the compiled service (its own process), targets alternating over
// BENCH_ROUNDS rounds after a warm-up, medians: grid pages (take=100, default window) of both tables,
// a filtered page, and UserLogin pages with `search` (a user name, an address part, a word of every
// user agent, a word of failure messages), as the landlord and as a tenant administrator.
// EXPLAIN (ANALYZE, BUFFERS) of the statement behind each is written to bench/plans-<size>.txt.
require('reflect-metadata');
const { Pool } = require('pg');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { createDatabase, startService, signInAdministrator, median, printTable } = require('./lib/service');

const SIZES = (process.env.BENCH_SIZES || '1000000,10000000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 9);
const PER_HOUR = Number(process.env.BENCH_ROWS_PER_HOUR || 1_000_000 / 14);
const TENANT_PASSWORD = 'Tenant-Bench-Passw0rd!';
const ms = (x) => `${x.toFixed(1)} ms`;
const hoursAgo = (h) => new Date(Date.now() - h * 3_600_000).toISOString();
/** A checkout whose dist/ is measured (BENCH_ROOT: another build, e.g. the code before a change). */
const ROOT = process.env.BENCH_ROOT || join(__dirname, '..');

/** The UserLogin search text exactly as its trigger (migration AuditSearchText) computes it. */
const SEARCH_TEXT = `lower(concat_ws(chr(31), "CreatedUser", "RemoteIp", "UserAgent", "FailureMessage"))`;

/**
 * Inserts rows numbered [from, to) of one table; row g is g / PER_HOUR hours old, written oldest first
 * (generate_series counting down: the heap in date order, as an append-only table is, with no sort).
 */
async function growTable(client, table, from, to) {
  const at = `now() - (g * (interval '1 hour' / ${PER_HOUR}))`;
  const step = 1_000_000;
  for (let hi = to; hi > from; hi -= step) {
    const lo = Math.max(from, hi - step);
    if (table === 'ArchiverWarning') {
      await client.query(
        `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                        "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
         SELECT d - interval '2 seconds', md5((g % 20)::text)::uuid, 'Model ' || (g % 20), md5(g::text)::uuid, 1 + g % 4,
                10000000 + (random() * random() * 30000000)::bigint, d, 'node-' || (g % 3)
           FROM generate_series($2::int - 1, $1::int, -1) g, LATERAL (SELECT ${at} AS d) x`,
        [lo, hi],
      );
    } else {
      // The search text is written here, as the trigger would (the trigger is off during the load:
      // a PL/pgSQL call per row is most of an INSERT's cost at these sizes).
      await client.query(
        `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "Failed", "FailureTypeId",
                                  "FailureMessage", "RemoteIp", "LocalIp", "UserAgent", "SearchText")
         SELECT *, ${SEARCH_TEXT} FROM (
           SELECT d AS "CreatedDate", 'user-' || (g % 5000) AS "CreatedUser", CASE WHEN g % 50 = 0 THEN NULL ELSE 100 + g % 5000 END,
                  CASE WHEN g % 50 = 0 THEN NULL ELSE 1 + (g % 5000) % 4 END, 1 + (g % 7 = 0)::int, g % 10 = 0, CASE WHEN g % 10 = 0 THEN 5 END,
                  CASE WHEN g % 10 = 0 THEN 'Password did not match (attempt ' || (g % 5 + 1) || ')' END AS "FailureMessage",
                  '10.' || (g % 200) || '.' || ((g / 200) % 250) || '.' || (g % 97) AS "RemoteIp", '10.0.0.1',
                  (ARRAY['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
                         'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
                         'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0',
                         'curl/8.5.0'])[1 + g % 4] AS "UserAgent"
             FROM generate_series($2::int - 1, $1::int, -1) g, LATERAL (SELECT ${at} AS d) x) r`,
        [lo, hi],
      );
    }
  }
}

/**
 * Inserts rows numbered [from, to) of both tables, one table per connection (two cores). Around a
 * big load the secondary indexes are dropped and built again afterwards (one sorted build instead of
 * millions of insertions), and UserLogin's search-text trigger is off (the INSERT writes the same text).
 * Its audit-log enqueue trigger is off too: these are read fixtures, and sealing millions of rows in
 * the background would load the machine during the reads this measures (bench/audit-seal.js measures
 * sealing).
 */
async function grow(pool, from, to) {
  const rebuild = to - from > 2_000_000;
  await partitionsFor(pool, to);
  const timed = async (label, work) => {
    const t0 = performance.now();
    await work();
    console.log(`  ${label}: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  };
  await Promise.all(
    ['ArchiverWarning', 'UserLogin'].map(async (table) => {
      const client = await pool.connect();
      try {
        const saved = [];
        if (rebuild) {
          const { rows } = await client.query(
            `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 AND indexname NOT LIKE '%pkey'`,
            [table],
          );
          for (const r of rows) {
            // A partitioned table's index reads back as `ON ONLY`, which would build nothing on the partitions.
            saved.push(r.indexdef.replace(' ON ONLY ', ' ON '));
            await client.query(`DROP INDEX "${r.indexname}"`);
          }
        }
        // The search-text trigger, and the audit log's enqueue (contract 15: these history rows need no
        // sealing here, and 10M of them waiting would have the service's sealer busy during the reads).
        const triggers = table === 'UserLogin' ? await loadTriggers(client) : [];
        for (const trigger of triggers) await client.query(`ALTER TABLE "UserLogin" DISABLE TRIGGER "${trigger}"`);
        try {
          await timed(`${table}: ${(to - from).toLocaleString()} rows inserted`, () => growTable(client, table, from, to));
        } finally {
          for (const trigger of triggers) await client.query(`ALTER TABLE "UserLogin" ENABLE TRIGGER "${trigger}"`);
        }
        if (rebuild) {
          await client.query(`SET maintenance_work_mem = '512MB'`);
          for (const definition of saved) await timed(`${table}: ${definition.replace(/ ON .*? USING/, ' USING')}`, () => client.query(definition));
          await client.query(`RESET maintenance_work_mem`);
        }
      } finally {
        client.release();
      }
    }),
  );
}

/** UserLogin's triggers that fire per inserted row and that the load leaves off (those that exist in this build). */
async function loadTriggers(client) {
  const { rows } = await client.query(
    `SELECT tgname FROM pg_trigger WHERE tgrelid = '"UserLogin"'::regclass AND tgname IN ('UserLogin_SearchText', 'UserLogin_AuditEnqueue')`,
  );
  return rows.map((r) => r.tgname);
}

/**
 * Where the tables are partitioned (issue 20, contract 16), the partitions of every period the rows
 * up to `to` fall in, made beforehand as the daily job would have made them while this history was
 * written (otherwise the history would all wait in DEFAULT).
 */
async function partitionsFor(pool, to) {
  let plan;
  try {
    plan = require(join(ROOT, 'dist/retention/partition-plan'));
  } catch {
    return; // a build from before partitioning
  }
  const { createPartition, listPartitions } = require(join(ROOT, 'dist/retention/partition-sql'));
  const client = await pool.connect();
  try {
    const sql = async (text, params) => (await client.query(text, params)).rows;
    const hours = Math.ceil(to / PER_HOUR) + 1;
    const dates = Array.from({ length: hours + 1 }, (_, h) => new Date(Date.now() - h * 3_600_000));
    for (const table of plan.PARTITIONED_TABLES.filter((t) => ['ArchiverWarning', 'UserLogin'].includes(t.table))) {
      const existing = (await listPartitions(sql, [table.table])).get(table.table);
      if (existing.length === 0) continue;
      for (const partition of plan.partitionsFor(table, dates, existing)) await createPartition(sql, table, partition);
    }
  } finally {
    client.release();
  }
}

async function main() {
  const db = await createDatabase('tm_bench_scale');
  const pool = new Pool({ connectionString: db.url, max: 2 });
  let service;
  let before = null;
  let app;
  try {
    service = await startService({ ConnectionString: db.url }, 45_000 + Math.floor(Math.random() * 1000), ROOT);
    // BENCH_BEFORE=<checkout with dist/>: the same reads from that build too, alternating, on the same database.
    if (process.env.BENCH_BEFORE) before = await startService({ ConnectionString: db.url }, 44_000 + Math.floor(Math.random() * 1000), process.env.BENCH_BEFORE);

    // A tenant administrator of tenant 2 (permission 35), for the tenant-scoped audit read.
    const { createApp } = require(join(ROOT, 'dist/bootstrap'));
    const { loadSettings } = require(join(ROOT, 'dist/config/settings'));
    const { resolveSecrets } = require(join(ROOT, 'dist/config/secrets'));
    const { ReadEngine } = require(join(ROOT, 'dist/reads/read-engine.service'));
    const { explainRead } = require('./lib/read-explain').readExplain(ROOT);
    const { parseReadQuery } = require(join(ROOT, 'dist/reads/read-query'));
    const { ARCHIVER_WARNING_TABLE } = require(join(ROOT, 'dist/telemetry/telemetry.tables'));
    const { USER_LOGIN_TABLE } = require(join(ROOT, 'dist/sign-in-trail/audit.tables'));
    app = await createApp(
      resolveSecrets(
        loadSettings({
          ConnectionString: db.url,
          JwtKey: 'bench-jwt-key-0123456789abcdef0123456789abcdef',
          ApiHmacKey: 'bench-api-hmac-key-0123456789abcdef',
          DataDirectory: require('node:fs').mkdtempSync(join(require('node:os').tmpdir(), 'tm-scale-')),
          LogLevel: 'error',
        }),
      ),
      { logger: ['error'] },
    );
    const engine = app.get(ReadEngine);
    const argon2 = require('argon2');
    await pool.query(`INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ('Tenant Two', false, true)`);
    const tenantId = (await pool.query(`SELECT "Id" FROM "TenantRegistry" WHERE "Name" = 'Tenant Two'`)).rows[0].Id;
    const role = (await pool.query(`INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, 'auditors', true) RETURNING "Id"`, [tenantId])).rows[0].Id;
    await pool.query(`INSERT INTO "RoleRegistryPermission" VALUES ($1, 35)`, [role]);
    await pool.query(
      `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate", "Active", "WirePasswordHash", "CreatedDate", "CreatedUser")
       VALUES ($1, 'tenant-auditor', $2, now(), now() + interval '90 days', true, false, now(), 'bench')`,
      [role, await argon2.hash(TENANT_PASSWORD, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 })],
    );
    // Tokens expire while the tables grow: sign in again before each measurement.
    let token;
    let tenantToken;
    const signIn = async () => {
      token = (await signInAdministrator(service.url)).token;
      tenantToken = (
        await (
          await fetch(`${service.url}/api/Authentication/ByUserNamePassword`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ userName: 'tenant-auditor', password: TENANT_PASSWORD }),
          })
        ).json()
      ).token;
    };
    const tenantPrincipal = { landlord: false, tenantRegistryId: Number(tenantId), userRegistryId: 0, permissions: [35] };
    const landlord = { landlord: true, tenantRegistryId: 1, userRegistryId: 1, permissions: [] };

    const targets = [
      ['ArchiverWarning page (take=100)', ARCHIVER_WARNING_TABLE, { take: '100' }, landlord],
      // What the grid page sends by default (web/assets/grid-page.js: take=1000, the default window).
      ['ArchiverWarning grid default (take=1000)', ARCHIVER_WARNING_TABLE, { take: '1000' }, landlord],
      ['ArchiverWarning page, stageId=3', ARCHIVER_WARNING_TABLE, { take: '100', stageId: '3' }, landlord],
      ['ArchiverWarning page, sorted by durationMicroseconds', ARCHIVER_WARNING_TABLE, { take: '100', sortField: 'durationMicroseconds' }, landlord],
      // Windows of more than the 100,000 rows the statistics read: the full filtered count runs.
      ['ArchiverWarning page, last 24 h (total > 100,000)', ARCHIVER_WARNING_TABLE, () => ({ take: '100', from: hoursAgo(24) }), landlord],
      ['ArchiverWarning page, last 24 h, stageId=3', ARCHIVER_WARNING_TABLE, () => ({ take: '100', from: hoursAgo(24), stageId: '3' }), landlord],
      ['UserLogin page (take=100)', USER_LOGIN_TABLE, { take: '100' }, landlord],
      ['UserLogin grid default (take=1000)', USER_LOGIN_TABLE, { take: '1000' }, landlord],
      ['UserLogin page, tenant administrator', USER_LOGIN_TABLE, { take: '100' }, tenantPrincipal],
      ['UserLogin page, last 24 h (total > 100,000)', USER_LOGIN_TABLE, () => ({ take: '100', from: hoursAgo(24) }), landlord],
      ['UserLogin search=user-1234 (a user)', USER_LOGIN_TABLE, { take: '100', search: 'user-1234' }, landlord],
      ['UserLogin search=10.42. (address part)', USER_LOGIN_TABLE, { take: '100', search: '10.42.' }, landlord],
      ['UserLogin search=firefox (a quarter of the rows)', USER_LOGIN_TABLE, { take: '100', search: 'firefox' }, landlord],
      ['UserLogin search=mozilla (3 rows in 4)', USER_LOGIN_TABLE, { take: '100', search: 'mozilla' }, landlord],
      ['UserLogin search=did not match (failures)', USER_LOGIN_TABLE, { take: '100', search: 'did not match' }, landlord],
      ['UserLogin search=user-1233, tenant administrator', USER_LOGIN_TABLE, { take: '100', search: 'user-1233' }, tenantPrincipal],
    ];
    const path = (table, query) => `/api/${table.table}?${new URLSearchParams(typeof query === 'function' ? query() : query)}`;
    const read = async (table, query, principal, target = service) => {
      const start = performance.now();
      const res = await fetch(target.url + path(table, query), {
        // A browser's Accept-Encoding, as the pages send it.
        headers: { authorization: `Bearer ${principal.landlord ? token : tenantToken}`, 'accept-encoding': 'gzip, deflate, br, zstd' },
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`${path(table, query)}: ${res.status}`);
      return { ms: performance.now() - start, total: body.total };
    };

    const summary = [];
    let have = 0;
    for (const size of SIZES) {
      let t0 = performance.now();
      // Everything but the newest hour, then VACUUM ANALYZE; the newest hour last, not vacuumed.
      const hour = Math.round(PER_HOUR);
      await grow(pool, Math.max(have, 2 * hour), size);
      await pool.query(`DELETE FROM "ArchiverWarning" WHERE "CreatedDate" > now() - interval '2 hours'`);
      // UserLogin is append-only (contract 15): a fixture is trimmed as only a superuser can, triggers off.
      const cut = await pool.connect();
      try {
        await cut.query('BEGIN');
        await cut.query('SET LOCAL session_replication_role = replica');
        await cut.query(`DELETE FROM "UserLogin" WHERE "CreatedDate" > now() - interval '2 hours'`);
        await cut.query('COMMIT');
      } finally {
        cut.release();
      }
      await Promise.all([pool.query(`VACUUM ANALYZE "ArchiverWarning"`), pool.query(`VACUUM ANALYZE "UserLogin"`)]);
      console.log(`  vacuumed: ${((performance.now() - t0) / 1000).toFixed(0)} s from the start`);
      await grow(pool, 0, 2 * hour);
      await pool.query(`ANALYZE "ArchiverWarning"`);
      await pool.query(`ANALYZE "UserLogin"`);
      have = size;
      console.log(`${size.toLocaleString()} rows per table in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

      const written = new Date();
      for (const phase of ['newest hour not yet vacuumed', 'after autovacuum']) {
        if (phase.startsWith('after')) {
          // The migration AppendOnlyAutovacuum makes autovacuum visit these tables after 1000 new
          // rows; wait for it (it looks once a minute), or VACUUM if it did not come (settings reverted).
          const autovacuum = (await pool.query(`SHOW autovacuum`)).rows[0].autovacuum === 'on';
          const deadline = autovacuum ? Date.now() + 240_000 : 0;
          if (!autovacuum) console.log('autovacuum is off on this server: VACUUM instead (what autovacuum would do)');
          let came = false;
          while (Date.now() < deadline && !came) {
            await new Promise((r) => setTimeout(r, 5000));
            const { rows } = await pool.query(
              `SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname IN ('ArchiverWarning', 'UserLogin') AND last_autovacuum > $1`,
              [written],
            );
            came = rows[0].n === 2;
          }
          console.log(came ? 'autovacuum visited both tables' : 'autovacuum did not come within 4 minutes: VACUUM');
          if (!came) {
            await pool.query(`VACUUM ANALYZE "ArchiverWarning"`);
            await pool.query(`VACUUM ANALYZE "UserLogin"`);
          }
        }
        await signIn();
        // Each read from this build and (BENCH_BEFORE) from the other, the first of the pair alternating.
        const builds = before ? [['', service], [' [before]', before]] : [['', service]];
        const samples = new Map(targets.flatMap(([name]) => builds.map(([tag]) => [name + tag, []])));
        const totals = new Map();
        for (let round = -2; round < ROUNDS; round++) {
          const order = round % 2 === 0 ? targets : [...targets].reverse();
          for (const [name, table, query, principal] of order) {
            for (const [tag, target] of round % 2 === 0 ? builds : [...builds].reverse()) {
              const r = await read(table, query, principal, target);
              totals.set(name + tag, r.total);
              if (round >= 0) samples.get(name + tag).push(r.ms);
            }
          }
        }
        const rows = [...samples.keys()].map((name) => ({ read: name, total: totals.get(name), p50: ms(median(samples.get(name))), samples: samples.get(name).map(Math.round).join(' ') }));
        printTable(`${size.toLocaleString()} rows per table, ${phase}: HTTP p50 over ${ROUNDS} alternating rounds`, rows);
        for (const r of rows) summary.push({ size, phase, ...r });

        const plans = [];
        for (const [name, table, raw, principal] of targets) {
          const query = parseReadQuery(table, typeof raw === 'function' ? raw() : raw, Date.now(), undefined);
          plans.push(`### ${name}\n${await explainRead(engine, table, query, principal)}\n`);
        }
        const file = join(__dirname, `plans-${process.env.BENCH_LABEL ? `${process.env.BENCH_LABEL}-` : ''}${size}-${phase.startsWith('after') ? 'autovacuumed' : 'fresh'}.txt`);
        writeFileSync(file, `EXPLAIN (ANALYZE, BUFFERS), ${size.toLocaleString()} rows per table, ${phase}\n\n${plans.join('\n')}`);
        console.log(`plans: ${file}`);
      }
    }
    printTable('Summary', summary.map(({ samples, ...r }) => r));
  } finally {
    if (app) await app.close();
    await pool.end();
    if (service) await service.stop();
    if (before) await before.stop();
    if (process.env.BENCH_KEEP !== '1') await db.drop();
    else console.log(`kept ${db.name}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
