/**
 * The description of a grid page as grid-page.js reads it from grids.js, declared for the check of
 * web/assets until grids.js is checked itself (see web/tsconfig.json): it is being rewritten to read
 * the table descriptions from the server.
 */

/** How a column's cells are drawn (grid-cells.js). */
export type ColumnType = 'date' | 'text' | 'number' | 'guid' | 'outcome' | 'failureReason' | 'model' | 'tags' | 'agent' | 'sessionStart' | 'sessionLength' | 'changes';

export interface GridColumn {
  field: string;
  label: string;
  type: ColumnType;
  /** The field the API sorts by, when not `field`. */
  sort?: string;
  /** 'µs' for durations. */
  unit?: string;
  /** The server code table the shown names come from. */
  codes?: string;
  /** Starts hidden (the Columns menu shows it). */
  optional?: boolean;
  /** One clipped line, the whole text on hover. */
  wide?: boolean;
  /** A field shown under the value. */
  sub?: string;
  /** Not offered as a sort (a JSON object the database cannot order). */
  unsorted?: boolean;
}

export interface GridFilter {
  param: string;
  label: string;
  all?: string;
  codes?: string;
  options?: [string | number, string][];
  /** Choices read from the server ('models'). */
  lookup?: 'models';
  /** Typed in rather than chosen ('integer': an id). */
  input?: 'integer';
}

/** What the chart can draw: the Series route's column and the point fields drawn as lines. */
export interface ChartMeasure {
  label: string;
  column: string | null;
  unit?: string;
  mean: string | null;
  max: string | null;
  meanLabel?: string;
  maxLabel?: string;
  whole?: boolean;
}

export interface ChartBy {
  param: string;
  label: string;
}

export interface Grid {
  api: string;
  search?: string;
  dateLabel?: string;
  filters?: GridFilter[];
  columns: GridColumn[];
  statistics: string[];
  chart?: { measures: ChartMeasure[]; by: ChartBy[] };
}

export declare const GRIDS: Record<string, Grid>;
