import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CaptureSource, TablePart } from '../capture-queues/capture-source';
import { FlushedTableRepository } from '../database/bulk-insert';
import { CaptureQueues } from './capture-queues.service';
import { CAPTURED_TABLES } from './telemetry.tables';
import type { TelemetryTable } from './telemetry-table';

/**
 * How each queue's entries become the columns of its table, for the flush (capture-queues/): drains
 * every queue into one TablePart per table, each able to insert any of its entries or put them back
 * in their queue. Every table's columns are its description's capture mapping; its repository is the
 * one generic FlushedTableRepository over its entity.
 */
@Injectable()
export class CaptureRows implements CaptureSource {
  private readonly tables: { table: TelemetryTable; rows: FlushedTableRepository<never, never>; columns: [string, (entry: unknown) => unknown][] }[];

  constructor(
    private readonly queues: CaptureQueues,
    dataSource: DataSource,
  ) {
    this.tables = CAPTURED_TABLES.map((table) => {
      const columns = Object.entries(table.capture!.columns) as [string, (entry: unknown) => unknown][];
      const repository = dataSource.getRepository(table.entity);
      return { table, rows: FlushedTableRepository.of(repository, columns.map(([column]) => column) as never[]) as FlushedTableRepository<never, never>, columns };
    });
  }

  /** Takes every queue's entries out, as one part per table (entries are clean: checked when enqueued). */
  drain(stamp: { createdDate: Date; instance: string }): TablePart[] {
    return this.tables.map(({ table, rows, columns }) => {
      const queue = this.queues.of(table);
      return {
        table: rows.tableName,
        queueId: table.capture!.queueId,
        entries: queue.drain(),
        insert: (tx, entries) => rows.insertMany(tx, Object.fromEntries(columns.map(([column, value]) => [column, entries.map(value)])) as never, stamp),
        restore: (entries) => queue.restore(entries),
      };
    });
  }

  health(): { queueId: number; depth: number; dropped: number }[] {
    return this.queues.health();
  }

  acknowledgeDropped(queueId: number, count: number): void {
    this.queues.byId.get(queueId)?.acknowledgeDropped(count);
  }
}
