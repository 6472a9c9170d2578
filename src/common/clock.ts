/**
 * The one source of "now". Tests swap it for a movable clock so time travel is a provider swap,
 * never a sleep.
 */
export abstract class Clock {
  abstract now(): Date;
  nowMs(): number {
    return this.now().getTime();
  }
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
  override nowMs(): number {
    return Date.now();
  }
}

/** A clock that stands still until told to move; for tests and the telemetry demo. */
export class ManualClock extends Clock {
  private ms: number;
  constructor(start: Date | number = Date.now()) {
    super();
    this.ms = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  override nowMs(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(to: Date | number): void {
    this.ms = typeof to === 'number' ? to : to.getTime();
  }
}
