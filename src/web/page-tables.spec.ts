import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { ARCHIVER_WARNING_TABLE, TELEMETRY_TABLES } from '../telemetry/telemetry.tables';
import { gridPageOf, gridPages, menu, PAGE_TABLES_ASSET, pageTablesModule } from './page-tables';
import { PAGES } from './pages';
import { assetsFolder } from './web-assets.service';

/** The generated module evaluated as a browser would, its exports read back. */
function parse(text: string): { GRID_PAGES: unknown; MENU: unknown } {
  const exports: Record<string, unknown> = {};
  runInNewContext(text.replace(/^export const (\w+) =/gm, 'exports.$1 ='), { exports });
  return exports as { GRID_PAGES: unknown; MENU: unknown };
}

describe('the page tables served to the pages (decision 0028)', () => {
  it('describe a grid page for every grid a page definition names, and no other', () => {
    const named = PAGES.flatMap((page) => (page.grid ? [page.grid] : [])).sort();
    expect(Object.keys(gridPages()).sort()).toEqual(named);
  });

  it('make one page and one menu item of each telemetry table, from its description', () => {
    for (const { read, page } of TELEMETRY_TABLES) {
      const path = `/Administration/${page.section}/${read.table}`;
      expect(PAGES.find((p) => p.path === path)).toMatchObject({ title: page.title, grid: read.table, access: 'landlord' });
      const group = menu().find((g) => g.section === page.section)!;
      expect(group.items[page.place - 1]).toEqual({ path, label: page.title, access: 'landlord' });
    }
  });

  it('order the menu by section, then by place', () => {
    expect(menu().map((g) => [g.section, g.items.map((i) => i.label)])).toEqual([
      [null, ['Home']],
      ['Security', ['Tenants', 'Roles', 'Users', 'User Login', 'User Logout', 'Admin Changes', 'Audit integrity', 'Sinks']],
      [
        'Performance',
        [
          'Archiver Stage Performance Counter',
          'Archiver Warning',
          'Case Creation Stage Performance Counter',
          'Case Creation Warning',
          'Capture Queue Health',
          'OpenTelemetry Metric',
        ],
      ],
      ['Logs', ['Model Invoke Warning', 'Redis Connection Event', 'Redis Sentinel Event']],
      ['Account', ['Sessions', 'Passkeys', 'Change password', 'API explorer', 'Sign out']],
    ]);
  });

  it("take a grid's route and statistics from its read, and chart one line per series group", () => {
    const grid = gridPages().ArchiverWarning;
    expect(grid.api).toBe('/api/ArchiverWarning');
    expect(grid.statistics).toEqual(ARCHIVER_WARNING_TABLE.statistics);
    expect(grid.chart!.by).toEqual([
      { param: 'stageId', label: 'Stage' },
      { param: 'entityAnalysisModelGuid', label: 'Model' },
      { param: 'instance', label: 'Instance' },
    ]);
  });

  it('refuse a grid page naming a column, filter or group its read does not have', () => {
    const page = { columns: [{ field: 'durationMicroseconds', label: 'Duration', type: 'number' }] };
    expect(() => gridPageOf(ARCHIVER_WARNING_TABLE, page)).not.toThrow();
    expect(() => gridPageOf(ARCHIVER_WARNING_TABLE, { columns: [{ field: 'duration', label: 'Duration', type: 'number' }] })).toThrow(
      'ArchiverWarning: the grid page names what its read does not have: column duration',
    );
    expect(() => gridPageOf(ARCHIVER_WARNING_TABLE, { ...page, filters: [{ param: 'queueId', label: 'Queue', all: 'All' }] })).toThrow('filter queueId');
    expect(() => gridPageOf({ ...ARCHIVER_WARNING_TABLE, series: { groups: [{ param: 'instance', sql: 't."Instance"' }] } }, { ...page, chart: { measures: [] } })).toThrow(
      'chart group instance without a label',
    );
  });

  it('become a module that exports exactly the grid pages and the menu, with no `<` to close a script', () => {
    expect(parse(pageTablesModule())).toEqual({ GRID_PAGES: gridPages(), MENU: menu() });
    const odd = pageTablesModule({}, [{ section: '</script>', items: [] }]);
    expect(odd).not.toContain('<');
    expect(parse(odd).MENU).toEqual([{ section: '</script>', items: [] }]);
  });

  it('are no page module: web/assets holds no file of that name', () => {
    expect(readdirSync(assetsFolder())).not.toContain(PAGE_TABLES_ASSET);
  });

  it('leave grids.js and layout.js no column, filter or menu item of their own', () => {
    for (const name of ['grids.js', 'layout.js']) {
      const source = readFileSync(join(assetsFolder(), name), 'utf8');
      expect(source).toContain("from './page-tables.js'");
      expect(source.match(/\b(field|param|path):\s*'/g) ?? []).toEqual([]);
    }
  });
});
