import { Logger } from '@nestjs/common';
import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';
import { messageOf } from '../common/errors';

/**
 * Serves ONE PGlite backend to many node-postgres connections, in this process, without a port.
 *
 * PGlite is a single PostgreSQL backend: one session. Every connection of the pool therefore shares
 * that session's state, and two things go wrong when they are multiplexed naively (as the
 * pglite-socket server does, message by message):
 *
 * - Named prepared statements live in the session. node-postgres remembers per connection which
 *   names it has prepared, so a second connection (or a new one after the pool closed an idle one)
 *   sends `Parse "tm-user-state"` again and the shared session answers `prepared statement
 *   "tm-user-state" already exists`, on every request from then on.
 * - A connection's messages between two Syncs (Parse, Bind, Execute, …) and its open transaction
 *   belong together; another connection's messages must not run in between.
 *
 * So this bridge gives each connection the session in turns: a connection that starts a message
 * cycle owns the backend until PostgreSQL reports ReadyForQuery with status idle (outside any
 * transaction); the others wait in arrival order. Prepared-statement and portal names are rewritten
 * per connection (`pglite_s<connection>_<n>`), so each connection has its own namespace, exactly as
 * with a real server. When a connection goes away (closed by the pool, destroyed, or cut here), its
 * open transaction is rolled back (never committed) and its statements are closed, as PostgreSQL
 * does when a backend's client disconnects.
 *
 * Longer than 400 lines on purpose: it is one protocol state machine (turns, name rewriting, clean-up
 * on disconnect) whose small classes (ReadyForQueryWatch, SessionStream, Session, PgliteBridge) only
 * make sense together; only PgliteBridge is exported.
 *
 * Session-level SQL state (SET, PREPARE/DEALLOCATE written as SQL, advisory locks, temporary tables,
 * LISTEN) remains shared by all connections; the service does not rely on any of it per connection.
 */

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** Refuse frontend messages larger than this (PostgreSQL's own limit for most messages is 1 GB). */
const MAX_MESSAGE = 256 * 1024 * 1024;

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
const cstring = (value: string) => Buffer.from(`${value}\0`, 'utf8');
const SYNC = message('S', Buffer.alloc(0));
const ROLLBACK = message('Q', cstring('ROLLBACK'));

class ProtocolViolation extends Error {}

/** Reads a NUL-terminated string at `offset`; returns it and the offset after its NUL. */
function readCString(buffer: Buffer, offset: number): [string, number] {
  const end = buffer.indexOf(0, offset);
  if (end < 0) throw new ProtocolViolation('unterminated string in a frontend message');
  return [buffer.toString('utf8', offset, end), end + 1];
}

/** Follows the backend's messages across output chunks and remembers the last ReadyForQuery status. */
class ReadyForQueryWatch {
  private header = Buffer.alloc(5);
  private headerFill = 0;
  private bodyLeft = 0;
  private bodyStart = false;
  /** 'I' idle, 'T' in a transaction, 'E' in a failed transaction; null until one is seen. */
  status: string | null = null;

  feed(data: Uint8Array): void {
    let i = 0;
    while (i < data.length) {
      if (this.bodyLeft === 0) {
        const take = Math.min(5 - this.headerFill, data.length - i);
        for (let k = 0; k < take; k++) this.header[this.headerFill + k] = data[i + k];
        this.headerFill += take;
        i += take;
        if (this.headerFill === 5) {
          this.bodyLeft = this.header.readInt32BE(1) - 4;
          this.bodyStart = true;
          this.headerFill = 0;
        }
        continue;
      }
      if (this.bodyStart && this.header[0] === 0x5a /* Z */) this.status = String.fromCharCode(data[i]);
      this.bodyStart = false;
      const take = Math.min(this.bodyLeft, data.length - i);
      this.bodyLeft -= take;
      i += take;
    }
  }
}

/** One node-postgres connection's end of the bridge: the socket-like stream pg reads and writes. */
class SessionStream extends Duplex {
  session: Session | null = null;
  private ended = false;

  constructor(private readonly bridge: PgliteBridge) {
    super({ allowHalfOpen: false });
  }

  // The parts of net.Socket that node-postgres calls.
  connect(): this {
    process.nextTick(() => {
      if (this.destroyed) return;
      try {
        this.session = this.bridge.open(this);
      } catch (error) {
        this.destroy(error as Error);
        return;
      }
      this.emit('connect');
    });
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  /** End of data towards node-postgres (the server closed the connection). */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.push(null);
  }

  override _read(): void {
    // Data is pushed as the backend produces it.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.session) this.bridge.receive(this.session, chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.session) this.bridge.release(this.session);
    this.finish();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.session) this.bridge.release(this.session);
    callback(error);
  }
}

