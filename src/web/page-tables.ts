import { ADMIN_CHANGE_GRID_PAGE } from '../admin-changes/admin-change-grid-page';
import { ADMIN_CHANGE_TABLE } from '../admin-changes/admin-change.table';
import { AUDIT_GRID_PAGES } from '../sign-in-trail/audit-grid-pages';
import { USER_LOGIN_TABLE, USER_LOGOUT_TABLE } from '../sign-in-trail/audit.tables';
import { ChartMeasure, GridPage, gridPageDrift } from '../reads/grid-page';
import type { ReadTable } from '../reads/read-table';
import { TELEMETRY_TABLES } from '../telemetry/telemetry.tables';
import { MENU_LINKS, MENU_SECTIONS, MenuGroup, PAGES } from './pages';

/** The name of the generated module under /assets (see WebAssets). */
export const PAGE_TABLES_ASSET = 'page-tables.js';

// The menu's types live with the pages (pages.ts), so the pages' type check (web/tsconfig.json) reads
// them without the server modules the grid pages import here.
export type { MenuGroup, MenuItem } from './pages';

/**
 * The grid page of a read: its route and statistics are the read's; the chart, if any, draws one line
 * per each of the read's series groups. A page naming a row member, filter or group the read does not
 * have stops the service at start.
 */
export function gridPageOf(read: ReadTable, page: Omit<GridPage, 'api' | 'statistics' | 'chart'> & { chart?: { measures: ChartMeasure[] } }): GridPage {
  const groups = read.series?.groups ?? [];
  const { chart, ...grid } = page;
  const described: GridPage = {
    api: `/api/${read.table}`,
    ...grid,
    statistics: read.statistics,
    ...(chart ? { chart: { measures: chart.measures, by: groups.map((g) => ({ param: g.param, label: g.label ?? '' })) } } : {}),
  };
  const drift = [
    ...gridPageDrift(
      described,
      read.columns.map((c) => c.name),
      read.filters.map((f) => f.param),
      groups.map((g) => g.param),
    ),
    ...(chart ? groups.filter((g) => !g.label).map((g) => `chart group ${g.param} without a label`) : []),
  ];
  if (drift.length > 0) throw new Error(`${read.table}: the grid page names what its read does not have: ${drift.join(', ')}`);
  return described;
}

/** Every grid page the server describes, by the key its page definition names (PageDefinition.grid). */
export function gridPages(): Record<string, GridPage> {
  return {
    UserLogin: gridPageOf(USER_LOGIN_TABLE, AUDIT_GRID_PAGES.UserLogin),
    UserLogout: gridPageOf(USER_LOGOUT_TABLE, AUDIT_GRID_PAGES.UserLogout),
    AdminChange: gridPageOf(ADMIN_CHANGE_TABLE, ADMIN_CHANGE_GRID_PAGE),
    ...Object.fromEntries(TELEMETRY_TABLES.map(({ read, page }) => [read.table, gridPageOf(read, page.grid)])),
  };
}

/** The menu: every page and link with a place in it, by section in MENU_SECTIONS order, then by place. */
export function menu(): MenuGroup[] {
  const entries = [...PAGES, ...MENU_LINKS].flatMap((p) => (p.menu ? [{ ...p, menu: p.menu }] : []));
  return MENU_SECTIONS.map((section) => ({
    section,
    items: entries
      .filter((entry) => entry.menu.section === section)
      .sort((a, b) => a.menu.place - b.menu.place)
      .map(({ path, title, access }) => ({ path, label: title, access })),
  })).filter((group) => group.items.length > 0);
}

/**
 * The grid pages and the menu as an ES module, served as /assets/page-tables.js beside
 * /assets/code-tables.js and for the same reasons (decision 0024): grids.js and layout.js import it
 * statically and keep no copy of a column, filter or menu item (decision 0028).
 */
export function pageTablesModule(grids: Record<string, GridPage> = gridPages(), items: MenuGroup[] = menu()): string {
  const json = (value: unknown) => JSON.stringify(value, null, 2).replace(/</g, '\\u003c');
  return `// Generated at start by src/web/page-tables.ts from the server's page and table descriptions; there is no file to edit.
export const GRID_PAGES = ${json(grids)};
export const MENU = ${json(items)};
`;
}
