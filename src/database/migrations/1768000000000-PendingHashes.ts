import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The enqueue trigger hashes the row it enqueues (issue 29; docs/decisions/0039). AuditPending gets the
 * row's leaf date, its RowHash (SHA-256 of the canonical form, contract 15) and its LeafHash (SHA-256 of
 * 0x00 and the leaf record), written by "AuditEnqueue" in the inserting transaction, as a Certificate
 * Transparency log's front end hashes a leaf when it is queued; the sealer, one node at a time
 * cluster-wide, then only numbers the waiting leaves, appends them and extends the tree. A row no
 * canonical form can hold (a negative Id, a date outside years 0000-9999) gets NULL hashes, and so
 * does an entry written by anything else than this function: the sealer's careful statement hashes
 * those from the rows, as it did every row before.
 *
 * Frozen (STYLE.md 15): the canonical form of each sealed table is written out here as it stands today
 * (src/audit-log/audited-rows.repository.ts canonicalSql, sealableSql; canonical.ts column order), so a
 * later change of those helpers can never change what this migration installs.
 * test/audit-canonical-sql.e2e-spec.ts holds the hashes this function writes to what canonicalRow
 * computes in JavaScript, over hostile rows, on PostgreSQL and PGlite: a drift fails there.
 *
 * Each branch is planned only when a row of its table is enqueued (PL/pgSQL compiles a trigger function
 * once per table it fires on), so a table's branch names only that table's columns. The dates and the
 * row hash go through variables: each assignment is a simple expression, evaluated without a plan of
 * its own, where one INSERT … SELECT over subqueries cost ~18 µs a row against ~5 (bench/RESULTS.md). The triggers on the
 * sealed tables, their partitions and attached copies already call "AuditEnqueue"('<table>'): no
 * trigger changes, and the columns are added as NULL without rewriting the table.
 */