/** The bridge's state of one connection. */
class Session {
  inbox: Buffer = Buffer.alloc(0);
  started = false;
  /** The client went away; its transaction and statements still have to be cleaned up. */
  closed = false;
  cleaned = false;
  queued = false;
  private readonly statements = new Map<string, string>();
  private readonly portals = new Map<string, string>();
  private counter = 0;

  constructor(
    readonly id: number,
    readonly stream: SessionStream,
  ) {}

  statement(name: string): string {
    if (name === '') return '';
    let backend = this.statements.get(name);
    if (!backend) this.statements.set(name, (backend = `pglite_s${this.id}_${++this.counter}`));
    return backend;
  }

  forgetStatement(name: string): void {
    this.statements.delete(name);
  }

  portal(name: string): string {
    if (name === '') return '';
    let backend = this.portals.get(name);
    if (!backend) this.portals.set(name, (backend = `pglite_p${this.id}_${++this.counter}`));
    return backend;
  }

  /** Portals end with their transaction. */
  transactionEnded(): void {
    this.portals.clear();
  }

  backendStatements(): string[] {
    return [...this.statements.values()];
  }

  send(data: Uint8Array): void {
    if (!this.closed && !this.stream.destroyed) this.stream.push(Buffer.from(data));
  }

  /** Closes the connection from the database side. */
  hangUp(): void {
    this.stream.finish();
    this.stream.destroy();
  }
}

/** Frontend messages taken from a session's inbox for one turn. */
interface Batch {
  bytes: Buffer;
  /** The client sent Terminate. */
  terminate: boolean;
}

