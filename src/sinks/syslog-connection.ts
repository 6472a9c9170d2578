import { connect as tcpConnect, isIP, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** A connection or a write not done within this fails. */
export const SYSLOG_DEADLINE_MS = 10_000;
/** After a connection error, what was written this long before it is sent again (contract 19). */
export const RESEND_WINDOW_MS = 5_000;

export interface SyslogTarget {
  host: string;
  port: number;
  tls: boolean;
  /** syslog+tls: the client key (PEM, its certificate chain after it) and extra trusted CAs. */
  clientPem?: string;
  ca?: string;
}

/**
 * One TCP or TLS connection to a syslog receiver. TCP has no acknowledgement, so a write counts once
 * the kernel took it (the write callback), and the connection keeps the first leaf and the time of
 * each batch written in the last seconds: when the connection breaks, `brokenAt` and `resendFrom`
 * say from which leaf to send again (everything written in the RESEND_WINDOW_MS before the break), so
 * a receiver that died with unread data still gets every event. The idle connection is read (and
 * its bytes dropped), so a receiver that closes or resets it is noticed at once, not at the next write.
 */
export class SyslogConnection {
  private socket: Socket | null = null;
  private written: { first: number; at: number }[] = [];
  /** Real time (ms) the connection was seen broken; null while it is fine or was never opened. */
  brokenAt: number | null = null;
  lastError: string | null = null;

  constructor(private readonly target: SyslogTarget) {}

  get connected(): boolean {
    return this.socket !== null && this.brokenAt === null;
  }

  async connect(): Promise<void> {
    this.close();
    this.brokenAt = null;
    const { host, port } = this.target;
    const socket = await new Promise<Socket>((resolve, reject) => {
      const options = this.target.tls
        ? {
            host,
            port,
            ...(isIP(host) ? {} : { servername: host }),
            ...(this.target.clientPem ? { key: this.target.clientPem, cert: this.target.clientPem } : {}),
            ...(this.target.ca ? { ca: this.target.ca } : {}),
          }
        : { host, port };
      const s = this.target.tls ? tlsConnect(options) : tcpConnect(options);
      const timer = setTimeout(() => s.destroy(new Error(`no connection within ${SYSLOG_DEADLINE_MS / 1000} s`)), SYSLOG_DEADLINE_MS);
      s.once(this.target.tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    const broken = (reason: string) => {
      if (this.socket !== socket) return;
      if (this.brokenAt === null) {
        this.brokenAt = Date.now();
        this.lastError = reason;
      }
    };
    socket.on('data', () => undefined);
    socket.on('end', () => broken('the receiver closed the connection'));
    socket.on('close', () => broken('the connection closed'));
    socket.on('error', (error) => broken(error.message));
    this.socket = socket;
  }

  /** Writes one batch (frames of leaves first…), resolved once the kernel took it all. */
  write(first: number, frames: Buffer): Promise<void> {
    const socket = this.socket;
    if (!socket || this.brokenAt !== null) return Promise.reject(new Error(this.lastError ?? 'not connected'));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new Error(`the receiver took nothing for ${SYSLOG_DEADLINE_MS / 1000} s`);
        socket.destroy(error);
        reject(error);
      }, SYSLOG_DEADLINE_MS);
      socket.write(frames, (error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else {
          const now = Date.now();
          this.written.push({ first, at: now });
          // Only the window is kept: memory stays bounded by the batches of a few seconds.
          while (this.written.length > 0 && this.written[0].at < now - 2 * RESEND_WINDOW_MS) this.written.shift();
          resolve();
        }
      });
    });
  }

  /** After a break: the first leaf written within RESEND_WINDOW_MS before it (null: nothing to send again). */
  resendFrom(): number | null {
    if (this.brokenAt === null) return null;
    const since = this.brokenAt - RESEND_WINDOW_MS;
    const recent = this.written.filter((w) => w.at >= since);
    return recent.length === 0 ? null : Math.min(...recent.map((w) => w.first));
  }

  close(): void {
    const socket = this.socket;
    this.socket = null;
    this.written = [];
    socket?.destroy();
  }
}
