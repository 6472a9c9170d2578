import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { FlushedTableRepository } from '../database/bulk-insert';
import { CaptureQueueHealth } from './capture-queue-health.entity';

/** CaptureQueueHealth: one row per queue per flush, read by the read engine. */
@Injectable()
export class CaptureQueueHealthRepository extends FlushedTableRepository<CaptureQueueHealth, 'queueId' | 'queueDepth' | 'droppedCount'> {
  constructor(@InjectRepository(CaptureQueueHealth) repository: Repository<CaptureQueueHealth>) {
    super(repository, ['queueId', 'queueDepth', 'droppedCount']);
  }

  /** Whether a node's minute is written already (a replayed spool: the run that kept it may have written it before it died). */
  isWritten(tx: EntityManager, instance: string, createdDate: Date): Promise<boolean> {
    return tx.getRepository(CaptureQueueHealth).exists({ where: { instance, createdDate } });
  }
}
