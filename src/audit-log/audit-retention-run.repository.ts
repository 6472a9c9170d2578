import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { canonicalTimestampSql } from './canonical';
import { AuditRetentionRun } from './audit-log.entities';

export interface RetentionRunRow {
  id: string;
  runDate: string;
  tableName: string;
  partitionName: string;
  cutoff: string;
  rowCount: string;
}

/** Reads of AuditRetentionRun (retention, contract 16, writes it; the sealer seals it). */
@Injectable()
export class AuditRetentionRunRepository {
  constructor(@InjectRepository(AuditRetentionRun) private readonly repository: Repository<AuditRetentionRun>) {}

  /** Every run, oldest first; dates in canonical text (microseconds), counts as decimal text. */
  async all(): Promise<RetentionRunRow[]> {
    return (await this.repository.query(
      `SELECT "Id"::text AS "id", ${canonicalTimestampSql('RunDate')} AS "runDate", "TableName" AS "tableName",
              "PartitionName" AS "partitionName", ${canonicalTimestampSql('Cutoff')} AS "cutoff", "RowCount"::text AS "rowCount"
         FROM "AuditRetentionRun" ORDER BY "Id"`,
    )) as RetentionRunRow[];
  }

  /** The latest run, or null while retention has never dropped anything. */
  async latest(): Promise<RetentionRunRow | null> {
    const runs = (await this.repository.query(
      `SELECT "Id"::text AS "id", ${canonicalTimestampSql('RunDate')} AS "runDate", "TableName" AS "tableName",
              "PartitionName" AS "partitionName", ${canonicalTimestampSql('Cutoff')} AS "cutoff", "RowCount"::text AS "rowCount"
         FROM "AuditRetentionRun" ORDER BY "Id" DESC LIMIT 1`,
    )) as RetentionRunRow[];
    return runs[0] ?? null;
  }
}
