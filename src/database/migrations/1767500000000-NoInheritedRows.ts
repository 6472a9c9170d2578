import { MigrationInterface, QueryRunner } from 'typeorm';

/** The registry tables whose changes made in the database are recorded by row triggers (contract 18), frozen here. */
const REGISTRY_TABLES = ['TenantRegistry', 'RoleRegistry', 'RoleRegistryPermission', 'UserRegistry', 'UserRegistryApiKey'] as const;

const constraint = (table: string) => `${table}_OwnRows`;

/**
 * Issue 29 (contract 18, "changes made in the database"): a table owner could slip rows past the
 * registry's triggers without turning any off. `CREATE TABLE x () INHERITS ("UserRegistry")` and an
 * INSERT into x: the row triggers of UserRegistry do not fire for rows of another table, yet every
 * read of "UserRegistry" (without ONLY, as the service's) returns x's rows: a user, a role's
 * permission, an API key that no AdminChange records. (The log's own tables: the partitioned ones
 * cannot be inherited from, and the outside check names what a child of AuditLeaf or
 * AuditRetentionRun holds.)
 *
 * A CHECK constraint on `tableoid` (the one system column a CHECK may read): every row must be stored
 * in the table itself. A child inherits the constraint and cannot drop it, and none of its rows can
 * satisfy it, so a child can hold no row; ALTER TABLE … INHERIT of a filled table is refused for the
 * same reason. It costs one comparison per row written. Dropping the constraint is DDL on the table,
 * like disabling its triggers: not caught, said in docs/decisions/0031-admin-changes.md.
 *
 * Outside a transaction, each table in two steps: ADD … NOT VALID (a brief lock, no scan), then VALIDATE
 * (reads the table under a lock that lets rows be written and read meanwhile). The entities declare
 * the constraints by name (@Check), so the schema comparison knows them.
 * An install where a child already holds rows fails here, naming the table: such rows were written
 * behind the triggers, and an operator must look at them before the service starts again.
 */
export class NoInheritedRows1767500000000 implements MigrationInterface {
  name = 'NoInheritedRows1767500000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const table of REGISTRY_TABLES) {
      const children = (await q.query(
        `SELECT i.inhrelid::regclass::text AS "child" FROM pg_inherits i WHERE i.inhparent = $1::regclass ORDER BY 1`,
        [`"${table}"`],
      )) as { child: string }[];
      for (const { child } of children) {
        const [{ any }] = (await q.query(`SELECT EXISTS (SELECT 1 FROM ${child}) AS "any"`)) as { any: boolean }[];
        if (any) {
          throw new Error(
            `table ${child} is a child of "${table}" (INHERITS) and holds rows: rows there are read as "${table}"'s but no trigger of "${table}" saw them ` +
              `(written behind the audit log, issue 29); inspect and remove them (or the table) before starting this version`,
          );
        }
      }
      await q.query(`ALTER TABLE "${table}" DROP CONSTRAINT IF EXISTS "${constraint(table)}"`);
      await q.query(`ALTER TABLE "${table}" ADD CONSTRAINT "${constraint(table)}" CHECK (tableoid = '"${table}"'::regclass) NOT VALID`);
      await q.query(`ALTER TABLE "${table}" VALIDATE CONSTRAINT "${constraint(table)}"`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of REGISTRY_TABLES) await q.query(`ALTER TABLE "${table}" DROP CONSTRAINT IF EXISTS "${constraint(table)}"`);
  }
}
