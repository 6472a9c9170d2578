import { TestApp } from './app';

/** An AdminChange row as the tests read it (contract 18), ids as text (bigint). */
export interface AdminChangeRow {
  Id: string;
  CreatedUser: string;
  UserRegistryId: number | null;
  TenantRegistryId: number | null;
  CredentialTypeId: number;
  CredentialId: string | null;
  ActionTypeId: number;
  TargetTable: string;
  TargetId: string | null;
  TargetName: string | null;
  TargetTenantRegistryId: number | null;
  Failed: boolean;
  Changes: string;
}

/** The AdminChange rows after `afterId`, oldest first. */
export function adminChangesAfter(t: TestApp, afterId: string): Promise<AdminChangeRow[]> {
  return t.db.query<AdminChangeRow>(
    `SELECT a."Id"::text AS "Id", a."CreatedUser", a."UserRegistryId", a."TenantRegistryId", a."CredentialTypeId", a."CredentialId", a."ActionTypeId",
            a."TargetTable", a."TargetId"::text AS "TargetId", a."TargetName", a."TargetTenantRegistryId", a."Failed", a."Changes"
       FROM "AdminChange" a WHERE a."Id" > $1::bigint ORDER BY a."Id"`,
    [afterId],
  );
}

/** The newest AdminChange Id ("0" when there is none): where a test starts counting its rows. */
export async function lastAdminChangeId(t: TestApp): Promise<string> {
  const [{ id }] = await t.db.query<{ id: string }>(`SELECT coalesce(max("Id"), 0)::text AS id FROM "AdminChange"`);
  return id;
}
