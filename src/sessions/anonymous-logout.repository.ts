import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AnonymousLogoutEntry } from './anonymous-logout.entity';

/**
 * Every statement on AnonymousLogout: the database's copy of the once-a-minute rule for logout rows
 * without a session (anonymous-logout.limiter.ts), used when no Redis is configured.
 */
@Injectable()
export class AnonymousLogoutRepository {
  constructor(@InjectRepository(AnonymousLogoutEntry) private readonly repository: Repository<AnonymousLogoutEntry>) {}

  /**
   * Claims the address's row for `now` when its last one is at or before `periodStart` (or after
   * `now`: a clock set back); true when this call claimed it. Raw SQL: one INSERT … ON CONFLICT DO
   * UPDATE … WHERE decides and remembers in one statement, so concurrent claims of one address on any
   * node wait for each other on the row and only the first finds it a period old; TypeORM's upsert
   * cannot carry the WHERE (the same form as the sign-in throttle's, docs/decisions/0013;
   * test/proxies-attacks.e2e-spec.ts: 30 logouts over two nodes write one row).
   */
  async claim(address: string, now: Date, periodStart: Date): Promise<boolean> {
    const rows: unknown[] = await this.repository.query(
      `INSERT INTO "AnonymousLogout" AS t ("Address", "LastRowDate") VALUES ($1, $2)
       ON CONFLICT ("Address") DO UPDATE SET "LastRowDate" = EXCLUDED."LastRowDate"
         WHERE t."LastRowDate" <= $3 OR t."LastRowDate" > $2
       RETURNING 1`,
      [address, now, periodStart],
    );
    return rows.length === 1;
  }

  /** Forgets the addresses whose last row is at or before `periodStart`. */
  async deleteClaimedBefore(periodStart: Date): Promise<void> {
    await this.repository.createQueryBuilder().delete().where('"LastRowDate" <= :periodStart', { periodStart }).execute();
  }
}
