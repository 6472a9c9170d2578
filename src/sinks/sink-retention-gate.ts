import { Injectable } from '@nestjs/common';
import { SecuritySinkRepository } from './security-sink.repository';

/**
 * Retention asks here before it drops an audit partition (contract 19): the active sinks that have not
 * acknowledged the partition's last leaf. A paused sink does not hold retention back (it is paused on
 * purpose; a replay of removed rows still sends what their leaf records hold).
 */
@Injectable()
export class SinkRetentionGate {
  constructor(private readonly sinks: SecuritySinkRepository) {}

  unacknowledged(lastLeafIndex: number): Promise<{ name: string; nextLeafIndex: number }[]> {
    return this.sinks.activeNotPast(lastLeafIndex);
  }
}
