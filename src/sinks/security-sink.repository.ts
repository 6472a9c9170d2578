import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { SecuritySink } from './security-sink.entity';

/** A sink row with what its state needs from the log: the latest checkpoint and the first unacknowledged leaf. */
export interface SinkRow {
  id: number;
  name: string;
  typeId: number;
  url: string;
  formatId: number;
  /** Envelopes (sink-secret.ts); the clear values never leave the deliverer. */
  secret: string | null;
  headers: string | null;
  active: boolean;
  nextLeafIndex: number;
  lastDeliveredDate: Date | null;
  lastAttemptDate: Date | null;
  lastError: string | null;
  failingSince: Date | null;
  createdDate: Date;
  createdUser: string | null;
  /** The latest checkpoint's tree size (0 before the first). */
  treeSize: number;
  /** SealedDate of leaf NextLeafIndex when a checkpoint covers it; null when the sink is up to date. */
  oldestUnacknowledgedSealedDate: Date | null;
}

export interface SinkValues {
  name: string;
  typeId: number;
  url: string;
  formatId: number;
  secret: string | null;
  headers: string | null;
  active: boolean;
}

/** One statement reads a sink and its state: the latest checkpoint's size, and the leaf at its cursor. `from`: the table, or a CTE of its rows. */
const selectFrom = (from: string) => `
  SELECT s."Id" AS "id", s."Name" AS "name", s."TypeId" AS "typeId", s."Url" AS "url", s."FormatId" AS "formatId",
         s."Secret" AS "secret", s."Headers" AS "headers", s."Active" AS "active", s."NextLeafIndex"::float8 AS "nextLeafIndex",
         s."LastDeliveredDate" AS "lastDeliveredDate", s."LastAttemptDate" AS "lastAttemptDate", s."LastError" AS "lastError",
         s."FailingSince" AS "failingSince", s."CreatedDate" AS "createdDate", s."CreatedUser" AS "createdUser",
         c."size" AS "treeSize", l."SealedDate" AS "oldestUnacknowledgedSealedDate"
    FROM ${from} s
   CROSS JOIN (SELECT COALESCE(max("TreeSize"), 0)::float8 AS "size" FROM "AuditCheckpoint") c
    LEFT JOIN "AuditLeaf" l ON l."LeafIndex" = s."NextLeafIndex" AND s."NextLeafIndex" < c."size"`;
const SELECT = selectFrom('"SecuritySink"');