export class PgliteBridge {
  private readonly logger = new Logger('EmbeddedPostgres');
  private readonly sessions = new Set<Session>();
  private readonly waiting: Session[] = [];
  /** The connection whose message cycle or transaction is in progress on the backend. */
  private owner: Session | null = null;
  private running: Promise<void> | null = null;
  private nextId = 1;
  private stopping = false;

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections = 64,
  ) {}

  /** The `stream` option of node-postgres: each call is a new connection to the embedded backend. */
  readonly stream = (): Duplex => new SessionStream(this);

  /** Connections currently open (for tests and diagnostics). */
  get connections(): number {
    return [...this.sessions].filter((s) => !s.closed).length;
  }

  open(stream: SessionStream): Session {
    if (this.stopping) throw new Error('the embedded database is stopping');
    if (this.connections >= this.maxConnections) throw new Error('too many connections to the embedded database');
    const session = new Session(this.nextId++, stream);
    this.sessions.add(session);
    return session;
  }

  receive(session: Session, chunk: Buffer): void {
    if (session.closed) return;
    session.inbox = session.inbox.length === 0 ? chunk : Buffer.concat([session.inbox, chunk]);
    this.schedule(session);
  }

  /** The client side closed or was destroyed. */
  release(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    session.inbox = Buffer.alloc(0);
    this.schedule(session);
  }

  /** Cuts every connection from the database side, as a server restart would. */
  disconnectAll(): void {
    for (const session of this.sessions) if (!session.closed) session.hangUp();
  }

  /** Cuts every connection and waits until the backend has finished its last turn. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.disconnectAll();
    while (this.running) await this.running;
  }

  private schedule(session: Session): void {
    if (session !== this.owner && !session.queued) {
      session.queued = true;
      this.waiting.push(session);
    }
    this.running ??= this.run().finally(() => {
      this.running = null;
      // Work that arrived while the last turn finished.
      if (this.next(false)) this.schedule(this.next(false)!);
    });
  }

  private hasWork(session: Session): boolean {
    if (session.closed) return !session.cleaned;
    return this.completeLength(session) > 0;
  }

  /** The next session to take a turn: the owner if it holds the backend, otherwise the first waiting. */
  private next(take = true): Session | null {
    if (this.owner) return this.hasWork(this.owner) ? this.owner : null;
    while (this.waiting.length > 0) {
      const session = this.waiting[0];
      if (this.hasWork(session)) {
        if (take) {
          this.waiting.shift();
          session.queued = false;
        }
        return session;
      }
      this.waiting.shift();
      session.queued = false;
    }
    return null;
  }

  private async run(): Promise<void> {
    for (let session = this.next(); session; session = this.next()) {
      try {
        if (session.closed) await this.cleanUp(session);
        else await this.turn(session);
      } catch (error) {
        // A malformed message, or the backend itself failed: this connection cannot go on, the others
        // may. Its clean-up (rolling back what it left open) still runs next, unless that is what failed.
        this.logger.error(`embedded database connection ${session.id} failed: ${messageOf(error)}`);
        const cleanUpFailed = session.cleaned;
        session.closed = true;
        session.stream.destroy(error instanceof Error ? error : new Error(String(error)));
        if (cleanUpFailed) {
          if (this.owner === session) this.owner = null;
          this.sessions.delete(session);
        } else if (this.owner !== session && !session.queued) {
          session.queued = true;
          this.waiting.push(session);
        }
      }
      // A connection that released the backend with more messages waiting goes to the back of the line.
      if (!session.closed && session !== this.owner && this.hasWork(session)) {
        session.queued = true;
        this.waiting.push(session);
      }
    }
  }

  /** Length of the complete messages at the head of the inbox that one turn may run (0: none yet). */
  private completeLength(session: Session): number {
    const inbox = session.inbox;
    if (!session.started) {
      // Startup-phase messages have no type byte: length, then a request code.
      if (inbox.length < 8) return 0;
      const length = inbox.readInt32BE(0);
      if (length < 8 || length > 10_000) return inbox.length; // reported as a violation by the turn
      return inbox.length >= length ? length : 0;
    }
    let offset = 0;
    while (inbox.length - offset >= 5) {
      const length = inbox.readInt32BE(offset + 1);
      if (length < 4 || length > MAX_MESSAGE) return inbox.length; // reported as a violation by the turn
      if (inbox.length - offset < 1 + length) break;
      offset += 1 + length;
      if (inbox[offset - 1 - length] === 0x58 /* X */) break;
    }
    return offset;
  }

  private async turn(session: Session): Promise<void> {
    if (!session.started) return this.startup(session);
    const batch = this.takeBatch(session);
    if (batch.bytes.length > 0) {
      this.owner = session;
      const watch = new ReadyForQueryWatch();
      await this.execute(batch.bytes, (data) => {
        watch.feed(data);
        session.send(data);
      });
      if (watch.status === 'I') {
        session.transactionEnded();
        this.owner = null;
      }
    }
    if (batch.terminate) {
      this.release(session);
      session.hangUp();
    }
  }

  /** SSL and GSS encryption requests are declined; a cancel request is dropped; startup goes to PGlite. */
  private async startup(session: Session): Promise<void> {
    const inbox = session.inbox;
    const length = inbox.readInt32BE(0);
    const code = inbox.readInt32BE(4);
    if (length === 8 && (code === SSL_REQUEST || code === GSSENC_REQUEST)) {
      session.inbox = inbox.subarray(8);
      session.send(Buffer.from('N'));
      return;
    }
    if (length === 16 && code === CANCEL_REQUEST) {
      // PGlite has no second backend to cancel from; a cancel connection ends after its request.
      this.release(session);
      session.hangUp();
      return;
    }
    if (code !== PROTOCOL_3 || length < 8 || length > 10_000) throw new ProtocolViolation('unsupported startup message');
    session.inbox = inbox.subarray(length);
    session.started = true;
    this.owner = session;
    const watch = new ReadyForQueryWatch();
    await this.execute(Buffer.from(inbox.subarray(0, length)), (data) => {
      watch.feed(data);
      session.send(data);
    });
    if (watch.status !== 'T' && watch.status !== 'E') this.owner = null;
  }

  /** Takes the complete messages of the inbox, with statement and portal names rewritten per connection. */
  private takeBatch(session: Session): Batch {
    const end = this.completeLength(session);
    const inbox = session.inbox;
    session.inbox = inbox.subarray(end);
    const parts: Buffer[] = [];
    let terminate = false;
    for (let offset = 0; offset < end; ) {
      const type = String.fromCharCode(inbox[offset]);
      const length = inbox.readInt32BE(offset + 1);
      if (length < 4 || length > MAX_MESSAGE || offset + 1 + length > end) throw new ProtocolViolation('malformed frontend message');
      const whole = inbox.subarray(offset, offset + 1 + length);
      const body = whole.subarray(5);
      offset += 1 + length;
      if (type === 'X') {
        terminate = true;
        break;
      }
      parts.push(this.rewrite(session, type, body) ?? whole);
    }
    return { bytes: Buffer.concat(parts), terminate };
  }

  /** The message with this connection's names, or null when it names nothing. */
  private rewrite(session: Session, type: string, body: Buffer): Buffer | null {
    switch (type) {
      case 'P': {
        // Parse: statement name, query, parameter types.
        const [name, rest] = readCString(body, 0);
        return message('P', Buffer.concat([cstring(session.statement(name)), body.subarray(rest)]));
      }
      case 'B': {
        // Bind: portal name, statement name, the rest.
        const [portal, afterPortal] = readCString(body, 0);
        const [statement, rest] = readCString(body, afterPortal);
        return message('B', Buffer.concat([cstring(session.portal(portal)), cstring(session.statement(statement)), body.subarray(rest)]));
      }
      case 'E': {
        // Execute: portal name, row limit.
        const [portal, rest] = readCString(body, 0);
        return message('E', Buffer.concat([cstring(session.portal(portal)), body.subarray(rest)]));
      }
      case 'D':
      case 'C': {
        // Describe / Close: 'S' statement or 'P' portal, then its name.
        const kind = String.fromCharCode(body[0]);
        const [name] = readCString(body, 1);
        const backend = kind === 'S' ? session.statement(name) : session.portal(name);
        if (type === 'C' && kind === 'S') session.forgetStatement(name);
        return message(type, Buffer.concat([body.subarray(0, 1), cstring(backend)]));
      }
      default:
        return null;
    }
  }

  /**
   * After a connection went away: roll back what it left open (a transaction, or a message cycle
   * without its Sync, whose writes must not be committed) and close its prepared statements.
   */
  private async cleanUp(session: Session): Promise<void> {
    session.cleaned = true;
    this.sessions.delete(session);
    if (this.stopping) return;
    const parts: Buffer[] = [];
    if (this.owner === session) {
      // ROLLBACK ends an open or failed transaction block, and aborts the implicit transaction of an
      // unfinished message cycle; if the backend is skipping messages after an error it ignores that
      // ROLLBACK, so a Sync ends the cycle and a second ROLLBACK ends any block it leaves failed.
      parts.push(ROLLBACK, SYNC, ROLLBACK);
    }
    const statements = session.backendStatements();
    for (const name of statements) parts.push(message('C', Buffer.concat([Buffer.from('S'), cstring(name)])));
    if (statements.length > 0) parts.push(SYNC);
    if (parts.length === 0) return;
    const watch = new ReadyForQueryWatch();
    await this.execute(Buffer.concat(parts), (data) => watch.feed(data));
    if (this.owner === session) this.owner = null;
    if (watch.status !== 'I') this.logger.error(`embedded database: connection ${session.id} left the session in state ${watch.status}`);
  }

  private async execute(bytes: Uint8Array, onData: (data: Uint8Array) => void): Promise<void> {
    await this.db.runExclusive(() => this.db.execProtocolRawStream(bytes, { onRawData: onData }));
  }
}
