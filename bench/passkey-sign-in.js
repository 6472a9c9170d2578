'use strict';
/**
 * Passkey sign-in against password sign-in, in one run (issue 31): the compiled service (`npm start`'s
 * dist/main.js) on a fresh database; a passkey user whose credential is a P-256 key held here, and the
 * seeded Administrator with a password. Each target is N workers each signing in again and again for
 * a few seconds: a passkey sign-in is POST Passkey/Options then POST ByPasskey (the assertion signed
 * here over the fresh challenge: what an authenticator does); a password sign-in is one POST
 * ByUserNamePassword (the right password: Argon2). Both run the whole flow (throttle, user checks,
 * lockout count, UserLogin and UserSession rows, token, cookies). The targets alternate over rounds so
 * the shared machine's noise hits both alike; reported: sign-ins/s and service CPU ms per sign-in
 * (medians), and their ratios. 2 workers each: more password sign-ins of one account in flight than
 * PasswordAttempts + 1 would lock it (decision 0012).
 * Run: npm run build && node bench/passkey-sign-in.js
 * BENCH_ROOT=<dir holding dist/> runs another build (an earlier one, to compare in the same hour);
 * BENCH_PORT picks the port (another engineer's bench may hold the default).
 */
const { createHash, generateKeyPairSync, randomBytes, sign } = require('node:crypto');
const { Pool } = require('pg');
const { isoCBOR } = require('@simplewebauthn/server/helpers');
const lib = require('./lib/service');

const PORT = Number(process.env.BENCH_PORT || 5331);
const ORIGIN = `http://localhost:${PORT}`;
const ADMIN_PASSWORD = 'Bench-Adm1n-Password';
const WORKERS = 2;
/**
 * BENCH_ACCOUNTS=N: N passkey accounts and N password accounts (copies of the Administrator, same
 * password), WORKERS sign-ins in flight on each, so both targets can be driven to what the machine
 * gives without one account's in-flight lockout count (decision 0012) deciding the rate. Default 1.
 */
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS || 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const SECONDS = Number(process.env.BENCH_SECONDS || 4);

const sha256 = (data) => createHash('sha256').update(data).digest();
const b64u = (buffer) => Buffer.from(buffer).toString('base64url');

/** A software authenticator holding one discoverable P-256 credential (counter 0, as synced passkeys send). */
function authenticator() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = isoCBOR.encode(new Map([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x, 'base64url')], [-3, Buffer.from(jwk.y, 'base64url')]]));
  const credentialId = randomBytes(32);
  // rpIdHash, flags UP|UV, counter 0.
  const authData = Buffer.concat([sha256('localhost'), Buffer.from([0x05]), Buffer.alloc(4)]);
  return {
    credentialId,
    cosePublicKey: Buffer.from(cose),
    assert(challenge) {
      const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin: ORIGIN, crossOrigin: false }));
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), privateKey);
      const id = b64u(credentialId);
      return { id, rawId: id, type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authData), signature: b64u(signature) } };
    },
  };
}

async function post(url, path, body) {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json().catch(() => undefined);
  return { status: res.status, json };
}

async function passkeySignIn(url, device) {
  const options = await post(url, '/api/Authentication/Passkey/Options', {});
  if (options.status !== 200) throw new Error(`options: ${options.status}`);
  const res = await post(url, '/api/Authentication/ByPasskey', { challengeId: options.json.challengeId, response: device.assert(options.json.options.challenge) });
  if (res.status !== 200) throw new Error(`passkey sign-in: ${res.status} ${JSON.stringify(res.json)}`);
}

async function passwordSignIn(url, userName = 'Administrator') {
  const res = await post(url, '/api/Authentication/ByUserNamePassword', { userName, password: ADMIN_PASSWORD });
  if (res.status !== 200) throw new Error(`password sign-in: ${res.status}`);
}

