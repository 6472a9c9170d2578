import { PGlite } from '@electric-sql/pglite';
import { Pool, Client } from 'pg';
import { PgliteBridge } from './src/database/pglite-bridge';
(async () => {
  const db = await PGlite.create();
  const bridge = new PgliteBridge(db);
  const cfg = { connectionString: 'postgres://postgres@localhost/postgres', stream: bridge.stream } as any;
  const clients: Client[] = [];
  for (let i = 0; i < 4; i++) { const c = new Client(cfg); await c.connect(); clients.push(c); }
  // named statements in each client
  for (const c of clients) { const r = await c.query({ name: 'same', text: 'SELECT $1::int + 1 AS n', values: [1] }); if (r.rows[0].n !== 2) throw new Error('bad'); }
  let wrong = 0, errors = 0, ok = 0;
  await Promise.all(clients.map(async (c, idx) => { for (let i = 0; i < 200; i++) { try { const params = Array.from({ length: idx + 1 }, (_, k) => `T${idx}-${k}`); const sel = params.map((_, k) => `$${k + 1}::text AS p${k}`).join(', '); const r = await c.query({ name: i % 2 ? 'q' + idx : undefined, text: `SELECT ${sel}, 'T${idx}' AS tag`, values: params }); if (r.rows[0].p0 !== `T${idx}-0` || r.rows[0].tag !== `T${idx}`) wrong++; else ok++; } catch (e) { errors++; console.log((e as Error).message); } } }));
  console.log({ ok, wrong, errors });
  // transaction isolation of turns: c0 in tx, c1 queries wait
  await clients[0].query('CREATE TABLE t (x int)');
  await clients[0].query('BEGIN');
  await clients[0].query('INSERT INTO t VALUES (1)');
  let c1done = false;
  const p = clients[1].query('SELECT count(*)::int AS n FROM t').then((r) => { c1done = true; return r.rows[0].n; });
  await new Promise((r) => setTimeout(r, 100));
  console.log('c1 waited during tx:', !c1done);
  await clients[0].query('ROLLBACK');
  console.log('c1 saw', await p);
  // killed mid-transaction: rolled back
  await clients[2].query('BEGIN');
  await clients[2].query('INSERT INTO t VALUES (2)');
  (clients[2] as any).on('error', () => undefined);
  (clients[2] as any).connection.stream.destroy();
  console.log('after kill in tx', (await clients[3].query('SELECT count(*)::int AS n FROM t')).rows[0].n);
  // killed mid extended cycle (Parse/Bind/Execute written without Sync)
  const raw = new Client(cfg); await raw.connect(); raw.on('error', () => undefined);
  const con = (raw as any).connection;
  con.parse({ text: 'INSERT INTO t VALUES (3)', name: '' }); con.bind({}); con.execute({}); con.flush();
  await new Promise((r) => setTimeout(r, 100));
  con.stream.destroy();
  console.log('after kill mid-cycle', (await clients[3].query('SELECT count(*)::int AS n FROM t')).rows[0].n);
  // killed after an error mid-cycle inside explicit tx
  const raw2 = new Client(cfg); await raw2.connect(); raw2.on('error', () => undefined);
  await raw2.query('BEGIN'); await raw2.query('INSERT INTO t VALUES (4)');
  const con2 = (raw2 as any).connection;
  con2.parse({ text: 'SELECT 1/0', name: '' }); con2.bind({}); con2.execute({}); con2.flush();
  await new Promise((r) => setTimeout(r, 100));
  con2.stream.destroy();
  console.log('after kill errored tx', (await clients[3].query('SELECT count(*)::int AS n FROM t')).rows[0].n, 'statement still there for c3?', (await clients[3].query({ name: 'same', text: 'SELECT $1::int + 1 AS n', values: [5] })).rows[0].n);
  // pool: idle closing and reconnecting with a named statement
  const pool = new Pool({ ...cfg, max: 3, idleTimeoutMillis: 50 });
  for (let round = 0; round < 3; round++) {
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => pool.query({ name: 'tm-user-state', text: 'SELECT $1::int AS n', values: [i] })));
    console.log('round', round, rs.every((r, i) => r.rows[0].n === i), 'open', bridge.connections);
    await new Promise((r) => setTimeout(r, 200));
  }
  pool.on('error', () => undefined); for (const c of clients) c.on('error', () => undefined);
  bridge.disconnectAll();
  await new Promise((r) => setTimeout(r, 50));
  const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => pool.query({ name: 'tm-user-state', text: 'SELECT $1::int AS n', values: [i] })));
  { const c = new Client(cfg); await c.connect(); console.log('prepared', (await c.query('SELECT name FROM pg_prepared_statements ORDER BY 1')).rows.map((r) => r.name).join(',')); await c.end(); }
  console.log('after disconnectAll', rs.every((r, i) => r.rows[0].n === i));
  await pool.end();
  await bridge.stop();
  await db.close();
  console.log('done');
})().catch((e) => { console.error('FAIL', e); process.exit(1); });
