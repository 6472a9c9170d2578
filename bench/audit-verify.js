'use strict';
/**
 * `npm run audit:verify` on large logs (issue 19): does the verifier stream, i.e. do its time per leaf
 * and its memory stay flat as the log grows? A synthetic log of N leaves (UserLogin rows, a checkpoint
 * every 10,000 leaves, every row still there) is served by a small HTTP server in this process, the
 * routes answering as contract 15 says; each leaf is computed when asked, so the server holds only the
 * checkpoints. The verifier runs as its own process (node dist/audit-log/verify/main.js) under
 * /usr/bin/time, which reports its peak resident memory. Sizes alternate, three runs each; medians.
 * Run: npm run build && node bench/audit-verify.js [sizes, default 100000,400000]
 */
const { createServer } = require('node:http');
const { spawn } = require('node:child_process');
const { generateKeyPairSync } = require('node:crypto');
const { join } = require('node:path');
const dist = join(__dirname, '..', 'dist', 'audit-log');
const { canonicalRow, leafRecord, sha256 } = require(join(dist, 'canonical.js'));
const { CompactRange, consistencyProof, inclusionProof, leafHash } = require(join(dist, 'merkle.js'));
const { rawPublicKey, signCheckpoint, verifierKey } = require(join(dist, 'note.js'));

const SIZES = (process.argv[2] || '100000,400000').split(',').map(Number);
const RUNS = 3;
const EVERY = 10_000;
const ORIGIN = 'bench/audit';
const key = generateKeyPairSync('ed25519').privateKey;
const VKEY = verifierKey(ORIGIN, rawPublicKey(key));
const BASE = Date.parse('2026-01-01T00:00:00Z');

function leaf(i) {
  const date = `${new Date(BASE + i * 1000).toISOString().slice(0, 19)}.${String(i % 1e6).padStart(6, '0')}Z`;
  const row = {
    Id: String(i + 1), CreatedDate: date, CreatedUser: `user${i % 5000}`, UserRegistryId: String(i % 5000), TenantRegistryId: '1',
    AuthenticationTypeId: '1', Failed: i % 7 === 0 ? 't' : 'f', FailureTypeId: i % 7 === 0 ? '2' : null, FailureMessage: null,
    RemoteIp: '198.51.100.7', LocalIp: '10.0.0.1', UserAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36',
  };
  const canonical = canonicalRow('UserLogin', row);
  const rowHash = sha256(canonical);
  const record = leafRecord('UserLogin', row.Id, date, rowHash);
  return { leafIndex: i, table: 'UserLogin', rowId: row.Id, rowCreatedDate: date, rowHash: rowHash.toString('base64'), leafHash: leafHash(record).toString('base64'), canonical: canonical.toString('utf8') };
}

function buildCheckpoints(n) {
  const range = new CompactRange(0, []);
  const checkpoints = [];
  // Every perfect subtree, by level, for the proof routes (the verifier asks for a few proofs at the end).
  const levels = [];
  checkpoints.perfect = async (level, index) => levels[level][index];
  const add = () => {
    const root = range.root();
    checkpoints.push({ treeSize: range.size, rootHash: root.toString('base64'), createdDate: new Date().toISOString(), note: signCheckpoint(ORIGIN, range.size, root, key) });
  };
  add();
  for (let i = 0; i < n; i++) {
    range.append(Buffer.from(leaf(i).leafHash, 'base64'), (level, index, hash) => ((levels[level] ??= [])[index] = hash));
    if (range.size % EVERY === 0 || range.size === n) add();
  }
  return checkpoints;
}

function serve(n, checkpoints) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const q = (name) => Number(url.searchParams.get(name));
    let body;
    switch (url.pathname) {
      case '/api/Audit/PublicKey':
        body = { origin: ORIGIN, keyId: VKEY.split('+')[1], publicKey: rawPublicKey(key).toString('base64'), verifierKey: VKEY };
        break;
      case '/api/Audit/Checkpoint':
        body = checkpoints[checkpoints.length - 1];
        break;
      case '/api/Audit/Checkpoints':
        body = checkpoints.filter((c) => c.treeSize >= q('from')).slice(0, 1000);
        break;
      case '/api/Audit/RetentionRuns':
        body = [];
        break;
      case '/api/Audit/Consistency':
        body = { first: q('first'), second: q('second'), proof: (await consistencyProof(q('first'), q('second'), checkpoints.perfect)).map((h) => h.toString('base64')) };
        break;
      case '/api/Audit/Proof': {
        const index = Number(url.searchParams.get('id')) - 1;
        const l = leaf(index);
        const record = leafRecord('UserLogin', l.rowId, l.rowCreatedDate, Buffer.from(l.rowHash, 'base64')).toString('utf8');
        const auditPath = (await inclusionProof(index, q('treeSize'), checkpoints.perfect)).map((h) => h.toString('base64'));
        body = { leafIndex: index, treeSize: q('treeSize'), leafHash: l.leafHash, leafRecord: record, canonical: l.canonical, auditPath };
        break;
      }
      case '/api/Audit/Leaves': {
        body = [];
        for (let i = q('start'); i < Math.min(n, q('end'), q('start') + 10_000); i++) body.push(leaf(i));
        break;
      }
      default:
        res.writeHead(404).end();
        return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function verify(url) {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', 'TIME %e %M %U %S', process.execPath, join(dist, 'verify', 'main.js'), '--url', url, '--api-key', 'bench', '--verifier-key', VKEY], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('error', reject);
    child.once('close', (code) => {
      const m = /TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(err);
      if (code !== 0 || !m) return reject(new Error(`verifier failed (${code}): ${out}${err}`));
      resolve({ seconds: Number(m[1]), rssMb: Number(m[2]) / 1024, cpu: Number(m[3]) + Number(m[4]), summary: out.trim().split('\n').pop() });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const logs = [];
  for (const n of SIZES) {
    const checkpoints = buildCheckpoints(n);
    const server = await serve(n, checkpoints);
    logs.push({ n, server, url: `http://127.0.0.1:${server.address().port}`, runs: [] });
  }
  for (let r = 0; r < RUNS; r++) for (const log of logs) log.runs.push(await verify(log.url));
  console.log('| leaves | checkpoints | wall s (median of 3) | wall µs per leaf | verifier CPU µs per leaf | verifier peak RSS MB |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const log of logs) {
    const s = median(log.runs.map((x) => x.seconds));
    console.log(`| ${log.n} | ${log.runs[0].summary.match(/(\d+) checkpoints/)[1]} | ${s.toFixed(1)} | ${((s * 1e6) / log.n).toFixed(1)} | ${((median(log.runs.map((x) => x.cpu)) * 1e6) / log.n).toFixed(1)} | ${median(log.runs.map((x) => x.rssMb)).toFixed(0)} |`);
    log.server.close();
  }
  console.log('(wall time includes this process computing and serving every leaf; the CPU column is the verifier process alone)');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
