import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * A throwaway MIT Kerberos realm on loopback: its own kdc.conf/krb5.conf in a temp dir, a KDC on a
 * free port, a keytab for HTTP/localhost and user principals with passwords, tickets obtained with
 * kinit into a DIR: credential-cache collection (one cache per principal).
 *
 * The GSSAPI library reads KRB5_CONFIG, KRB5_KTNAME and KRB5CCNAME from the process environment, so
 * `exportEnvironment()` must run before the kerberos module is first used.
 *
 * One realm serves every test file of a Jest process (`--runInBand` runs them all in one): the
 * kerberos package is loaded once per process and GSSAPI keeps the configuration, KDC address and
 * credential-cache paths it first saw. A second file that made a fresh realm in a fresh directory
 * left the library talking to the first file's stopped KDC and looking in its deleted cache
 * ("Can't find client principal … in cache collection", then handshakes hanging to the test
 * timeout). So the realm lives in a directory named after the process, later files reuse it, and a
 * watcher ends its KDC within a second of the test process exiting. Each file uses principal names
 * of its own.
 */
export interface Kdc {
  realm: string;
  dir: string;
  env: Record<string, string>;
  /** Creates a principal with a password and obtains its ticket-granting ticket. */
  addUser(principal: string, password: string): void;
  exportEnvironment(): void;
  stop(): Promise<void>;
}

function run(command: string, args: string[], env: Record<string, string>, input?: string): void {
  execFileSync(command, args, { env: { ...process.env, ...env }, input, stdio: ['pipe', 'ignore', 'pipe'] });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  const net = await import('node:net');
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the KDC did not start');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startKdc(realm = 'TM.TEST'): Promise<Kdc> {
  const dir = join(tmpdir(), `tm-kdc-${process.pid}`);
  const state = join(dir, 'kdc.json');
  const env: Record<string, string> = {
    KRB5_CONFIG: join(dir, 'krb5.conf'),
    KRB5_KDC_PROFILE: join(dir, 'kdc.conf'),
    KRB5_KTNAME: `FILE:${dir}/http.keytab`,
    KRB5CCNAME: `DIR:${dir}/ccache`,
    KRB5RCACHEDIR: dir,
  };
  const running = existsSync(state) ? (JSON.parse(readFileSync(state, 'utf8')) as { realm: string; watcher: number }) : null;
  if (!running || running.realm !== realm || !alive(running.watcher)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'ccache'), { recursive: true });
    const watcher = await createRealm(dir, realm, env);
    writeFileSync(state, JSON.stringify({ realm, watcher }));
  }

  return {
    realm,
    dir,
    env,
    addUser(principal: string, password: string) {
      run('kadmin.local', ['-r', realm, '-q', `addprinc -pw ${password} ${principal}`], env);
      // Each principal gets its own cache in the DIR: collection; kinit reads the password from stdin.
      run('kinit', [`${principal}@${realm}`], env, `${password}\n`);
    },
    exportEnvironment() {
      // Jest gives each test file a copy of process.env, which native code never sees; loadEnvFile
      // writes the real environment of this worker process (setenv), where GSSAPI reads it.
      const file = join(dir, 'kerberos.env');
      writeFileSync(file, Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
      (process as unknown as { loadEnvFile(path: string): void }).loadEnvFile(file);
      Object.assign(process.env, env);
    },
    async stop() {
      // The realm outlives the file on purpose (see above); its watcher ends it with the process.
    },
  };
}

/**
 * Writes the realm's configuration, creates its database and service key, and starts its KDC under a
 * shell that ends it once this process is gone. Returns the watcher's pid.
 */
async function createRealm(dir: string, realm: string, env: Record<string, string>): Promise<number> {
  const port = await freePort();
  writeFileSync(
    env.KRB5_KDC_PROFILE,
    `[kdcdefaults]
 kdc_ports = ${port}
 kdc_tcp_ports = ${port}
[realms]
 ${realm} = {
  database_name = ${dir}/principal
  key_stash_file = ${dir}/stash
  acl_file = ${dir}/kadm5.acl
  max_life = 10h
  supported_enctypes = aes256-cts-hmac-sha1-96:normal
 }
[logging]
 kdc = FILE:${dir}/kdc.log
`,
  );
  writeFileSync(join(dir, 'kadm5.acl'), '');
  writeFileSync(
    env.KRB5_CONFIG,
    `[libdefaults]
 default_realm = ${realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 ignore_acceptor_hostname = true
[realms]
 ${realm} = {
  kdc = 127.0.0.1:${port}
 }
[domain_realm]
 localhost = ${realm}
`,
  );
  run('kdb5_util', ['create', '-s', '-r', realm, '-P', 'master-password-for-tests'], env);
  run('kadmin.local', ['-r', realm, '-q', 'addprinc -randkey HTTP/localhost'], env);
  run('kadmin.local', ['-r', realm, '-q', `ktadd -k ${dir}/http.keytab HTTP/localhost`], env);

  const script = `krb5kdc -n -r "$1" & kdc=$!; while kill -0 "$2" 2>/dev/null && kill -0 $kdc 2>/dev/null; do sleep 1; done; kill $kdc 2>/dev/null; rm -rf "$3"`;
  const watcher = spawn('sh', ['-c', script, 'kdc-watcher', realm, String(process.pid), dir], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
    detached: true,
  });
  watcher.unref();
  await waitForPort(port, Date.now() + 10_000);
  return watcher.pid as number;
}
