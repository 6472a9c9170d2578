import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { boundText, boundTexts } from '../common/text';
import { textBoundsOf } from '../database/text-bounds';
import { UserLogout } from './user-logout.entity';

/**
 * One session cut as written (contract 9): the entity's columns less the trigger-kept SearchText, so a
 * new column is declared once, on the entity. Its Id is taken from the table's sequence before its
 * first attempt (reserveIds), so every later write of the same row is the same row (docs/decisions,
 * logout-identity). The texts are bounded and stripped here.
 */
export type NewUserLogout = Omit<UserLogout, 'searchText'>;

/** The bound of every caller text of a UserLogout row (its column's length): the table's, the spool's (audit.writer.ts). */
export const USER_LOGOUT_TEXT_BOUNDS = textBoundsOf(UserLogout);

/**
 * Every statement that writes UserLogout. The trail is never updated or deleted by the service; it is
 * read through the read engine (audit.tables.ts describes it for reads/). Every caller text is
 * stripped of control characters and bounded here.
 */
@Injectable()
export class UserLogoutRepository {
  constructor(@InjectRepository(UserLogout) private readonly repository: Repository<UserLogout>) {}

  /**
   * `count` Ids from the table's identity sequence, inside `tx` when given (a sequence is not
   * transactional: the Ids stay taken whatever the transaction does). One round trip.
   */
  async reserveIds(count: number, tx?: EntityManager): Promise<string[]> {
    if (count === 0) return [];
    const rows = await (tx ?? this.repository.manager).query<{ id: string }[]>(
      `SELECT nextval(pg_get_serial_sequence('"UserLogout"', 'Id'))::text AS id FROM generate_series(1, $1)`,
      [count],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Inserts the rows in one statement (a multi-row VALUES; the audit retry writes up to 500 at once),
   * inside `tx` when the caller's transaction must hold it. A row whose (Id, CreatedDate) is already
   * in the table is skipped in the same statement (ON CONFLICT DO NOTHING on the primary key): it is
   * a copy of a row whose first write did commit though its answer never came. A conflicting row
   * still being committed (a COMMIT waiting for the synchronous standby) is waited for, then skipped
   * if it committed. A skipped row fires no row trigger: it is not enqueued for sealing twice.
   */
  async insert(rows: NewUserLogout[], tx?: EntityManager): Promise<void> {
    if (rows.length === 0) return;
    await (tx?.getRepository(UserLogout) ?? this.repository)
      .createQueryBuilder()
      .insert()
      .values(rows.map((row) => boundTexts(row, USER_LOGOUT_TEXT_BOUNDS)))
      .orIgnore()
      // Nothing to read back: no RETURNING of defaults.
      .updateEntity(false)
      .execute();
  }

  /**
   * Which of `rows` are already written (same instant, user, reason and outcome): for rows kept
   * without an Id (spooled by a build older than the kept identity), which a node that wrote them and
   * was killed before its spool said so writes again at start (common/json-lines-spool.ts).
   * One indexed read (IX_UserLogout_CreatedDate) for up to 500 instants.
   */
  async alreadyWritten(rows: NewUserLogout[]): Promise<Set<NewUserLogout>> {
    if (rows.length === 0) return new Set();
    const found = await this.repository.find({
      select: { createdDate: true, createdUser: true, reasonId: true, outcomeId: true },
      where: { createdDate: In([...new Set(rows.map((row) => row.createdDate.getTime()))].map((ms) => new Date(ms))) },
    });
    const key = (createdDate: Date, createdUser: string | null, reasonId: number, outcomeId: number) =>
      JSON.stringify([createdDate.getTime(), createdUser, reasonId, outcomeId]);
    const written = new Set(found.map((row) => key(row.createdDate, row.createdUser, row.reasonId, row.outcomeId)));
    return new Set(rows.filter((row) => written.has(key(row.createdDate, boundText(row.createdUser, USER_LOGOUT_TEXT_BOUNDS.createdUser!), row.reasonId, row.outcomeId))));
  }
}
