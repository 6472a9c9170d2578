import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { LastUse, LastUseWriter } from '../common/last-use-writer';
import { UserPasskeyRepository } from './user-passkey.repository';

/** A passkey's LastUsedDate and device, written at most once a minute per passkey, off the request path (contract 20). */
@Injectable()
export class PasskeyUsageWriter extends LastUseWriter {
  constructor(
    private readonly passkeys: UserPasskeyRepository,
    clock: Clock,
  ) {
    super(clock, new Logger('PasskeyUsageWriter'));
  }

  protected write(uses: Map<number, LastUse>): Promise<void> {
    return this.passkeys.recordLastUsed(uses);
  }
}
