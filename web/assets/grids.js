// @ts-check
// The description of every grid page (contract 9, 10, 17): its API route, toolbar filters, columns,
// statistics columns and chart. One generic module (grid-page.js) draws them all. The descriptions
// are the server's (/assets/page-tables.js, generated from each table's one description, decision
// 0028) and the names of codes (reasons, stages, queues) its code tables (codes.js, decision 0024):
// no column, filter or name is kept here. This module only gives each code filter its choices.
import { codeOptions } from './codes.js';
import { GRID_PAGES } from './page-tables.js';

/** @typedef {import('../../src/reads/grid-page').GridPage} GridPage */

/**
 * The page as grid-page.js draws it: a filter whose choices are a server code table gets them as
 * options, `[id, name]` in the table's order.
 * @param {GridPage} grid
 * @returns {GridPage}
 */
function withChoices(grid) {
  if (!grid.filters) return grid;
  return { ...grid, filters: grid.filters.map((filter) => (filter.codes ? { ...filter, options: codeOptions(filter.codes) } : filter)) };
}

/** Every grid page by the key its page definition names (src/web/pages.ts). */
export const GRIDS = /** @type {Readonly<Record<string, GridPage>>} */ (
  Object.fromEntries(Object.entries(GRID_PAGES).map(([name, grid]) => [name, withChoices(grid)]))
);
