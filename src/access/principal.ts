import type { Request } from 'express';

export type AuthenticationType = 'ApiKey' | 'Bearer' | 'Cookie';

/**
 * Who is calling, established by the global guard. Permissions come from the database on every
 * request, never from token claims.
 */
export interface Principal {
  userRegistryId: number;
  userName: string;
  tenantRegistryId: number;
  tenantName: string;
  landlord: boolean;
  permissions: number[];
  authenticationType: AuthenticationType;
  /** Session start, token expiry and absolute expiry; null for API keys. */
  sessionStartDate: Date | null;
  expiration: Date | null;
  absoluteExpiration: Date | null;
  /** The UserSession of a JWT (its `sid` claim, contract 14); null for API keys, which have no sessions. */
  sessionId: string | null;
  /** First eight characters of the API key, for audit; null for JWTs. */
  apiKeyDisplay: string | null;
}

export type AuthenticatedRequest = Request & { principal?: Principal };
