import { enumNames } from '../common/enum-names';

/**
 * ActionTypeId of AdminChange (contract 18, with the kinds sections 19 and 20 add): what was done.
 * Served with the other code tables (src/web/code-tables.ts).
 */
export enum ActionTypeId {
  TenantCreated = 1,
  TenantChanged = 2,
  RoleCreated = 3,
  RoleChanged = 4,
  UserCreated = 5,
  UserChanged = 6,
  UserDeleted = 7,
  PasswordSetByAdministrator = 8,
  PasswordChanged = 9,
  ApiKeyCreated = 10,
  ApiKeyRevoked = 11,
  TokensRevoked = 12,
  SessionEnded = 13,
  RowsAdopted = 14,
  SinkCreated = 15,
  SinkChanged = 16,
  SinkDeleted = 17,
  SinkReplayed = 18,
  PasskeyRegistered = 19,
  PasskeyRemoved = 20,
}

/** ActionTypeId's names, as the contract spells them (the enum's own). */
export const ACTION_TYPE_NAMES: Record<number, string> = enumNames(ActionTypeId);

/** CredentialTypeId of AdminChange (contract 18): how the actor was signed in. */
export enum CredentialTypeId {
  ApiKey = 1,
  Bearer = 2,
  Cookie = 3,
  /** A change made in the database, without the service (recorded by the registry triggers). */
  Database = 4,
}

export const CREDENTIAL_TYPE_NAMES: Record<number, string> = {
  1: 'API key',
  2: 'Bearer token',
  3: 'Cookie session',
  4: 'Database',
};

/** TargetTable of AdminChange: the tables a change may target (contract 18, 19, 20), plus the sealed tables adopted rows belong to. */
export const ADMIN_CHANGE_TARGET_TABLES = [
  'TenantRegistry',
  'RoleRegistry',
  'UserRegistry',
  'UserRegistryApiKey',
  'UserSession',
  'SecuritySink',
  'UserPasskey',
  'UserLogin',
  'UserLogout',
  'AuditRetentionRun',
  'AdminChange',
] as const;
export type AdminChangeTargetTable = (typeof ADMIN_CHANGE_TARGET_TABLES)[number];
