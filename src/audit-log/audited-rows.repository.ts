import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AUDIT_COLUMNS, AuditRowText, AuditTableName, canonicalTimestampSql } from './canonical';

/**
 * The SELECT list of a table's canonical columns as text, built once from AUDIT_COLUMNS (never from
 * input): dates in canonical microsecond text (a JS Date would lose the microseconds), numbers as
 * decimal text, booleans as booleans, texts as stored.
 */
function selectList(table: AuditTableName): string {
  return AUDIT_COLUMNS[table]
    .map(({ name, kind }) => {
      const column = `t."${name}"`;
      if (kind === 'date') return `${canonicalTimestampSql(column)} AS "${name}"`;
      if (kind === 'bool') return `${column} AS "${name}"`;
      return `${column}::text AS "${name}"`;
    })
    .join(', ');
}

const SELECTS = Object.fromEntries(
  (Object.keys(AUDIT_COLUMNS) as AuditTableName[]).map((table) => [
    table,
    `SELECT ${selectList(table)} FROM "${table}" t WHERE t."Id" = ANY($1::bigint[])`,
  ]),
) as Record<AuditTableName, string>;

/**
 * Reads the sealed tables (UserLogin, UserLogout, AuditRetentionRun) as the canonical form needs
 * them. Rows by Id; where a repeated Id returns two rows (possible once a table is partitioned), every
 * row is returned and the caller decides.
 */
@Injectable()
export class AuditedRowsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async byIds(table: AuditTableName, ids: string[], tx?: EntityManager): Promise<AuditRowText[]> {
    if (ids.length === 0) return [];
    return (await (tx ?? this.dataSource.manager).query(SELECTS[table], [ids])) as AuditRowText[];
  }
}
