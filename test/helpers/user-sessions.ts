import * as jwt from 'jsonwebtoken';
import { TestApp } from './app';
import { AuthenticationTypeId } from '../../src/sign-in-trail/audit.types';

/** The UserSession row a token names by its `sid` (contract 14), or undefined. */
export async function sessionRowOf(t: TestApp, token: string): Promise<Record<string, unknown> | undefined> {
  const sid = (jwt.decode(token) as { sid?: string } | null)?.sid;
  if (typeof sid !== 'string') return undefined;
  const [row] = await t.db.query<Record<string, unknown>>(`SELECT * FROM "UserSession" WHERE "Id" = $1`, [sid]);
  return row;
}

/** Every UserSession row of a user, oldest first. */
export function sessionRowsOf(t: TestApp, userRegistryId: number): Promise<Record<string, unknown>[]> {
  return t.db.query(`SELECT * FROM "UserSession" WHERE "UserRegistryId" = $1 ORDER BY "CreatedDate", "Id"`, [userRegistryId]);
}

/** What a fresh session row of `user` signed in by scheme `authenticationTypeId` holds. */
export function openSessionOf(
  user: { id: number; tenantRegistryId: number },
  authenticationTypeId: AuthenticationTypeId,
  start: number,
): Record<string, unknown> {
  return {
    UserRegistryId: user.id,
    TenantRegistryId: user.tenantRegistryId,
    AuthenticationTypeId: authenticationTypeId,
    CreatedDate: new Date(start),
    LastSeenDate: new Date(start),
    RemoteIp: '127.0.0.1',
    EndedDate: null,
    EndReasonId: null,
    EndedByUser: null,
  };
}