export class PendingHashes1768000000000 implements MigrationInterface {
  name = 'PendingHashes1768000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE "AuditPending"
        ADD COLUMN IF NOT EXISTS "RowCreatedDate" timestamptz,
        ADD COLUMN IF NOT EXISTS "RowHash" bytea,
        ADD COLUMN IF NOT EXISTS "LeafHash" bytea`);
    await q.query(enqueueFunction(await currentSchema(q)));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION "AuditEnqueue"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${await currentSchema(q)}."AuditPending" ("TableName", "RowId") VALUES (TG_ARGV[0], NEW."Id")
          ON CONFLICT ("TableName", "RowId") DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`ALTER TABLE "AuditPending" DROP COLUMN IF EXISTS "RowCreatedDate", DROP COLUMN IF EXISTS "RowHash", DROP COLUMN IF EXISTS "LeafHash"`);
  }
}

/** The schema the tables live in, quoted as an identifier (as migration ServiceChangeMark finds it). */
async function currentSchema(q: QueryRunner): Promise<string> {
  const [{ schema }] = (await q.query(`SELECT quote_ident(current_schema()) AS "schema"`)) as { schema: string }[];
  return schema;
}

/**
 * "AuditEnqueue" as this migration installs it. AuditPending is named with its schema, as migration
 * ServiceChangeMark made the function name it: a session's temporary table of that name comes first in
 * its search path and must not receive the entries.
 */
const enqueueFunction = (schema: string) => `
      CREATE OR REPLACE FUNCTION "AuditEnqueue"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        "@CreatedDate" text;
        "@SessionStartDate" text;
        "@RunDate" text;
        "@Cutoff" text;
        "@RowHash" bytea;
      BEGIN
        IF TG_ARGV[0] = 'UserLogin' THEN
          "@CreatedDate" := to_char((NEW."CreatedDate") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
          "@RowHash" := CASE WHEN COALESCE(NEW."Id" >= 0 AND octet_length("@CreatedDate") = 27, false) THEN sha256(convert_to('["UserLogin","' || NEW."Id"::text || '",' || COALESCE('"' || "@CreatedDate" || '"', 'null') || ',' || COALESCE(to_json(NEW."CreatedUser"::text)::text, 'null') || ',' || COALESCE(NEW."UserRegistryId"::text, 'null') || ',' || COALESCE(NEW."TenantRegistryId"::text, 'null') || ',' || COALESCE(NEW."AuthenticationTypeId"::text, 'null') || ',' || COALESCE(NEW."Failed"::text, 'null') || ',' || COALESCE(NEW."FailureTypeId"::text, 'null') || ',' || COALESCE(to_json(NEW."FailureMessage"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."RemoteIp"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."LocalIp"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."UserAgent"::text)::text, 'null') || ']', 'UTF8')) END;
          INSERT INTO ${schema}."AuditPending" ("TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash")
          VALUES ('UserLogin', NEW."Id", NEW."CreatedDate", "@RowHash",
                  sha256(decode('00', 'hex') || convert_to('UserLogin' || chr(10) || NEW."Id"::text || chr(10) || "@CreatedDate" || chr(10) || encode("@RowHash", 'base64') || chr(10), 'UTF8')))
              ON CONFLICT ("TableName", "RowId") DO NOTHING;
        ELSIF TG_ARGV[0] = 'UserLogout' THEN
          "@CreatedDate" := to_char((NEW."CreatedDate") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
          "@SessionStartDate" := to_char((NEW."SessionStartDate") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
          "@RowHash" := CASE WHEN COALESCE(NEW."Id" >= 0 AND octet_length("@CreatedDate") = 27 AND ("@SessionStartDate" IS NULL OR octet_length("@SessionStartDate") = 27), false) THEN sha256(convert_to('["UserLogout","' || NEW."Id"::text || '",' || COALESCE('"' || "@CreatedDate" || '"', 'null') || ',' || COALESCE(to_json(NEW."CreatedUser"::text)::text, 'null') || ',' || COALESCE(NEW."UserRegistryId"::text, 'null') || ',' || COALESCE(NEW."TenantRegistryId"::text, 'null') || ',' || COALESCE(NEW."ReasonId"::text, 'null') || ',' || COALESCE(NEW."OutcomeId"::text, 'null') || ',' || COALESCE(to_json(NEW."RemoteIp"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."LocalIp"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."UserAgent"::text)::text, 'null') || ',' || COALESCE('"' || "@SessionStartDate" || '"', 'null') || ',' || COALESCE(to_json(NEW."CutByUser"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."Message"::text)::text, 'null') || ']', 'UTF8')) END;
          INSERT INTO ${schema}."AuditPending" ("TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash")
          VALUES ('UserLogout', NEW."Id", NEW."CreatedDate", "@RowHash",
                  sha256(decode('00', 'hex') || convert_to('UserLogout' || chr(10) || NEW."Id"::text || chr(10) || "@CreatedDate" || chr(10) || encode("@RowHash", 'base64') || chr(10), 'UTF8')))
              ON CONFLICT ("TableName", "RowId") DO NOTHING;
        ELSIF TG_ARGV[0] = 'AuditRetentionRun' THEN
          "@RunDate" := to_char((NEW."RunDate") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
          "@Cutoff" := to_char((NEW."Cutoff") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
          "@RowHash" := CASE WHEN COALESCE(NEW."Id" >= 0 AND octet_length("@RunDate") = 27 AND ("@Cutoff" IS NULL OR octet_length("@Cutoff") = 27), false) THEN sha256(convert_to('["AuditRetentionRun","' || NEW."Id"::text || '",' || COALESCE('"' || "@RunDate" || '"', 'null') || ',' || COALESCE(to_json(NEW."TableName"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."PartitionName"::text)::text, 'null') || ',' || COALESCE('"' || "@Cutoff" || '"', 'null') || ',' || COALESCE(NEW."RowCount"::text, 'null') || ']', 'UTF8')) END;
          INSERT INTO ${schema}."AuditPending" ("TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash")
          VALUES ('AuditRetentionRun', NEW."Id", NEW."RunDate", "@RowHash",
                  sha256(decode('00', 'hex') || convert_to('AuditRetentionRun' || chr(10) || NEW."Id"::text || chr(10) || "@RunDate" || chr(10) || encode("@RowHash", 'base64') || chr(10), 'UTF8')))
              ON CONFLICT ("TableName", "RowId") DO NOTHING;
        ELSIF TG_ARGV[0] = 'AdminChange' THEN
          "@CreatedDate" := to_char((NEW."CreatedDate") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
          "@RowHash" := CASE WHEN COALESCE(NEW."Id" >= 0 AND octet_length("@CreatedDate") = 27, false) THEN sha256(convert_to('["AdminChange","' || NEW."Id"::text || '",' || COALESCE('"' || "@CreatedDate" || '"', 'null') || ',' || COALESCE(to_json(NEW."CreatedUser"::text)::text, 'null') || ',' || COALESCE(NEW."UserRegistryId"::text, 'null') || ',' || COALESCE(NEW."TenantRegistryId"::text, 'null') || ',' || COALESCE(NEW."CredentialTypeId"::text, 'null') || ',' || COALESCE(to_json(NEW."CredentialId"::text)::text, 'null') || ',' || COALESCE(NEW."ActionTypeId"::text, 'null') || ',' || COALESCE(to_json(NEW."TargetTable"::text)::text, 'null') || ',' || COALESCE(NEW."TargetId"::text, 'null') || ',' || COALESCE(to_json(NEW."TargetName"::text)::text, 'null') || ',' || COALESCE(NEW."TargetTenantRegistryId"::text, 'null') || ',' || COALESCE(NEW."Failed"::text, 'null') || ',' || COALESCE(to_json(NEW."Changes"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."RemoteIp"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."LocalIp"::text)::text, 'null') || ',' || COALESCE(to_json(NEW."UserAgent"::text)::text, 'null') || ']', 'UTF8')) END;
          INSERT INTO ${schema}."AuditPending" ("TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash")
          VALUES ('AdminChange', NEW."Id", NEW."CreatedDate", "@RowHash",
                  sha256(decode('00', 'hex') || convert_to('AdminChange' || chr(10) || NEW."Id"::text || chr(10) || "@CreatedDate" || chr(10) || encode("@RowHash", 'base64') || chr(10), 'UTF8')))
              ON CONFLICT ("TableName", "RowId") DO NOTHING;
        ELSE
          INSERT INTO ${schema}."AuditPending" ("TableName", "RowId") VALUES (TG_ARGV[0], NEW."Id") ON CONFLICT ("TableName", "RowId") DO NOTHING;
        END IF;
        RETURN NULL;
      END $$`;
