import type { Principal } from '../access/principal';
import { forbidden } from '../common/problem';

/**
 * The tenant a caller administers: null for a landlord (every tenant), else its own. Every registry
 * query filters by it, so an entry of another tenant is simply absent (404), never revealed.
 */
export function tenantScope(principal: Principal): number | null {
  return principal.landlord ? null : principal.tenantRegistryId;
}

/**
 * Refuses (403) a non-landlord caller acting with permissions it does not hold itself: granting them
 * to a role, placing a user in a role that has them, or taking over (editing, resetting the password
 * of) a user whose role has them. Without this a tenant administrator holding only 35 could create a
 * user in a stronger role, sign in as it, and escalate.
 */
export function refuseEscalation(principal: Principal, permissions: readonly number[], action: string): void {
  if (principal.landlord) return;
  const held = new Set(principal.permissions);
  const missing = permissions.filter((id) => !held.has(id));
  if (missing.length > 0) {
    throw forbidden(`You cannot ${action}: it involves permissions you do not hold (${[...new Set(missing)].sort((a, b) => a - b).join(', ')}).`);
  }
}
