import { Clock } from './clock';

/**
 * A caller's CPU-bound work ends this long ago and still counts as waiting: between two sign-ins of
 * a steady stream the hashing gate is empty for a moment, and a background job looking just then
 * would take the core the next hash needs.
 */
export const FOREGROUND_HOLD_MS = 100;

/**
 * Whether CPU-bound work a caller waits for is in progress or queued (today: Argon2 hashes of
 * sign-ins, password changes and seeding, counted by the password hasher's gate, and passkey
 * assertions being verified, counted by PasskeyCeremonies). Background work that competes for the
 * same cores (security sink delivery, issue 30; the audit sealer, issue 29) asks it between steps and
 * yields while it answers yes. One instance per application (ConfigModule provides it beside the
 * Clock), in common/ so that a low layer can read what a higher one reports without importing it.
 */
export class ForegroundWork {
  private pending = 0;
  private lastEndMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: Clock) {}

  /** A task entered the queue (or started at once). Pair every call with one `end`. */
  begin(): void {
    this.pending++;
  }

  /** A task begun with `begin` finished, whatever its outcome. */
  end(): void {
    if (this.pending > 0) this.pending--;
    this.lastEndMs = this.clock.nowMs();
  }

  /** Tasks running or queued now. */
  inProgress(): number {
    return this.pending;
  }

  /** True while a task runs or waits, and for FOREGROUND_HOLD_MS after the last one ended. */
  waiting(): boolean {
    return this.pending > 0 || this.clock.nowMs() - this.lastEndMs < FOREGROUND_HOLD_MS;
  }
}
