/** Types of /assets/page-tables.js, the module the server generates at start (src/web/page-tables.ts, decision 0028). */
import type { GridPage } from '../../src/reads/grid-page';
import type { MenuGroup } from '../../src/web/pages';

export declare const GRID_PAGES: Readonly<Record<string, GridPage>>;
export declare const MENU: readonly MenuGroup[];
