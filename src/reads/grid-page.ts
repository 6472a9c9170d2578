/**
 * How the pages show a grid read (contract 9, 10, 17): the words and kinds the generic grid page
 * (web/assets/grid-page.js) needs beside what the read itself says. A table's grid page is part of
 * its one description; the server checks it against the read at start and serves it to the pages
 * (src/web/page-tables.ts, /assets/page-tables.js), so no page module re-declares a column or filter.
 */

/**
 * Column kinds: date, text, agent (a User-Agent shown as the device it names), number (with
 * `unit: 'µs'` for durations shown in ms/s/min), guid (a short form with the full value on hover),
 * model (a model's name with its GUID under it), tags, outcome, changes (a `{"field": [before, after]}`
 * object as a before/after table), and the audit grids' own kinds.
 * `optional` columns start hidden; `wide` text is cut to one line with the full text on hover; `sub`
 * names a row member shown under the value; `codes` names the server code table a shown name is from.
 */
export interface GridColumn {
  field: string;
  label: string;
  type: string;
  unit?: 'µs';
  optional?: boolean;
  wide?: boolean;
  sub?: string;
  codes?: string;
  /** Not offered as a sort: a value the database cannot order (a JSON object). */
  unsorted?: boolean;
}

/**
 * A toolbar filter of one of the read's filter parameters: its choices are a server code table
 * (`codes`), fixed `options`, or looked up by the page (`lookup: 'models'`, named by the Series route);
 * `input: 'integer'` is typed in instead (an id, such as the item a history link names).
 */
export interface GridFilter {
  param: string;
  label: string;
  all: string;
  codes?: string;
  options?: [string | number, string][];
  lookup?: 'models';
  input?: 'integer';
}

/**
 * A measure the chart over time can draw (contract 17): `column` is the Series route's column (null:
 * the count of rows), `mean` and `max` the point fields drawn as the solid and dashed line.
 */
export interface ChartMeasure {
  label: string;
  column: string | null;
  unit?: 'µs';
  mean: string;
  max: string | null;
  meanLabel?: string;
  maxLabel?: string;
  whole?: boolean;
}

/** What the grid page of one read shows. */
export interface GridPage {
  /** The API route of the read. */
  api: string;
  /** The placeholder of the search box; none: the table has no search columns worth offering. */
  search?: string;
  /** The word the date range bounds, when not the creation date. */
  dateLabel?: string;
  filters?: GridFilter[];
  columns: GridColumn[];
  /** The row members the statistics row shows: the read's statistics. */
  statistics: string[];
  /** The chart over time: its measures and what it can draw one line per (a series group and its label). */
  chart?: { measures: ChartMeasure[]; by: { param: string; label: string }[] };
}

type Extra = Partial<Omit<GridColumn, 'field' | 'label'>>;

export const dateColumn = (field: string, label: string, extra: Extra = {}): GridColumn => ({ field, label, type: 'date', ...extra });
export const textColumn = (field: string, label: string, extra: Extra = {}): GridColumn => ({ field, label, type: 'text', ...extra });
export const numberColumn = (field: string, label: string, extra: Extra = {}): GridColumn => ({ field, label, type: 'number', ...extra });
export const microsColumn = (field: string, label: string, extra: Extra = {}): GridColumn => numberColumn(field, label, { unit: 'µs', ...extra });
export const guidColumn = (field: string, label: string, extra: Extra = {}): GridColumn => ({ field, label, type: 'guid', ...extra });
/** A code shown (and sorted) by the name the row carries next to it; `codes` names its server code table. */
export const codeColumn = (field: string, label: string, codes: string, extra: Extra = {}): GridColumn => ({ field, label, type: 'text', codes, ...extra });

/** A filter whose choices are a server code table, in its order (the page adds the options from codes.js). */
export const codeFilter = (param: string, label: string, all: string, codes: string): GridFilter => ({ param, label, all, codes });

/**
 * The fields of a grid page that name no row member of the read (`members`) or no filter parameter
 * (`params`): a page description that drifted from its read, refused at start.
 */
export function gridPageDrift(page: GridPage, members: readonly string[], params: readonly string[], groups: readonly string[]): string[] {
  const fields = page.columns.flatMap((c) => [c.field, ...(c.sub ? [c.sub] : [])]);
  return [
    ...fields.filter((f) => !members.includes(f)).map((f) => `column ${f}`),
    ...page.statistics.filter((f) => !members.includes(f)).map((f) => `statistic ${f}`),
    ...(page.filters ?? []).filter((f) => !params.includes(f.param)).map((f) => `filter ${f.param}`),
    ...(page.chart?.by ?? []).filter((b) => !groups.includes(b.param)).map((b) => `chart group ${b.param}`),
  ];
}
