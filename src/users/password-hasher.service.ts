import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import * as argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ForegroundWork } from '../common/foreground-work';
import { AppSettings, SETTINGS } from '../config/config.module';

/**
 * Lets at most `limit` tasks run at once; the rest wait in order. Argon2 is CPU-bound: with one hash
 * per core the event loop's own thread is starved (40 concurrent sign-ins on 2 cores blocked it for
 * 40 ms), so hashing leaves one core to the event loop. Every task, queued or running, is counted in
 * `foreground`, which background work (sink delivery) reads to yield the cores (issue 30).
 */
class Semaphore {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(
    private readonly limit: number,
    private readonly foreground: ForegroundWork,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    this.foreground.begin();
    try {
      if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.running++;
      try {
        return await task();
      } finally {
        this.running--;
        this.waiting.shift()?.();
      }
    } finally {
      this.foreground.end();
    }
  }
}

/**
 * Argon2id at OWASP's minimum (m=19456 KiB, t=2, p=1). The node binding hashes on libuv's thread
 * pool, so the event loop never waits on it, and at most (cores - 1) hashes run at once so the event
 * loop keeps a core. PasswordHashingKey, when set, is Argon2's secret (pepper).
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private readonly options: Parameters<typeof argon2.hash>[1] & { raw?: false };
  /** A real hash of a random value, made at start without holding it up; a verify waits for it. */
  private dummyHash: Promise<string> | null = null;
  private readonly gate: Semaphore;
  private readonly secret: { secret: Buffer } | undefined;

  constructor(@Inject(SETTINGS) settings: AppSettings, foreground: ForegroundWork) {
    this.gate = new Semaphore(Math.max(1, availableParallelism() - 1), foreground);
    this.options = {
      type: argon2.argon2id,
      memoryCost: 19456,
      timeCost: 2,
      parallelism: 1,
      ...(settings.passwordHashingKey ? { secret: Buffer.from(settings.passwordHashingKey, 'utf8') } : {}),
    };
    this.secret = this.options?.secret ? { secret: this.options.secret } : undefined;
  }

  onModuleInit(): void {
    // A real hash of a random value, so a verify against it costs exactly what a real verify costs.
    // Not awaited: the start does not wait for it (issue 33); the first dummy verify does.
    this.dummy().catch(() => undefined);
  }

  /** The dummy hash; made again if making it failed, so no failure is ever answered faster. */
  private dummy(): Promise<string> {
    this.dummyHash ??= this.hash(randomBytes(32).toString('hex')).catch((error: unknown) => {
      this.dummyHash = null;
      throw error;
    });
    return this.dummyHash;
  }

  hash(password: string): Promise<string> {
    return this.gate.run(() => argon2.hash(password, { ...this.options, raw: false }));
  }

  /** Constant-time verify (inside argon2); false for a malformed stored hash instead of throwing. */
  async verify(stored: string | null, password: string): Promise<boolean> {
    if (!stored) {
      await this.dummyVerify(password);
      return false;
    }
    try {
      return await this.gate.run(() => argon2.verify(stored, password, this.secret));
    } catch {
      return false;
    }
  }

  /** The same work as a verify, for failures that have no stored hash to check (unknown user…). */
  async dummyVerify(password: string): Promise<void> {
    try {
      const dummyHash = await this.dummy();
      await this.gate.run(() => argon2.verify(dummyHash, password || '-', this.secret));
    } catch {
      /* the outcome is irrelevant, only the time spent */
    }
  }
}
