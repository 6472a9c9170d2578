import { CHANNELS } from '../bus/bus';
import { Permission } from '../access/permissions';

/** What a stream's caller may read (contract 13): its tenant, whether it is a landlord, its permissions. */
export interface StreamScope {
  tenantRegistryId: number;
  landlord: boolean;
  permissions: number[];
}

/** Who may receive one bus message: landlords always; others only within `tenantRegistryId`, holding `permission`. */
export interface Audience {
  /** Null: landlords only. */
  tenantRegistryId: number | null;
  /** A permission the caller must hold besides being in the tenant; null for none. */
  permission: number | null;
}

const LANDLORDS_ONLY: Audience = { tenantRegistryId: null, permission: null };

/**
 * The permission each kind of registry entry is read with through its routes (contract 6): tenants
 * are the landlord's alone, roles need 34, users and their keys 35.
 */
const READ_PERMISSION: Record<string, number | null> = {
  UserRegistry: Permission.ReadWriteSecurityUser,
  UserRegistryApiKey: Permission.ReadWriteSecurityUser,
  RoleRegistry: Permission.ReadWriteSecurityRole,
};

function tenantOf(value: unknown): number | null {
  const tenant = (value as { tenantRegistryId?: unknown } | null)?.tenantRegistryId;
  return typeof tenant === 'number' && Number.isSafeInteger(tenant) ? tenant : null;
}

/**
 * The audience of a message, decided once per message, deny by default: anything that does not say
 * which tenant it belongs to (or is not JSON, or names an unknown kind of entry) reaches landlord
 * streams only.
 * - Watcher: the streams of the message's `tenantRegistryId`, and landlords.
 * - ServiceChange: those who could read the changed entry through the registry routes: same tenant
 *   and the entry's read permission; tenants themselves, landlords only.
 */
export function audienceOf(channel: string, raw: string): Audience {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return LANDLORDS_ONLY;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return LANDLORDS_ONLY;
  const tenantRegistryId = tenantOf(value);
  if (tenantRegistryId === null) return LANDLORDS_ONLY;
  if (channel === CHANNELS.watcher) return { tenantRegistryId, permission: null };
  if (channel === CHANNELS.serviceChange) {
    const permission = READ_PERMISSION[String((value as { entity?: unknown }).entity)];
    return permission === undefined || permission === null ? LANDLORDS_ONLY : { tenantRegistryId, permission };
  }
  return LANDLORDS_ONLY;
}

export function mayReceive(scope: StreamScope, audience: Audience): boolean {
  if (scope.landlord) return true;
  if (audience.tenantRegistryId === null || audience.tenantRegistryId !== scope.tenantRegistryId) return false;
  return audience.permission === null || scope.permissions.includes(audience.permission);
}

/** The part of a stream a scope change may concern: whose it is and what it may read now. */
export interface ScopedStream {
  userRegistryId: number;
  scope: StreamScope;
}

/**
 * Which streams a ServiceChange message may change the scope of, or null for none: a user's change
 * (role, tenant, activity) concerns that user's streams; a role's or a tenant's change (permissions,
 * activity, landlord) the streams of that tenant. A message that does not say its tenant concerns every
 * stream (deny by default: the scopes are read again).
 */
export function scopeChangeOf(raw: string): ((stream: ScopedStream) => boolean) | null {
  let value: { entity?: unknown; id?: unknown; tenantRegistryId?: unknown };
  try {
    value = JSON.parse(raw) as typeof value;
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  const id = typeof value.id === 'number' ? value.id : null;
  const tenant = tenantOf(value);
  switch (value.entity) {
    case 'UserRegistry':
      return (stream) => id === null || stream.userRegistryId === id;
    case 'RoleRegistry':
    case 'TenantRegistry':
      return (stream) => tenant === null || stream.scope.tenantRegistryId === tenant;
    default:
      return null;
  }
}
