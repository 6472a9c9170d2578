import { TELEMETRY_TABLES } from '../telemetry/telemetry.tables';
import { Permission } from '../access/permissions';

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
  /** For the generic grid: the key of its grid page (web/page-tables.ts), served to grids.js. */
  grid?: string;
  /** Where the menu shows it: a section (null: above every section) and its place there, from 1. */
  menu?: MenuPlace;
}

/** The sections of the menu, in their order (null: the items above every section). */
export const MENU_SECTIONS = [null, 'Security', 'Performance', 'Logs', 'Account'] as const;
export type MenuPlace = { section: (typeof MENU_SECTIONS)[number]; place: number };

/** One item of the menu: the page, its label, and who may open it (the page's own access rule). */
export interface MenuItem {
  path: string;
  label: string;
  access: PageAccess;
}

/** One section of the menu (web/page-tables.ts menu()). */
export interface MenuGroup {
  section: string | null;
  items: MenuItem[];
}

const SECURITY_USER = { permission: Permission.ReadWriteSecurityUser };
const SECURITY_ROLE = { permission: Permission.ReadWriteSecurityRole };

/** The grid page of each telemetry table, from its description (telemetry/telemetry.tables.ts), in menu order. */
const TELEMETRY_PAGES: PageDefinition[] = TELEMETRY_TABLES.map(({ read, page }) => ({
  path: `/Administration/${page.section}/${read.table}`,
  title: page.title,
  script: 'grid-page.js',
  access: 'landlord' as const,
  grid: read.table,
  menu: { section: page.section, place: page.place },
})).sort((a, b) => MENU_SECTIONS.indexOf(a.menu.section) - MENU_SECTIONS.indexOf(b.menu.section) || a.menu.place - b.menu.place);

/**
 * Every page the service serves (contract 11). The shells carry no data: each page reads what it
 * shows from the authenticated API with the session cookie, so the API's checks stay the only ones
 * that matter, and the checks here only spare a browser a page it cannot use.
 */
export const PAGES: readonly PageDefinition[] = [
  { path: '/', title: 'Home', script: 'home.js', access: 'session', menu: { section: null, place: 1 } },
  { path: '/Account/Login', title: 'Sign in', script: 'login.js', access: 'anonymous' },
  { path: '/Account/Logout', title: 'Sign out', script: 'logout.js', access: 'anonymous', menu: { section: 'Account', place: 5 } },
  { path: '/Account/ChangePassword', title: 'Change password', script: 'change-password.js', access: 'session', menu: { section: 'Account', place: 3 } },
  { path: '/Account/Sessions', title: 'Sessions', script: 'account-sessions.js', access: 'session', menu: { section: 'Account', place: 1 } },
  { path: '/Account/Passkeys', title: 'Passkeys', script: 'account-passkeys.js', access: 'session', menu: { section: 'Account', place: 2 } },
  { path: '/Administration/Security/Tenants', title: 'Tenants', script: 'tenants.js', access: 'landlord', menu: { section: 'Security', place: 1 } },
  { path: '/Administration/Security/Roles', title: 'Roles', script: 'roles.js', access: SECURITY_ROLE, menu: { section: 'Security', place: 2 } },
  { path: '/Administration/Security/Users', title: 'Users', script: 'users.js', access: SECURITY_USER, menu: { section: 'Security', place: 3 } },
  { path: '/Administration/Security/UserLogin', title: 'User Login', script: 'grid-page.js', access: SECURITY_USER, grid: 'UserLogin', menu: { section: 'Security', place: 4 } },
  { path: '/Administration/Security/UserLogout', title: 'User Logout', script: 'grid-page.js', access: SECURITY_USER, grid: 'UserLogout', menu: { section: 'Security', place: 5 } },
  // Landlord administrators (a landlord holds permission 35): the log covers every tenant (contract 15).
  // Permission 35 as the read's; a tenant administrator's rows are scoped to its tenant by the API (contract 18).
  { path: '/Administration/Security/AdminChanges', title: 'Admin Changes', script: 'grid-page.js', access: SECURITY_USER, grid: 'AdminChange', menu: { section: 'Security', place: 6 } },
  { path: '/Administration/Security/AuditIntegrity', title: 'Audit integrity', script: 'audit-integrity.js', access: 'landlord', menu: { section: 'Security', place: 7 } },
  { path: '/Administration/Security/Sinks', title: 'Sinks', script: 'sinks.js', access: 'landlord', menu: { section: 'Security', place: 8 } },
  ...TELEMETRY_PAGES,
];

/** Menu items that are not pages of this module (the API explorer is Swagger's own page). */
export const MENU_LINKS: readonly (Pick<PageDefinition, 'path' | 'title' | 'access'> & { menu: MenuPlace })[] = [
  // Everyone signed in may open it; each operation still needs its own permission.
  { path: '/swagger/index.html', title: 'API explorer', access: 'session', menu: { section: 'Account', place: 4 } },
];

/** Case-insensitive lookup, as the original ASP.NET routes matched regardless of case. */
export function findPage(path: string): PageDefinition | undefined {
  const normalised = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return PAGES.find((page) => page.path.toLowerCase() === normalised.toLowerCase());
}
