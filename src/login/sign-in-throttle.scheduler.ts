import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { SignInThrottle } from './sign-in-throttle.service';

/** The scheduler registry's name of the once-a-minute purge of ended sign-in windows. */
export const SIGN_IN_THROTTLE_PURGE_JOB = 'sign-in-throttle-purge';

/** Once a minute (docs/decisions/0014). Thin on purpose: tests call SignInThrottle.purge() directly. */
@Injectable()
export class SignInThrottleScheduler {
  constructor(private readonly throttle: SignInThrottle) {}

  @Interval(SIGN_IN_THROTTLE_PURGE_JOB, 60_000)
  async purge(): Promise<void> {
    await this.throttle.purge();
  }
}
