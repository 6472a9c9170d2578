import { MigrationInterface, QueryRunner } from 'typeorm';

/** The registry tables whose changes made outside the service are recorded (contract 18), frozen here. */
const REGISTRY_TABLES = ['TenantRegistry', 'RoleRegistry', 'RoleRegistryPermission', 'UserRegistry', 'UserRegistryApiKey'] as const;

/**
 * Issue 29 (a gap of contract 18's "changes made in the database"): a TRUNCATE of a registry table
 * fires no row trigger, so migration AdminChange's "AdminChangeFromDatabase" never saw it. A TRUNCATE
 * removes every row, so it is recorded as the DELETE of every row it removes, exactly the AdminChange
 * rows a `DELETE FROM` of the same table would have written (CredentialTypeId 4, current_user, the
 * ActionTypeId of the nearest kind, Changes the row's columns `[before, null]`, secrets as "(secret)").
 *
 * A BEFORE TRUNCATE statement trigger, because only before the truncation are the rows still there to
 * be named (an AFTER trigger could say only that the table was emptied). PostgreSQL fires the BEFORE
 * triggers of every table a `TRUNCATE ... CASCADE` reaches before it truncates any of them, so the
 * rows of cascaded tables are recorded too, and their tenants still resolve. The trigger runs inside
 * the TRUNCATE's transaction: if the TRUNCATE fails (refused by a foreign key without CASCADE, or by
 * an append-only table it cascades into), the rows it wrote go with it. A service transaction
 * (`app.admin_change = 'service'`) writes none, as for the row trigger; the service never truncates.
 * docs/decisions/0031-admin-changes.md.
 */
export class AdminChangeTruncate1767300000000 implements MigrationInterface {
  name = 'AdminChangeTruncate1767300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "AdminChangeFromDatabaseTruncate"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        old_row jsonb;
        key text;
        piece text;
        changes text;
        action smallint;
        target_table text;
        target_id bigint;
        target_name text;
        target_tenant integer;
      BEGIN
        IF current_setting('app.admin_change', true) = 'service' THEN RETURN NULL; END IF;
        FOR old_row IN EXECUTE format('SELECT to_jsonb(t) FROM %I.%I t', TG_TABLE_SCHEMA, TG_TABLE_NAME) LOOP
          changes := '';
          FOR key IN SELECT k FROM jsonb_object_keys(old_row) AS k ORDER BY k COLLATE "C" LOOP
            piece := to_json(key)::text || ':['
              || CASE WHEN key IN ('Password', 'ApiKey') AND old_row ->> key IS NOT NULL THEN '"(secret)"' ELSE (old_row -> key)::text END
              || ',null]';
            IF length(changes) + length(piece) + 1 > 8192 - 20 THEN
              changes := changes || CASE WHEN changes = '' THEN '' ELSE ',' END || '"…":"truncated"';
              EXIT;
            END IF;
            changes := changes || CASE WHEN changes = '' THEN '' ELSE ',' END || piece;
          END LOOP;

          target_table := TG_TABLE_NAME;
          target_id := (old_row ->> 'Id')::bigint;
          target_name := old_row ->> 'Name';
          target_tenant := NULL;
          IF TG_TABLE_NAME = 'TenantRegistry' THEN
            action := 2;
            target_tenant := target_id;
          ELSIF TG_TABLE_NAME = 'RoleRegistry' THEN
            action := 4;
            target_tenant := (old_row ->> 'TenantRegistryId')::integer;
          ELSIF TG_TABLE_NAME = 'RoleRegistryPermission' THEN
            action := 4;
            target_table := 'RoleRegistry';
            target_id := (old_row ->> 'RoleRegistryId')::bigint;
            SELECT r."Name", r."TenantRegistryId" INTO target_name, target_tenant FROM "RoleRegistry" r WHERE r."Id" = target_id;
          ELSIF TG_TABLE_NAME = 'UserRegistry' THEN
            action := 7;
            SELECT r."TenantRegistryId" INTO target_tenant FROM "RoleRegistry" r WHERE r."Id" = (old_row ->> 'RoleRegistryId')::integer;
          ELSE
            action := 11;
            SELECT r."TenantRegistryId" INTO target_tenant
              FROM "UserRegistry" u JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId" WHERE u."Id" = (old_row ->> 'UserRegistryId')::integer;
          END IF;

          INSERT INTO "AdminChange" ("CreatedUser", "CredentialTypeId", "ActionTypeId", "TargetTable", "TargetId", "TargetName",
                                     "TargetTenantRegistryId", "Failed", "Changes", "RemoteIp", "LocalIp", "UserAgent")
          VALUES (left(current_user, 256), 4, action, target_table, target_id,
                  left(regexp_replace(target_name, '[\\u0001-\\u001f\\u007f-\\u009f]', '', 'g'), 256), target_tenant, false,
                  '{' || changes || '}', left(host(inet_client_addr()), 64), left(host(inet_server_addr()), 64),
                  NULLIF(left(regexp_replace(current_setting('application_name', true), '[\\u0001-\\u001f\\u007f-\\u009f]', '', 'g'), 512), ''));
        END LOOP;
        RETURN NULL;
      END $$`);
    for (const table of REGISTRY_TABLES) {
      await q.query(
        `CREATE TRIGGER "${table}_AdminChangeTruncate" BEFORE TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "AdminChangeFromDatabaseTruncate"()`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of REGISTRY_TABLES) await q.query(`DROP TRIGGER IF EXISTS "${table}_AdminChangeTruncate" ON "${table}"`);
    await q.query(`DROP FUNCTION IF EXISTS "AdminChangeFromDatabaseTruncate"()`);
  }
}