/** WORKERS loops of `once` for `seconds`; sign-ins/s and service CPU ms per sign-in. */
async function measure(pid, once, seconds) {
  // `once(i)`: worker i signs in with account i % ACCOUNTS.
  const cpuBefore = lib.processCpuMs(pid);
  const start = performance.now();
  const end = start + seconds * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: WORKERS * ACCOUNTS }, async (_, worker) => {
      while (performance.now() < end) {
        await once(worker % ACCOUNTS);
        count++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  return { perSecond: count / elapsed, cpuMs: (lib.processCpuMs(pid) - cpuBefore) / count };
}

async function main() {
  const db = await lib.createDatabase('tm_bench_passkey');
  const service = await lib.startService(
    { ConnectionString: db.url, PasskeyRelyingPartyId: 'localhost', PasskeyOrigins: ORIGIN, SignInThrottle: '0' },
    PORT,
    ...(process.env.BENCH_ROOT ? [process.env.BENCH_ROOT] : []),
  );
  try {
    await lib.signInAdministrator(service.url, ADMIN_PASSWORD);
    const devices = Array.from({ length: ACCOUNTS }, () => authenticator());
    const passwordUsers = ['Administrator'];
    const pool = new Pool({ connectionString: db.url, max: 1 });
    const [{ RoleRegistryId: role }] = (await pool.query(`SELECT "RoleRegistryId" FROM "UserRegistry" WHERE "Name" = 'Administrator'`)).rows;
    for (const [i, device] of devices.entries()) {
      const [{ Id: user }] = (
        await pool.query(
          `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Active", "CreatedDate", "CreatedUser") VALUES ($1, $2, true, now(), 'bench') RETURNING "Id"`,
          [role, `bench-passkey-${i}`],
        )
      ).rows;
      await pool.query(
        `INSERT INTO "UserPasskey" ("UserRegistryId", "CredentialId", "PublicKey", "SignCount", "BackupEligible", "BackedUp", "Name", "CreatedDate")
         VALUES ($1, $2, $3, 0, false, false, 'bench', now())`,
        [user, device.credentialId, device.cosePublicKey],
      );
    }
    for (let i = 1; i < ACCOUNTS; i++) {
      // The Administrator's row under another name: the same password (its hash carries its own salt).
      await pool.query(
        `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordExpiryDate", "PasswordCreatedDate", "Active", "WirePasswordHash", "CreatedDate", "CreatedUser")
         SELECT "RoleRegistryId", $1, "Password", "PasswordExpiryDate", "PasswordCreatedDate", true, "WirePasswordHash", now(), 'bench' FROM "UserRegistry" WHERE "Name" = 'Administrator'`,
        [`bench-password-${i}`],
      );
      passwordUsers.push(`bench-password-${i}`);
    }
    await pool.end();

    const targets = [
      { name: 'password sign-in', once: (i) => passwordSignIn(service.url, passwordUsers[i]), samples: [] },
      { name: 'passkey sign-in', once: (i) => passkeySignIn(service.url, devices[i]), samples: [] },
    ];
    for (const target of targets) await measure(service.pid, target.once, 2); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) target.samples.push(await measure(service.pid, target.once, SECONDS));
    }
    const rows = targets.map((t) => ({
      target: t.name,
      perSecond: lib.median(t.samples.map((s) => s.perSecond)),
      cpuMs: lib.median(t.samples.map((s) => s.cpuMs)),
      samples: t.samples.map((s) => `${s.perSecond.toFixed(1)}/s ${s.cpuMs.toFixed(2)} ms`).join(', '),
    }));
    console.log(`| target | sign-ins/s | service CPU ms per sign-in | samples |\n|---|---|---|---|`);
    for (const r of rows) console.log(`| ${r.target} | ${r.perSecond.toFixed(1)} | ${r.cpuMs.toFixed(2)} | ${r.samples} |`);
    const [password, passkey] = rows;
    console.log(`\nbuild: ${process.env.BENCH_ROOT || 'this checkout'}; PostgreSQL (ConnectionString); ${ACCOUNTS} account(s) a target, ${WORKERS} sign-ins in flight on each`);
    console.log(`passkey/password sign-ins per second: ${(passkey.perSecond / password.perSecond).toFixed(2)}x; CPU per sign-in passkey/password: ${(passkey.cpuMs / password.cpuMs).toFixed(3)}`);
  } finally {
    await service.stop();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
