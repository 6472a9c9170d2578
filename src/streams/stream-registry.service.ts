import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ActiveApiKeys } from '../api-keys/active-api-keys';
import { apiKeyHash } from '../api-keys/api-key.format';
import type { Principal } from '../access/principal';
import { mayAuthenticate, UserAndSession, UserState, UserStateReader } from '../guard/user-state.reader';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SessionEndedMessage, SessionRevocation } from '../session-store/session-revocation.service';
import { Audience, audienceOf, mayReceive, scopeChangeOf, StreamScope } from './stream-scope';

/** The bus channels a client can follow as Server-Sent Events (contract 11). */
export type StreamChannel = typeof CHANNELS.watcher | typeof CHANNELS.serviceChange;


interface OpenStream {
  id: number;
  channel: StreamChannel;
  userRegistryId: number;
  /** Start of the browser or bearer session; null for an API key. */
  sessionStartMs: number | null;
  /** The UserSession of a JWT stream (its `sid`); null for an API key. */
  sessionId: string | null;
  /** SHA-256 of the API key that opened it; null for a JWT session. */
  apiKeyHash: string | null;
  display: string;
  /** What its caller may read; refreshed at every re-check (a role or tenant can change meanwhile). */
  scope: StreamScope;
  /**
   * Frames held while the scope is read again after a change that may alter it (the caller's user,
   * role or tenant changed): judged by the scope read after the change, never the one before. Null
   * when no read is under way.
   */
  held: Array<{ audience: Audience; frame: string }> | null;
  /** The latest scope read asked for; an earlier one that ends after it leaves the held frames to it. */
  scopeRead: object | null;
  res: Response;
}

/**
 * Bytes written to a stream that its client has not taken yet (Node buffers them in memory); past this
 * the client is not reading (stalled, or far too slow) and its stream is cut, so a client that never
 * reads cannot make the service hold every later message for it (contract 13, slow clients).
 */
export const STREAM_BACKLOG_BYTES = 1024 * 1024;

/** Frames a stream may hold while its scope is read; past this the stream is closed (a client reconnects). */
const HELD_FRAMES_LIMIT = 1000;

/**
 * The open Watcher and ServiceChange streams of this node. Events of the bus are relayed to them as
 * `data:` lines. A stream ends with its session: at once when any node announces the user's logout or
 * revocation, or the end of this one session (SessionEnded, with the session id), or revokes its API
 * key; and at the latest at the periodic re-check (RevokedSessionCheckInterval) for anything else
 * (absolute lifetime, deactivation, lock, deletion, a session row ended without a message, a lost
 * message). A stream opened with an API key ends only with its key or its user.
 */
