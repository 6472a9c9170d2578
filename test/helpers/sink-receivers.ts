import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually';
import { freePort } from './free-port';

/** How the HTTP receiver answers the next batches. */
export type ReceiverMode = 'ok' | 'error500' | 'hang' | 'close-mid-batch';

export interface ReceivedBatch {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  events: any[];
  /** Whether it was acknowledged with a 2xx. */
  acknowledged: boolean;
}

/**
 * A webhook receiver inside the test: records every POST, answers as `mode` says, and can be stopped
 * (connections refused) and started again on the same port, as a real receiver restarts.
 */
export class HttpReceiver {
  mode: ReceiverMode = 'ok';
  /** Real milliseconds each batch waits before its answer (a slow receiver, so a test can act mid-delivery). */
  delayMs = 0;
  readonly batches: ReceivedBatch[] = [];
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  /** Stops listening and cuts every open connection: the sink's next attempts are refused. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let received = 0;
    const mode = this.mode;
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
      received += (chunk as Buffer).length;
      if (mode === 'close-mid-batch' && received > 0) {
        req.socket.destroy();
        return;
      }
    }
    const body = Buffer.concat(chunks).toString('utf8');
    let events: any[] = [];
    try {
      events = JSON.parse(body) as any[];
    } catch {
      events = [];
    }
    if (mode === 'hang') {
      this.batches.push({ headers: req.headers, body, events, acknowledged: false });
      return; // never answers: the sink's 10 s deadline ends it
    }
    const acknowledged = mode === 'ok';
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    this.batches.push({ headers: req.headers, body, events, acknowledged });
    res.writeHead(acknowledged ? 200 : 500, { 'content-type': 'text/plain' }).end(acknowledged ? 'ok' : 'receiver failed');
  }

  /** Leaf indexes of every event received, in arrival order (tests are free to check HMACs with `verify`). */
  leafIndexes(onlyAcknowledged = false): number[] {
    return this.batches.filter((b) => !onlyAcknowledged || b.acknowledged).flatMap((b) => b.events.map((e) => e.unmapped?.leafIndex as number));
  }

  static verify(batch: ReceivedBatch, secret: string): boolean {
    return batch.headers['x-signature'] === `sha256=${createHmac('sha256', secret).update(batch.body).digest('hex')}`;
  }
}

/** Debian's rsyslogd; .ci/run installs rsyslog and rsyslog-gnutls. */
export const RSYSLOGD = '/usr/sbin/rsyslogd';

export interface RsyslogOptions {
  /** Listen with TLS using this certificate and key (files). */
  tls?: { certFile: string; keyFile: string; caFile: string };
}

/**
 * A real rsyslog started by the test with its own configuration: imtcp (octet-counted framing is
 * what imtcp reads by default when a frame starts with digits), optionally over TLS (gtls), writing
 * each received message raw (`%rawmsg%`) and its structured data to a file the test reads.
 */
export class Rsyslog {
  readonly dir = mkdtempSync(join(tmpdir(), 'tm-rsyslog-'));
  readonly output = join(this.dir, 'received.log');
  port = 0;
  private process: ChildProcess | null = null;

  constructor(private readonly options: RsyslogOptions = {}) {}

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const tls = this.options.tls;
    const config = [
      `global(workDirectory="${this.dir}" maxMessageSize="256k"${tls ? ` defaultNetstreamDriver="gtls" defaultNetstreamDriverCAFile="${tls.caFile}" defaultNetstreamDriverCertFile="${tls.certFile}" defaultNetstreamDriverKeyFile="${tls.keyFile}"` : ''})`,
      `module(load="imtcp" maxSessions="100"${tls ? ' streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon"' : ''})`,
      `template(name="raw" type="string" string="%msgid% %structured-data% %msg%\\n")`,
      `input(type="imtcp" port="${this.port}" address="127.0.0.1" ruleset="sink")`,
      `ruleset(name="sink") { action(type="omfile" file="${this.output}" template="raw" flushOnTXEnd="on" asyncWriting="off") }`,
    ].join('\n');
    const file = join(this.dir, 'rsyslog.conf');
    writeFileSync(file, config);
    const check = spawnSync(RSYSLOGD, ['-N1', '-f', file], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`rsyslog configuration refused: ${check.stderr}`);
    this.process = spawn(RSYSLOGD, ['-n', '-f', file, '-i', join(this.dir, 'rsyslog.pid')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    this.process.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    // Ready once it accepts connections.
    await eventually(
      () =>
        new Promise<boolean>((resolve) => {
          const s = new Socket();
          s.once('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
          s.connect(this.port, '127.0.0.1');
        }),
      20_000,
      50,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: rsyslogd did not listen (${stderr})`);
    });
  }

  /** Kills rsyslogd at once (SIGKILL): data it had not written is lost, as in a crash. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const p = this.process;
    this.process = null;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill(signal);
    });
  }

  /** Every received message: msgid, structured data, message. */
  lines(): string[] {
    if (!existsSync(this.output)) return [];
    return readFileSync(this.output, 'utf8').split('\n').filter((l) => l.length > 0);
  }

  /** The leaf index of each received message, in file order. */
  leafIndexes(): number[] {
    return this.lines()
      .map((line) => /index="(\d+)"/.exec(line)?.[1])
      .filter((v): v is string => v !== undefined)
      .map(Number);
  }
}

/**
 * Checks what a receiver got against the log's order: from `start`, no index ever jumps ahead of the
 * highest seen + 1 (a gap); an index at or below it is a resend (at-least-once), allowed. Returns the
 * jumps found and the distinct indexes.
 */
export function deliveryOrder(received: number[], start = 0): { jumps: Array<[number, number]>; distinct: number; high: number } {
  let high = start - 1;
  const jumps: Array<[number, number]> = [];
  for (const index of received) {
    if (index > high + 1) jumps.push([high, index]);
    if (index > high) high = index;
  }
  return { jumps, distinct: new Set(received).size, high };
}