/** Every statement on SecuritySink. The cursor moves only by compare-and-set, so two writers never interleave silently. */
@Injectable()
export class SecuritySinkRepository {
  constructor(@InjectRepository(SecuritySink) private readonly repository: Repository<SecuritySink>) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.repository.manager;
  }

  async list(tx?: EntityManager): Promise<SinkRow[]> {
    return (await this.manager(tx).query(`${SELECT} ORDER BY s."Id"`)) as SinkRow[];
  }

  async byId(id: number, tx?: EntityManager): Promise<SinkRow | null> {
    const [row] = (await this.manager(tx).query(`${SELECT} WHERE s."Id" = $1`, [id])) as SinkRow[];
    return row ?? null;
  }

  /** The ids of the active sinks (what each node's deliverer tries to take). */
  async activeIds(): Promise<number[]> {
    const rows = (await this.repository.query(`SELECT "Id" AS "id" FROM "SecuritySink" WHERE "Active" ORDER BY "Id"`)) as { id: number }[];
    return rows.map((r) => r.id);
  }

  /** The latest checkpoint's tree size: where a new sink starts by default. */
  async latestTreeSize(tx?: EntityManager): Promise<number> {
    const [row] = (await this.manager(tx).query(`SELECT COALESCE(max("TreeSize"), 0)::float8 AS "size" FROM "AuditCheckpoint"`)) as { size: number }[];
    return row.size;
  }

  /** Inserts a sink; its name is unique (23505 from the constraint SecuritySink_Name_key otherwise). */
  async insert(values: SinkValues, nextLeafIndex: number, createdDate: Date, createdUser: string, tx?: EntityManager): Promise<number> {
    const [row] = (await this.manager(tx).query(
      `INSERT INTO "SecuritySink" ("Name", "TypeId", "Url", "FormatId", "Secret", "Headers", "Active", "NextLeafIndex", "CreatedDate", "CreatedUser")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING "Id" AS "id"`,
      [values.name, values.typeId, values.url, values.formatId, values.secret, values.headers, values.active, nextLeafIndex, createdDate, createdUser],
    )) as { id: number }[];
    return row.id;
  }

  /**
   * Replaces the configuration. A change of where or how events go (type, URL, format) clears the
   * failure state: the old receiver's error says nothing about the new one. Returns false when gone.
   */
  async update(id: number, values: SinkValues, tx?: EntityManager): Promise<boolean> {
    const rows = (await this.manager(tx).query(
      `UPDATE "SecuritySink" SET "Name" = $2, "TypeId" = $3::smallint, "Url" = $4::varchar, "FormatId" = $5::smallint, "Secret" = $6, "Headers" = $7, "Active" = $8,
              "LastError" = CASE WHEN "TypeId" = $3::smallint AND "Url" = $4::varchar AND "FormatId" = $5::smallint AND "Active" THEN "LastError" END,
              "FailingSince" = CASE WHEN "TypeId" = $3::smallint AND "Url" = $4::varchar AND "FormatId" = $5::smallint AND "Active" THEN "FailingSince" END
        WHERE "Id" = $1 RETURNING 1`,
      [id, values.name, values.typeId, values.url, values.formatId, values.secret, values.headers, values.active],
    )) as [unknown[], number];
    return rows[0].length > 0;
  }

  async delete(id: number, tx?: EntityManager): Promise<boolean> {
    const rows = (await this.manager(tx).query(`DELETE FROM "SecuritySink" WHERE "Id" = $1 RETURNING 1`, [id])) as [unknown[], number];
    return rows[0].length > 0;
  }

  /**
   * Sets the cursor back to `from` in one statement that also checks it is not ahead of the cursor
   * (check-then-act in one step: a delivery that advanced meanwhile is seen). Returns the cursor
   * before, or null when the sink is gone or `from` is above its cursor (`above` says which).
   */
  async replay(id: number, from: number, tx?: EntityManager): Promise<{ before: number } | { above: number } | null> {
    const [rows] = (await this.manager(tx).query(
      `UPDATE "SecuritySink" s SET "NextLeafIndex" = LEAST($2::bigint, old."NextLeafIndex")
         FROM (SELECT "Id", "NextLeafIndex" FROM "SecuritySink" WHERE "Id" = $1 FOR UPDATE) old
        WHERE s."Id" = old."Id"
       RETURNING old."NextLeafIndex"::float8 AS "before"`,
      [id, from],
    )) as [{ before: number }[], number];
    if (rows.length === 0) return null;
    return from <= rows[0].before ? { before: rows[0].before } : { above: rows[0].before };
  }

  /**
   * Moves the cursor from `from` to `to` if nobody moved it meanwhile (a replay, another node after a
   * lost lock): false then, and the deliverer reads the cursor again. Advancing also records the
   * acknowledgement (LastDeliveredDate) and ends the failure state.
   */
  async moveCursor(id: number, from: number, to: number, at: Date, acknowledged: boolean): Promise<boolean> {
    const rows = (await this.repository.query(
      acknowledged
        ? `UPDATE "SecuritySink" SET "NextLeafIndex" = $3, "LastDeliveredDate" = $4, "LastAttemptDate" = $4, "LastError" = NULL, "FailingSince" = NULL
            WHERE "Id" = $1 AND "NextLeafIndex" = $2 RETURNING 1`
        : `UPDATE "SecuritySink" SET "NextLeafIndex" = $3 WHERE "Id" = $1 AND "NextLeafIndex" = $2 AND $4::timestamptz IS NOT NULL RETURNING 1`,
      [id, from, to, at],
    )) as [unknown[], number];
    return rows[0].length > 0;
  }

  /**
   * An acknowledged batch: moves the cursor from `from` to `to` as moveCursor does (compare-and-set,
   * LastDeliveredDate, the failure state ended) and answers the sink as byId would read it after, in
   * the same statement: a backlog then costs one round trip per batch here, not two (issue 30). Null
   * when the cursor had moved meanwhile (a replay, another node) or the sink is gone.
   */
  async acknowledge(id: number, from: number, to: number, at: Date): Promise<SinkRow | null> {
    const [row] = (await this.repository.query(
      `WITH moved AS (
         UPDATE "SecuritySink" SET "NextLeafIndex" = $3, "LastDeliveredDate" = $4, "LastAttemptDate" = $4, "LastError" = NULL, "FailingSince" = NULL
          WHERE "Id" = $1 AND "NextLeafIndex" = $2 RETURNING *)
       ${selectFrom('moved')}`,
      [id, from, to, at],
    )) as SinkRow[];
    return row ?? null;
  }

  /** A failed attempt: LastError (bounded), FailingSince kept from the first failure. */
  async recordFailure(id: number, at: Date, error: string): Promise<void> {
    await this.repository.query(
      `UPDATE "SecuritySink" SET "LastAttemptDate" = $2, "LastError" = $3, "FailingSince" = COALESCE("FailingSince", $2) WHERE "Id" = $1`,
      [id, at, error.slice(0, 512)],
    );
  }

  /** The active sinks whose cursor is at or below `leafIndex`: they have not acknowledged that leaf. */
  async activeNotPast(leafIndex: number): Promise<{ name: string; nextLeafIndex: number }[]> {
    return (await this.repository.query(
      `SELECT "Name" AS "name", "NextLeafIndex"::float8 AS "nextLeafIndex" FROM "SecuritySink" WHERE "Active" AND "NextLeafIndex" <= $1 ORDER BY "Id"`,
      [leafIndex],
    )) as { name: string; nextLeafIndex: number }[];
  }
}
