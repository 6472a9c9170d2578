/**
 * The shapes of the API answers the pages read (contract.md), as far as the pages read them: types
 * only, for the check of web/assets (web/tsconfig.json). Not served; a page imports them in JSDoc,
 * `@typedef {import('./api-types.js').User} User`.
 */

/** GET /api/Authentication/Session. */
export interface Session {
  userName: string;
  tenantName: string;
  tenantRegistryId: number;
  landlord: boolean;
  permissions: number[];
}

/** GET /api/TenantRegistry. */
export interface Tenant {
  id: number;
  name: string;
  landlord: boolean;
  active: boolean;
}

/** GET /api/RoleRegistry and /api/RoleRegistry/Assignable. */
export interface Role {
  id: number;
  name: string;
  tenantRegistryId: number;
  tenantName: string;
  active?: boolean;
  permissions: number[];
}

/** GET /api/PermissionSpecification. */
export interface Permission {
  id: number;
  name: string;
}

/** GET /api/UserRegistry and /api/UserRegistry/{id}. */
export interface User {
  id: number;
  name: string;
  email?: string | null;
  active?: boolean;
  passwordLocked?: boolean;
  roleRegistryId?: number;
  roleName?: string;
  tenantName?: string;
  lastLoginDate?: string | null;
  passwordCreatedDate?: string | null;
  passwordExpiryDate?: string | null;
  wirePasswordHash?: boolean;
  createdDate?: string;
  createdUser?: string | null;
}

/** GET /api/UserRegistry/{id}/ApiKey (POST answers the clear `apiKey` once). */
export interface ApiKey {
  id: number;
  name: string;
  description?: string | null;
  apiKeyDisplay: string;
  apiKey?: string;
  createdDate: string;
  createdUser?: string | null;
  lastUsedDate?: string | null;
  lastUsedUserAgent?: string | null;
  revoked?: boolean;
  revokedDate?: string | null;
  revokedBy?: string | null;
}

/** A row of GET /api/Authentication/Sessions and /api/UserRegistry/{id}/Sessions. */
export interface SessionRow {
  id: string;
  createdDate: string;
  lastSeenDate?: string | null;
  remoteIp?: string | null;
  userAgent?: string | null;
  authenticationType?: string | null;
  current?: boolean;
}

/** One statistics column of a grid read: its figures and its 10-bucket histogram. */
export interface ColumnStatistics {
  min: number | string | null;
  max: number | string | null;
  mean?: number | string | null;
  median?: number | string | null;
  standardDeviation?: number | string | null;
  histogram?: { from: number | string; to: number | string; frequency: number | string }[];
}

/** A grid read: the rows loaded, how many match, and per statistics column its figures. */
export interface GridAnswer {
  rows?: Record<string, unknown>[];
  total?: number | string;
  statistics?: Record<string, ColumnStatistics>;
}

/** One bucket of a series (contract 17): `at`, `count` and the measure's fields (mean, max...). */
export interface SeriesPoint {
  at: string;
  count: number | string;
  [field: string]: unknown;
}

export interface Series {
  key: string;
  name?: string | null;
  points: SeriesPoint[];
}

/** GET {grid}/Series. */
export interface SeriesAnswer {
  from: string;
  to: string;
  bucketSeconds: number;
  series: Series[];
}

/** A row of GET /api/Authentication/Passkeys and /api/UserRegistry/{id}/Passkeys (contract 20). */
export interface Passkey {
  id: number;
  name: string;
  createdDate: string;
  lastUsedDate: string | null;
  lastUsedDevice: string | null;
  backupEligible: boolean;
  backedUp: boolean;
}

/**
 * A passkey prompt (contract 20): the answer of Passkey/Options, and the 202 of a right password when
 * a passkey is asked for (`methods` then lists the ways to answer: passkey, and passcode where it may).
 */
export interface PasskeyPrompt {
  challengeId: string;
  options: PublicKeyCredentialRequestOptionsJSON;
  methods?: string[];
}
