import { Permission } from '../users/permissions';

/** Who may open a page. Anonymous pages never redirect; the others need a session first. */
export type PageAccess = 'anonymous' | 'session' | 'landlord' | { permission: number };

/** One page of the user interface: a fixed HTML shell whose script builds the content. */
export interface PageDefinition {
  /** The route, exactly as contract 11 names it. */
  path: string;
  title: string;
  /** The module under web/assets that builds the page. */
  script: string;
  access: PageAccess;
  /** For the generic grid: the key of its description in web/assets/grids.js. */
  grid?: string;
}

const SECURITY_USER = { permission: Permission.ReadWriteSecurityUser };
const SECURITY_ROLE = { permission: Permission.ReadWriteSecurityRole };

const telemetry = (section: 'Performance' | 'Logs', name: string, title: string): PageDefinition => ({
  path: `/Administration/${section}/${name}`,
  title,
  script: 'grid-page.js',
  access: 'landlord',
  grid: name,
});

/**
 * Every page the service serves (contract 11). The shells carry no data: each page reads what it
 * shows from the authenticated API with the session cookie, so the API's checks stay the only ones
 * that matter, and the checks here only spare a browser a page it cannot use.
 */
export const PAGES: readonly PageDefinition[] = [
  { path: '/', title: 'Home', script: 'home.js', access: 'session' },
  { path: '/Account/Login', title: 'Sign in', script: 'login.js', access: 'anonymous' },
  { path: '/Account/Logout', title: 'Sign out', script: 'logout.js', access: 'anonymous' },
  { path: '/Account/ChangePassword', title: 'Change password', script: 'change-password.js', access: 'session' },
  { path: '/Account/Sessions', title: 'Sessions', script: 'account-sessions.js', access: 'session' },
  { path: '/Account/Passkeys', title: 'Passkeys', script: 'account-passkeys.js', access: 'session' },
  { path: '/Administration/Security/Tenants', title: 'Tenants', script: 'tenants.js', access: 'landlord' },
  { path: '/Administration/Security/Roles', title: 'Roles', script: 'roles.js', access: SECURITY_ROLE },
  { path: '/Administration/Security/Users', title: 'Users', script: 'users.js', access: SECURITY_USER },
  { path: '/Administration/Security/UserLogin', title: 'User Login', script: 'grid-page.js', access: SECURITY_USER, grid: 'UserLogin' },
  { path: '/Administration/Security/UserLogout', title: 'User Logout', script: 'grid-page.js', access: SECURITY_USER, grid: 'UserLogout' },
  // Landlord administrators (a landlord holds permission 35): the log covers every tenant (contract 15).
  { path: '/Administration/Security/AuditIntegrity', title: 'Audit integrity', script: 'audit-integrity.js', access: 'landlord' },
  telemetry('Performance', 'ArchiverStagePerformanceCounter', 'Archiver Stage Performance Counter'),
  telemetry('Performance', 'ArchiverWarning', 'Archiver Warning'),
  telemetry('Performance', 'CaseCreationStagePerformanceCounter', 'Case Creation Stage Performance Counter'),
  telemetry('Performance', 'CaseCreationWarning', 'Case Creation Warning'),
  telemetry('Performance', 'CaptureQueueHealth', 'Capture Queue Health'),
  telemetry('Performance', 'OpenTelemetryMetric', 'OpenTelemetry Metric'),
  telemetry('Logs', 'ModelInvokeWarning', 'Model Invoke Warning'),
  telemetry('Logs', 'RedisConnectionEvent', 'Redis Connection Event'),
  telemetry('Logs', 'RedisSentinelEvent', 'Redis Sentinel Event'),
];

/** Case-insensitive lookup, as the original ASP.NET routes matched regardless of case. */
export function findPage(path: string): PageDefinition | undefined {
  const normalised = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return PAGES.find((page) => page.path.toLowerCase() === normalised.toLowerCase());
}
