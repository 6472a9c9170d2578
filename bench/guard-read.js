'use strict';
/**
 * Statements per second of the guard's per-request read in PostgreSQL alone (issue 13): the form before
 * contract 14 (users only) against the current one (users and the batch's open sessions, one statement),
 * each with 8 clients and batches of BATCH session ids (default 15, what 50 connections give), in
 * alternating 4 s rounds after a warm-up. The current statement is read from
 * src/users/user-registry.repository.ts, so this measures what the service runs.
 * Run: npm run build && node bench/guard-read.js
 */
const { randomUUID } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Pool } = require('pg');
const lib = require('./lib/service');

const BEFORE = `
  SELECT coalesce(json_agg(x), '[]')::text AS rows FROM (
    SELECT u."Id" AS id, u."Name" AS name, u."Active" AS active, u."Deleted" AS deleted,
           u."PasswordLocked" AS "passwordLocked",
           (extract(epoch FROM u."TokensValidFrom") * 1000)::float8 AS "tokensValidFrom",
           t."Id" AS "tenantRegistryId", t."Name" AS "tenantName", t."Active" AS "tenantActive", t."Landlord" AS landlord,
           r."Active" AS "roleActive", array_remove(array_agg(p."PermissionSpecificationId"), NULL) AS permissions
      FROM "UserRegistry" u
      JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId"
      JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"
      LEFT JOIN "RoleRegistryPermission" p ON p."RoleRegistryId" = r."Id"
     WHERE u."Id" = ANY($1::int[])
     GROUP BY u."Id", r."Id", t."Id") x`;
const AFTER = readFileSync(join(__dirname, '..', 'src', 'users', 'user-registry.repository.ts'), 'utf8').match(/const GUARD_READ = `([\s\S]*?)`;/)[1];
const CLIENTS = 8;
const BATCH = Number(process.env.BATCH ?? 15);

async function main() {
  const db = await lib.createDatabase('tm_bench_guard_read');
  try {
    // The service migrates and seeds the database (and signs the Administrator in once).
    const service = await lib.startService({ ConnectionString: db.url }, 5331);
    await lib.signInAdministrator(service.url);
    await service.stop();
    const pool = new Pool({ connectionString: db.url, max: CLIENTS });
    const sessionIds = [];
    for (let i = 0; i < 200; i++) {
      const id = randomUUID();
      sessionIds.push(id);
      await pool.query(
        `INSERT INTO "UserSession" ("Id", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "CreatedDate", "LastSeenDate")
         VALUES ($1, 1, 1, 1, now(), now())`,
        [id],
      );
    }
    const rate = async (name, text, values, ms) => {
      let done = 0;
      const end = Date.now() + ms;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (Date.now() < end) {
            await pool.query({ name, text, values });
            done++;
          }
        }),
      );
      return done / (ms / 1000);
    };
    const batchOf = (round) => sessionIds.slice((round * 10) % 180, ((round * 10) % 180) + BATCH);
    await rate('before', BEFORE, [[1]], 1000);
    await rate('after', AFTER, [[1], batchOf(0)], 1000);
    const results = { before: [], after: [] };
    for (let round = 0; round < 6; round++) {
      results.before.push(await rate('before', BEFORE, [[1]], 4000));
      results.after.push(await rate('after', AFTER, [[1], batchOf(round)], 4000));
    }
    lib.printTable(`Guard read, statements/s, ${CLIENTS} clients, ${BATCH} session ids per batch (6 alternating 4 s rounds)`, [
      { statement: 'users only (before contract 14)', median: Math.round(lib.median(results.before)), samples: results.before.map(Math.round).join(' ') },
      { statement: 'users + open sessions (now)', median: Math.round(lib.median(results.after)), samples: results.after.map(Math.round).join(' ') },
    ]);
    await pool.end();
  } finally {
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
