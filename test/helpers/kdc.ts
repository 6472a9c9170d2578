import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway MIT Kerberos realm on loopback: its own kdc.conf/krb5.conf in a temp dir, a KDC on a
 * free port, a keytab for HTTP/localhost and user principals with passwords, tickets obtained with
 * kinit into a DIR: credential-cache collection (one cache per principal).
 *
 * The GSSAPI library reads KRB5_CONFIG, KRB5_KTNAME and KRB5CCNAME from the process environment, so
 * `exportEnvironment()` must run before the kerberos module is first used; keep KDC tests in their own
 * test file (jest runs each file in its own worker).
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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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

export async function startKdc(realm = 'TM.TEST'): Promise<Kdc> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-kdc-'));
  const port = await freePort();
  const kdcConf = join(dir, 'kdc.conf');
  const krb5Conf = join(dir, 'krb5.conf');
  writeFileSync(
    kdcConf,
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
    krb5Conf,
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
  const env: Record<string, string> = {
    KRB5_CONFIG: krb5Conf,
    KRB5_KDC_PROFILE: kdcConf,
    KRB5_KTNAME: `FILE:${dir}/http.keytab`,
    KRB5CCNAME: `DIR:${dir}/ccache`,
    KRB5RCACHEDIR: dir,
  };
  run('mkdir', ['-p', join(dir, 'ccache')], env);
  run('kdb5_util', ['create', '-s', '-r', realm, '-P', 'master-password-for-tests'], env);
  run('kadmin.local', ['-r', realm, '-q', 'addprinc -randkey HTTP/localhost'], env);
  run('kadmin.local', ['-r', realm, '-q', `ktadd -k ${dir}/http.keytab HTTP/localhost`], env);

  const kdc: ChildProcess = spawn('krb5kdc', ['-n', '-r', realm], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  await waitForPort(port, Date.now() + 10_000);

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
      if (kdc.exitCode === null) {
        const exited = new Promise((resolve) => kdc.once('exit', resolve));
        kdc.kill('SIGTERM');
        await exited;
      }
      try {
        readFileSync(join(dir, 'kdc.log'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