@Injectable()
export class StreamRegistry implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Streams');
  private readonly streams = new Set<OpenStream>();
  private readonly stops: Array<() => void> = [];
  private nextId = 1;
  private rechecking: Promise<void> | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly revocation: SessionRevocation,
    private readonly activeKeys: ActiveApiKeys,
    private readonly users: UserStateReader,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  onApplicationBootstrap(): void {
    const onEnded = (message: SessionEndedMessage) =>
      message.sessionId ? this.closeSession(message.userRegistryId, message.sessionId) : this.closeSessionsOf(message.userRegistryId);
    const onRemoved = (hash: string) => this.closeKey(hash);
    this.activeKeys.events.on('removed', onRemoved);
    this.stops.push(
      this.bus.subscribe(CHANNELS.watcher, (message) => this.relay(CHANNELS.watcher, message)),
      this.bus.subscribe(CHANNELS.serviceChange, (message) => this.relay(CHANNELS.serviceChange, message)),
      this.bus.subscribe(CHANNELS.sessionEnded, (raw) => {
        const message = parseSessionEnded(raw);
        if (message) onEnded(message);
      }),
      this.revocation.onEndedHere(onEnded),
      () => this.activeKeys.events.off('removed', onRemoved),
      // Back on the bus after losing it: messages sent meanwhile never reach this node, so every stream
      // is checked against the database at once rather than at the next periodic re-check.
      this.bus.onReady(() => void this.recheck()),
    );
  }

  onModuleDestroy(): void {
    for (const stop of this.stops.splice(0)) stop();
    // Open responses would keep the HTTP server from closing.
    for (const stream of [...this.streams]) this.close(stream, 'the service is stopping');
  }

  get count(): number {
    return this.streams.size;
  }

  /** Turns the response into an event stream of `channel` for an authenticated caller. */
  open(channel: StreamChannel, principal: Principal, req: Request, res: Response): void {
    const rawKey = principal.authenticationType === 'ApiKey' ? req.headers['x-api-key'] : undefined;
    const key = Array.isArray(rawKey) ? rawKey[0] : rawKey;
    const stream: OpenStream = {
      id: this.nextId++,
      channel,
      userRegistryId: principal.userRegistryId,
      sessionStartMs: principal.sessionStartDate?.getTime() ?? null,
      sessionId: principal.sessionId,
      apiKeyHash: key !== undefined ? apiKeyHash(key) : null,
      display: principal.apiKeyDisplay ?? principal.userName,
      scope: { tenantRegistryId: principal.tenantRegistryId, landlord: principal.landlord, permissions: principal.permissions },
      held: null,
      scopeRead: null,
      res,
    };
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.write(': connected\n\n');
    this.streams.add(stream);
    req.on('close', () => this.streams.delete(stream));
    res.on('close', () => this.streams.delete(stream));
  }

  /**
   * Closes every JWT stream of a user whose sessions ended (logout, revocation). Session starts are not
   * compared with the message's instant: it comes from another node's clock.
   */
  closeSessionsOf(userRegistryId: number): void {
    for (const stream of [...this.streams]) {
      if (stream.userRegistryId === userRegistryId && stream.apiKeyHash === null) this.close(stream, 'the session ended');
    }
    // A user deactivated or deleted also loses the streams of its keys; the re-check reads its state.
    if ([...this.streams].some((s) => s.userRegistryId === userRegistryId && s.apiKeyHash !== null)) {
      void this.recheck(userRegistryId);
    }
  }

  /** Closes the streams of one session that ended on its own (contract 14); the user's others stay. */
  closeSession(userRegistryId: number, sessionId: string): void {
    for (const stream of [...this.streams]) {
      if (stream.userRegistryId === userRegistryId && stream.sessionId === sessionId) this.close(stream, 'the session was ended');
    }
  }

  closeKey(hash: string): void {
    for (const stream of [...this.streams]) if (stream.apiKeyHash === hash) this.close(stream, 'the API key was revoked');
  }

  /**
   * Re-checks every open stream (or those of one user) against the user row and the clock, and
   * closes those whose session has ended. A user row that cannot be read closes the stream (fail closed).
   */
  recheck(onlyUser?: number): Promise<void> {
    if (onlyUser === undefined && this.rechecking) return this.rechecking;
    const run = this.checkAll(onlyUser);
    if (onlyUser === undefined) {
      this.rechecking = run.finally(() => {
        this.rechecking = null;
      });
      return this.rechecking;
    }
    return run;
  }

  private async checkAll(onlyUser?: number): Promise<void> {
    await this.check([...this.streams].filter((s) => onlyUser === undefined || s.userRegistryId === onlyUser));
  }

  private async check(streams: OpenStream[]): Promise<void> {
    // One read per distinct user and session; the reader batches them into one statement.
    const reads = new Map<string, Promise<UserAndSession | 'unreadable'>>();
    const readOf = (stream: OpenStream) => {
      const key = `${stream.userRegistryId}/${stream.sessionId ?? ''}`;
      let read = reads.get(key);
      if (!read) {
        const pending =
          stream.sessionId === null
            ? this.users.read(stream.userRegistryId).then((state) => ({ state, session: null }))
            : this.users.readWithSession(stream.userRegistryId, stream.sessionId);
        read = pending.catch(() => 'unreadable' as const);
        reads.set(key, read);
      }
      return read;
    };
    const results = await Promise.all(streams.map(readOf));
    const now = this.clock.nowMs();
    streams.forEach((stream, i) => {
      const reason = this.endReason(stream, results[i], now);
      if (reason) this.close(stream, reason);
      else if (results[i] !== 'unreadable') stream.scope = scopeOf((results[i] as UserAndSession).state!);
    });
  }

  private endReason(stream: OpenStream, read: UserAndSession | 'unreadable', now: number): string | null {
    if (read === 'unreadable') return 'the user row could not be read';
    const state = read.state;
    if (!mayAuthenticate(state)) return 'the user can no longer sign in';
    if (stream.apiKeyHash !== null) return this.activeKeys.has(stream.apiKeyHash) ? null : 'the API key was revoked';
    const start = stream.sessionStartMs!;
    if (now >= start + this.settings.sessionAbsoluteLifetimeMs) return 'the session reached its absolute lifetime';
    if (state.tokensValidFrom && start < state.tokensValidFrom.getTime()) return 'the session was revoked';
    if (!read.session || read.session.userRegistryId !== state.id) return 'the session has ended';
    return null;
  }

  /** Relays a bus message to the streams of `channel` whose caller may read it (contract 13). */
  private relay(channel: StreamChannel, message: string): void {
    const audience = audienceOf(channel, message);
    const frame = `${message
      .split(/\r\n|\r|\n/)
      .map((line) => `data: ${line}`)
      .join('\n')}\n\n`;
    // A change of a user, role or tenant may change what the streams of its callers may read: their
    // scope is read again before they get this message or any later one (contract 13).
    if (channel === CHANNELS.serviceChange) {
      const affects = scopeChangeOf(message);
      if (affects) this.rereadScopes([...this.streams].filter((stream) => affects(stream)));
    }
    for (const stream of [...this.streams]) {
      if (stream.channel !== channel) continue;
      if (stream.held) this.hold(stream, audience, frame);
      else if (mayReceive(stream.scope, audience)) this.send(stream, frame);
    }
  }

  private hold(stream: OpenStream, audience: Audience, frame: string): void {
    stream.held!.push({ audience, frame });
    if (stream.held!.length > HELD_FRAMES_LIMIT) this.close(stream, 'too many messages while its scope was read');
  }

  /**
   * Reads the scope of these streams again (closing those whose session ended meanwhile, or whose user
   * cannot be read: fail closed) and holds their messages until then; the held ones are then judged by
   * the new scope. A later read started before this one ends releases them instead.
   */
  private rereadScopes(streams: OpenStream[]): void {
    if (streams.length === 0) return;
    const read = {};
    for (const stream of streams) {
      stream.held ??= [];
      stream.scopeRead = read;
    }
    void this.check(streams)
      .catch((error: unknown) => {
        for (const stream of streams) this.close(stream, `its scope could not be read: ${(error as Error).message}`);
      })
      .finally(() => {
        for (const stream of streams) {
          if (stream.scopeRead !== read) continue;
          const held = stream.held ?? [];
          stream.held = null;
          stream.scopeRead = null;
          if (!this.streams.has(stream)) continue;
          for (const { audience, frame } of held) if (mayReceive(stream.scope, audience)) this.send(stream, frame);
        }
      });
  }

  /** A comment line to every open stream, so proxies keep idle streams open. */
  heartbeat(): void {
    for (const stream of [...this.streams]) this.send(stream, ': heartbeat\n\n');
  }

  /** Writes to a stream whose client keeps up; cuts one that has left STREAM_BACKLOG_BYTES unread. */
  private send(stream: OpenStream, text: string): void {
    if (stream.res.writableLength > STREAM_BACKLOG_BYTES) {
      this.close(stream, 'its client does not read what it is sent', true);
      return;
    }
    stream.res.write(text);
  }

  private close(stream: OpenStream, reason: string, cut = false): void {
    if (!this.streams.delete(stream)) return;
    this.logger.log(`closing ${stream.channel} stream ${stream.id} of ${stream.display}: ${reason}`);
    // A client that does not read would never take a last line: its connection is cut instead.
    if (cut) stream.res.destroy();
    else stream.res.end(': closed\n\n');
  }
}

function scopeOf(state: UserState): StreamScope {
  return { tenantRegistryId: state.tenantRegistryId, landlord: state.landlord, permissions: state.permissions };
}

function parseSessionEnded(raw: string): SessionEndedMessage | null {
  try {
    const value = JSON.parse(raw) as Partial<SessionEndedMessage>;
    if (!Number.isSafeInteger(value.userRegistryId) || typeof value.at !== 'number') return null;
    if (value.sessionId !== undefined && typeof value.sessionId !== 'string') return null;
    return { userRegistryId: value.userRegistryId!, at: value.at, ...(value.sessionId ? { sessionId: value.sessionId } : {}) };
  } catch {
    return null;
  }
}
