import { AUTHENTICATION_TYPE_NAMES, FAILURE_TYPE_NAMES } from '../sign-in-trail/audit.types';

/**
 * What an event says about one sealed row, whatever the format (OCSF JSON or CEF): one description
 * per audit table, keyed by table name, so a new sealed table (AdminChange, contract 18) is one entry
 * here and the OCSF, CEF and syslog writers follow. Pure: rows come as the sealer reads them
 * (column name → text, `t`/`f` or booleans, null).
 */
export type Row = Record<string, string | boolean | number | null>;

export type Outcome = 'success' | 'failure' | 'change';

export interface EventFacts {
  /** OCSF class and activity. */
  classUid: number;
  className: string;
  categoryUid: number;
  categoryName: string;
  activityId: number;
  activityName: string;
  /** success, failure (status 2), or an administrative change that took effect (success, higher severity). */
  outcome: Outcome;
  statusDetail: string | null;
  user: { name: string | null; uid: string | null } | null;
  actor: { name: string | null; uid: string | null } | null;
  ip: string | null;
  userAgent: string | null;
  authProtocol: { id: number; name: string } | null;
  /** CEF: name and signature id. */
  cefName: string;
  signatureId: string;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const truthy = (v: unknown): boolean => v === true || v === 't' || v === 'true';

/** OCSF 1.3 class names and categories used here. */
const CLASSES: Record<number, { name: string; category: number; categoryName: string }> = {
  3001: { name: 'Account Change', category: 3, categoryName: 'Identity & Access Management' },
  3002: { name: 'Authentication', category: 3, categoryName: 'Identity & Access Management' },
  3005: { name: 'User Access Management', category: 3, categoryName: 'Identity & Access Management' },
  6003: { name: 'API Activity', category: 6, categoryName: 'Application Activity' },
};

/** OCSF auth_protocol_id of each AuthenticationTypeId (1 password: Other; 2 Negotiate: Kerberos; 3 OIDC: OpenID). */
const AUTH_PROTOCOL_IDS: Record<number, number> = { 1: 99, 2: 2, 3: 4 };

/** AdminChange's class by TargetTable (contract 19): accounts 3001, roles 3005, the rest 6003. */
export const ADMIN_CHANGE_CLASS: Record<string, number> = { UserRegistry: 3001, UserRegistryApiKey: 3001, UserPasskey: 3001, UserSession: 3001, RoleRegistry: 3005 };

/**
 * AdminChange ActionTypeId (contract 18, 19) → OCSF activity within its class: 3001 Account Change
 * (1 Create, 3 Password Change, 4 Password Reset, 6 Delete, 99 Other), 3005 User Access Management
 * (99 Other: a role's permissions are replaced whole), 6003 API Activity (1 Create, 3 Update, 4 Delete).
 */
const ADMIN_ACTIVITY: Record<number, { create?: boolean; delete?: boolean; password?: 'own' | 'reset' }> = {
  1: { create: true }, 3: { create: true }, 5: { create: true }, 10: { create: true }, 15: { create: true },
  7: { delete: true }, 11: { delete: true }, 13: { delete: true }, 17: { delete: true },
  8: { password: 'reset' }, 9: { password: 'own' },
};

function adminActivity(classUid: number, actionTypeId: number): { id: number; name: string } {
  const kind = ADMIN_ACTIVITY[actionTypeId] ?? {};
  if (classUid === 3001) {
    if (kind.create) return { id: 1, name: 'Create' };
    if (kind.delete) return { id: 6, name: 'Delete' };
    if (kind.password === 'own') return { id: 3, name: 'Password Change' };
    if (kind.password === 'reset') return { id: 4, name: 'Password Reset' };
    return { id: 99, name: 'Other' };
  }
  if (classUid === 3005) return { id: 99, name: 'Other' };
  if (kind.create) return { id: 1, name: 'Create' };
  if (kind.delete) return { id: 4, name: 'Delete' };
  return { id: 3, name: 'Update' };
}

/**
 * The facts with their OCSF class filled in. Every property written out rather than `{ ...klass(n), … }`:
 * on Node 20 a spread followed by this many properties took about 25 µs per event, a third of the
 * deliverer's CPU (bench/RESULTS.md, issue 30); a plain literal takes well under 1 µs.
 */
function withClass(classUid: number, f: Omit<EventFacts, 'classUid' | 'className' | 'categoryUid' | 'categoryName'>): EventFacts {
  const c = CLASSES[classUid];
  return {
    classUid,
    className: c.name,
    categoryUid: c.category,
    categoryName: c.categoryName,
    activityId: f.activityId,
    activityName: f.activityName,
    outcome: f.outcome,
    statusDetail: f.statusDetail,
    user: f.user,
    actor: f.actor,
    ip: f.ip,
    userAgent: f.userAgent,
    authProtocol: f.authProtocol,
    cefName: f.cefName,
    signatureId: f.signatureId,
  };
}

interface TableEvents {
  /** The facts of a row still in the table. */
  facts(row: Row): EventFacts;
  /** The class of a leaf whose row is gone (retention), from the table alone. */
  removedClass: number;
  cefName: string;
}

/** One entry per sealed table. */
export const TABLE_EVENTS: Record<string, TableEvents> = {
  UserLogin: {
    removedClass: 3002,
    cefName: 'Sign-in',
    facts(row) {
      const failed = truthy(row.Failed);
      const failure = row.FailureTypeId === null || row.FailureTypeId === undefined ? null : Number(row.FailureTypeId);
      const authenticationType = Number(row.AuthenticationTypeId);
      return withClass(3002, {
        activityId: 1,
        activityName: 'Logon',
        outcome: failed ? 'failure' : 'success',
        statusDetail: failed ? (failure !== null ? (FAILURE_TYPE_NAMES[failure] ?? String(failure)) : text(row.FailureMessage)) : null,
        user: { name: text(row.CreatedUser), uid: text(row.UserRegistryId) },
        actor: null,
        ip: text(row.RemoteIp),
        userAgent: text(row.UserAgent),
        authProtocol: AUTHENTICATION_TYPE_NAMES[authenticationType]
          ? { id: AUTH_PROTOCOL_IDS[authenticationType] ?? 99, name: AUTHENTICATION_TYPE_NAMES[authenticationType] }
          : null,
        cefName: 'Sign-in',
        signatureId: `UserLogin:${failure ?? 0}`,
      });
    },
  },
  UserLogout: {
    removedClass: 3002,
    cefName: 'Sign-out',
    facts(row) {
      const failed = Number(row.OutcomeId) === 3;
      return withClass(3002, {
        activityId: 2,
        activityName: 'Logoff',
        outcome: failed ? 'failure' : 'success',
        statusDetail: failed ? 'RevocationFailed' : null,
        user: { name: text(row.CreatedUser), uid: text(row.UserRegistryId) },
        actor: null,
        ip: text(row.RemoteIp),
        userAgent: text(row.UserAgent),
        authProtocol: null,
        cefName: 'Sign-out',
        signatureId: `UserLogout:${text(row.ReasonId) ?? 0}`,
      });
    },
  },
  AdminChange: {
    removedClass: 6003,
    cefName: 'Administrative change',
    facts(row) {
      const classUid = ADMIN_CHANGE_CLASS[String(row.TargetTable)] ?? 6003;
      const failed = truthy(row.Failed);
      const actionTypeId = Number(row.ActionTypeId);
      const activity = adminActivity(classUid, actionTypeId);
      return withClass(classUid, {
        activityId: activity.id,
        activityName: activity.name,
        outcome: failed ? 'failure' : 'change',
        statusDetail: failed ? 'Refused' : null,
        // The target user when the change is about a user; the actor always.
        user: row.TargetTable === 'UserRegistry' ? { name: text(row.TargetName), uid: text(row.TargetId) } : null,
        actor: { name: text(row.CreatedUser), uid: text(row.UserRegistryId) },
        ip: text(row.RemoteIp),
        userAgent: text(row.UserAgent),
        authProtocol: null,
        cefName: 'Administrative change',
        signatureId: `AdminChange:${Number.isFinite(actionTypeId) ? actionTypeId : 0}`,
      });
    },
  },
  AuditRetentionRun: {
    removedClass: 6003,
    cefName: 'Retention run',
    facts() {
      return withClass(6003, {
        activityId: 4,
        activityName: 'Delete',
        outcome: 'success',
        statusDetail: null,
        user: null,
        actor: null,
        ip: null,
        userAgent: null,
        authProtocol: null,
        cefName: 'Retention run',
        signatureId: 'AuditRetentionRun:0',
      });
    },
  },
};

/** The facts of a leaf: from its row, or (row gone, or a table this build does not know) from the leaf record alone. */
export function factsOf(table: string, row: Row | null): EventFacts {
  const events = TABLE_EVENTS[table];
  if (events && row) return events.facts(row);
  const classUid = events?.removedClass ?? 6003;
  return withClass(classUid, {
    activityId: 99,
    activityName: 'Other',
    outcome: 'success',
    statusDetail: null,
    user: null,
    actor: null,
    ip: null,
    userAgent: null,
    authProtocol: null,
    cefName: events?.cefName ?? table,
    signatureId: `${table}:0`,
  });
}
