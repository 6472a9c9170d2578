import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Request } from 'express';
import { Clock } from '../common/clock';
import { withinDeadline } from '../common/deadline';
import { ProblemError, serviceUnavailable } from '../common/problem';
import { requestContext } from '../common/request-context';
import { throttleAddress } from '../common/throttle-address';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SignInThrottleStore, ThrottleWindow } from './sign-in-throttle.store';

/**
 * A sign-in admitted by the throttle holds one place in its address's count until it ends: a failure
 * keeps it, a success (or a step that is no failure: the second-factor prompt, a Negotiate challenge)
 * gives it back with `release()`.
 */
export interface ThrottleTicket {
  release(): Promise<void>;
}

const NOTHING_HELD: ThrottleTicket = { release: async () => undefined };

/** An address past the limit: 429 with Retry-After. SignInFlow writes its UserLogin row (FailureTypeId 12) before it is answered. */
export class SignInThrottled extends ProblemError {
  constructor(retryAfterSeconds: number) {
    super(429, 'Too Many Requests', 'Too many failed sign-ins from this address; try again later.', {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

/** How long the count may take before the sign-in is refused (fail closed, 503). */
const STORE_DEADLINE_MS = 3000;

/**
 * Per-address sign-in throttling across nodes (contract 13, SignInThrottle). Every sign-in takes a
 * place in its client address's count before anything is verified, in one atomic step of the shared
 * store (Redis when configured, else the database), so a burst sent at once is cut at exactly the
 * limit. Past the limit the sign-in is refused for the rest of the window: SignInThrottled (429 with
 * Retry-After, its UserLogin row with FailureTypeId 12 written by SignInFlow), nothing verified. Successes give their place back, so only
 * failures count. The address is the one of contract 13 (TrustProxy), never a forwarded left part;
 * an IPv6 client is counted by its /64, the block one subscriber is usually given.
 */
@Injectable()
export class SignInThrottle implements OnModuleDestroy {
  private readonly logger = new Logger('SignInThrottle');

  constructor(
    private readonly store: SignInThrottleStore,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /**
   * Admits a sign-in or refuses it: throws SignInThrottled when the address is past the limit, or a
   * 503 when the count cannot be reached.
   */
  async enter(req: Request): Promise<ThrottleTicket> {
    const rule = this.settings.signInThrottle;
    if (!rule) return NOTHING_HELD;
    const address = throttleAddress(requestContext(req).remoteIp);
    const now = this.clock.nowMs();
    const window = await this.reach(() => this.store.take(address, now, rule.windowMs));
    if (window.count > rule.limit) throw this.refusal(window, now);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        // Losing a give-back only over-counts (toward refusing): logged, never thrown.
        await this.store.giveBack(address, window).catch((error: unknown) => {
          this.logger.warn(`could not give back a sign-in count: ${(error as Error).message}`);
        });
      },
    };
  }

  /** Refuses without counting when the address is already past the limit (starting a sign-in elsewhere). */
  async check(req: Request): Promise<void> {
    const rule = this.settings.signInThrottle;
    if (!rule) return;
    const address = throttleAddress(requestContext(req).remoteIp);
    const now = this.clock.nowMs();
    const window = await this.reach(() => this.store.peek(address, now, rule.windowMs));
    if (window && window.count >= rule.limit) throw this.refusal(window, now);
  }

  /** Once a minute, windows that ended are forgotten (the database store; Redis keys expire). */
  async purge(): Promise<void> {
    const rule = this.settings.signInThrottle;
    if (!rule) return;
    await this.store.purge(this.clock.nowMs(), rule.windowMs).catch((error: unknown) => {
      this.logger.warn(`could not purge ended sign-in windows: ${(error as Error).message}`);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.store.close();
  }

  private refusal(window: ThrottleWindow, now: number): SignInThrottled {
    return new SignInThrottled(Math.max(1, Math.ceil((window.startMs + this.settings.signInThrottle!.windowMs - now) / 1000)));
  }

  /** The store, within a deadline; unreachable means refused (fail closed). */
  private async reach<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await withinDeadline(operation(), STORE_DEADLINE_MS);
    } catch (error) {
      // Every sign-in meets an outage of the store: a warning the logger counts, not an ERROR per request.
      this.logger.warn(`sign-in refused (503), the throttle count cannot be reached: ${(error as Error).message}`);
      throw serviceUnavailable('Sign-in is unavailable right now.');
    }
  }
}
