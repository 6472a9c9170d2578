import { Injectable } from '@nestjs/common';
import { PermissionSpecificationRepository } from '../users/permission-specification.repository';
import { GuardSessionRow, GuardUserRow, UserRegistryRepository } from '../users/user-registry.repository';
import type { Principal } from '../access/principal';

/** The user row as the guard needs it on every request. */
export interface UserState {
  id: number;
  name: string;
  active: boolean;
  deleted: boolean;
  passwordLocked: boolean;
  tokensValidFrom: Date | null;
  tenantRegistryId: number;
  tenantName: string;
  tenantActive: boolean;
  landlord: boolean;
  permissions: number[];
}

/** Whether a user may hold a session or use a key at all: active, not deleted or locked, tenant active. */
export function mayAuthenticate(state: UserState | null): state is UserState {
  return state !== null && !state.deleted && state.active && !state.passwordLocked && state.tenantActive;
}

/** The Principal of a user whose credential checked out; the credential-specific members are added. */
export function principalOf(
  state: UserState,
  credential: Pick<Principal, 'authenticationType' | 'sessionStartDate' | 'sessionId' | 'expiration' | 'apiKeyDisplay'>,
): Principal {
  return {
    userRegistryId: state.id,
    userName: state.name,
    tenantRegistryId: state.tenantRegistryId,
    tenantName: state.tenantName,
    landlord: state.landlord,
    permissions: state.permissions,
    absoluteExpiration: null,
    ...credential,
  };
}

/** An open session as the guard checks it (contract 14). */
export type OpenSession = GuardSessionRow;

/** The user row and, when a session id was asked for, that session if it is still open. */
export interface UserAndSession {
  state: UserState | null;
  /** Null when no session was asked for, or it ended, or it never existed. */
  session: OpenSession | null;
}

interface Waiter {
  id: number;
  sessionId: string | null;
  resolve: (read: UserAndSession) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads user rows for the guard, batching the reads of concurrent requests: every request that asks
 * during one event-loop turn is answered by one query sent after that turn, so each request still
 * gets a read taken after it arrived, at a fraction of the round trips. A failed read rejects every
 * waiter: the guard then refuses (fail closed).
 */
@Injectable()
export class UserStateReader {
  private pending: Waiter[] = [];
  private scheduled = false;
  /** Every permission specification id, read on first use: what a landlord holds (it changes only with migrations). */
  private allPermissions: Promise<number[]> | null = null;

  constructor(
    private readonly users: UserRegistryRepository,
    private readonly permissions: PermissionSpecificationRepository,
  ) {}

  /** The user row alone (API keys have no sessions). */
  async read(id: number): Promise<UserState | null> {
    return (await this.enqueue(id, null)).state;
  }

  /**
   * The user row and the open session `sessionId` of a JWT, in the same batched statement. The id
   * must be a well-formed UUID (TokenService checks it): one malformed id would fail the whole batch.
   */
  readWithSession(id: number, sessionId: string): Promise<UserAndSession> {
    return this.enqueue(id, sessionId);
  }

  private enqueue(id: number, sessionId: string | null): Promise<UserAndSession> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, sessionId, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const ids = [...new Set(batch.map((w) => w.id))];
    const sessionIds = [...new Set(batch.flatMap((w) => (w.sessionId === null ? [] : [w.sessionId])))];
    Promise.all([this.landlordPermissions(), this.users.readForGuard(ids, sessionIds)])
      .then(([all, read]) => {
        const byId = new Map(read.users.map((row) => [row.id, this.toState(row, all)]));
        const sessions = new Map(read.sessions.map((s) => [s.id, s]));
        for (const waiter of batch) {
          const session = waiter.sessionId === null ? null : (sessions.get(waiter.sessionId) ?? null);
          waiter.resolve({ state: byId.get(waiter.id) ?? null, session });
        }
      })
      .catch((error: unknown) => {
        for (const waiter of batch) waiter.reject(error);
      });
  }

  private landlordPermissions(): Promise<number[]> {
    this.allPermissions ??= this.permissions.findAllIds().catch((error: unknown) => {
      this.allPermissions = null;
      throw error;
    });
    return this.allPermissions;
  }

  private toState(row: GuardUserRow, all: number[]): UserState {
    const { roleActive, permissions, tokensValidFrom, ...state } = row;
    return {
      ...state,
      tokensValidFrom: tokensValidFrom === null ? null : new Date(tokensValidFrom),
      permissions: row.landlord ? all : roleActive ? [...permissions].sort((a, b) => a - b) : [],
    };
  }
}
