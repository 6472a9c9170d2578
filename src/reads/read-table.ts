/**
 * A grid read is described, not programmed: one small description per table tells the one query
 * builder (ReadEngine) which columns the rows carry, which date column bounds the window, which
 * exact-match filters and search columns exist, which columns get statistics, and who may read it.
 * Every SQL fragment here is fixed text written by us; caller values only ever travel as parameters.
 */

/** How a row member is produced. `sql` is an expression over the table alias `t`. */
export interface ReadColumn {
  /** camelCase row member name, also the sortField and the CSV header cell. */
  name: string;
  /** Expression over alias `t` used for sorting and statistics, e.g. `t."DurationMicroseconds"`. */
  sql: string;
  /** 'date' members are written as ISO-8601 UTC with milliseconds (like Date.toISOString). */
  kind?: 'value' | 'date';
  /**
   * A name looked up from a code (stageName next to stageId): index the code into this list, passed
   * as a text[] parameter. `names[code]` is the name of `code`.
   */
  lookup?: { code: string; names: Record<number, string> };
}

/** An exact-match filter taken from the query string. */
export interface ReadFilter {
  param: string;
  /** Column expression over alias `t`. */
  sql: string;
  /** 'boolean' accepts true or false (any case) and nothing else; 'text' only one of `texts`. */
  type: 'integer' | 'uuid' | 'boolean' | 'text';
  /** For an integer code: the only values accepted; any other is a 400 naming the parameter. */
  values?: readonly number[];
  /** For a 'text' filter: the only values accepted (exactly); any other is a 400 naming the parameter. */
  texts?: readonly string[];
  /** For the OpenAPI document; "Exact match." when absent. */
  description?: string;
}

export interface ReadTable {
  /** Table name exactly as in the contract. */
  table: string;
  /** Bounds the from/to window and decides "newest" (CreatedDate, or OccurredDate). */
  dateColumn: string;
  columns: ReadColumn[];
  filters: ReadFilter[];
  /** Columns (over alias `t`) matched by `search` as a case-insensitive substring; none: search ignored. */
  searchColumns: string[];
  /**
   * A column (over alias `t`) holding lower() of the search columns joined by U+001F, kept by the
   * database: `search` then matches it with one LIKE instead of an ILIKE per column (same rows, a
   * fraction of the cost; see migration AuditSearchText).
   */
  searchText?: string;
  /**
   * Lookup members (row member names, e.g. failureReason) whose shown name `search` also matches: the
   * codes whose name contains the text are found here and matched as a list, so a person can search
   * for the words the grid shows ("did not match") although the table stores only the code.
   */
  searchLookups?: string[];
  /** Row member names (numeric columns) that get statistics; empty: statistics `{}`. */
  statistics: string[];
  /**
   * Who sees which rows. 'landlord': the route is landlord-only (checked by the guard, and again
   * here). 'tenant': a landlord sees every row; anyone else only rows of their own tenant that belong
   * to a known user.
   */
  access:
    | { kind: 'landlord' }
    | { kind: 'tenant'; tenantColumn: string; userColumn: string }
    /** A landlord sees every row; anyone else the rows where any of `tenantColumns` is its tenant (AdminChange: the actor's or the target's). */
    | { kind: 'tenants'; tenantColumns: readonly string[] };
  /** The series route beside the grid (telemetry tables only). */
  series?: SeriesDescription;
}

/** A plain column of the table, quoted, in camelCase. */
export function col(column: string, kind: 'value' | 'date' = 'value'): ReadColumn {
  return { name: column.charAt(0).toLowerCase() + column.slice(1), sql: `t."${column}"`, kind };
}

/** A name next to its code: `lookupOf('stageName', 'StageId', STAGE_NAMES)`. */
/**
 * A filter on a code column (failureTypeId, reasonId, actionTypeId): only the codes of `names` are
 * accepted, any other value answers 400, so the filter and the code table cannot drift apart.
 */
export function codeFilter(param: string, column: string, names: Record<number, string>, description: string): ReadFilter {
  return {
    param,
    sql: `t."${column}"`,
    type: 'integer',
    values: Object.keys(names).map(Number),
    description: `${description}; any other value answers 400.`,
  };
}

export function lookupOf(name: string, code: string, names: Record<number, string>): ReadColumn {
  return { name, sql: '', lookup: { code, names } };
}

/**
 * A column a series may be grouped by (`by`, contract 17): a code or identity column of the table.
 * `names`: the shown name of each code (stageId, queueId); `nameSql`: a column naming the group
 * (the model's name next to its GUID), the greatest one seen in the window when they differ.
 */
export interface SeriesGroup {
  param: string;
  /** Column expression over alias `t`. */
  sql: string;
  names?: Record<number, string>;
  nameSql?: string;
  /** What the pages' chart calls a line per group of this column ("Stage", "Model"). */
  label?: string;
}

/**
 * A per-minute rollup of the table (decision 0021), kept exact by triggers on the table: one row per
 * minute (of the date column) and combination of `keys`, with the count of rows and the sum, least
 * and greatest of each of `values`. A read whose filters are all among the keys, without sample or
 * search, takes whole minutes from it and only the partial minutes at the window's edges from rows.
 */
export interface RollupDescription {
  table: string;
  /** Key columns, named as in the table (the rollup has the same names). */
  keys: string[];
  /** Value columns: the rollup holds `<Column>Sum`, `<Column>Min`, `<Column>Max` of each. */
  values: string[];
  /** A name column kept as its greatest value per rollup row (the model's name). */
  name?: string;
}

/** What the series route of a table offers beside its grid (contract 17). */
export interface SeriesDescription {
  /** Columns `by` may name, in the order the OpenAPI document lists them. */
  groups: SeriesGroup[];
  /** Stage counters: points also carry `invocations` and `meanMicroseconds` from these columns. */
  invocations?: { count: string; totalMicroseconds: string };
  rollup?: RollupDescription;
}

/**
 * How a read serves a table whose columns are listed elsewhere once (an audit table's canonical
 * list, audit-log/canonical.ts): by default every column, in the list's order, in camelCase.
 */
export interface ServedShape<Name extends string> {
  /** Columns the rows leave out. */
  omit?: readonly Name[];
  /** A column served as its own member instead (AdminChange's Changes as JSON). */
  replace?: { readonly [N in Name]?: ReadColumn };
  /** Members served right after a column: a code's name, a measure computed from it. */
  then?: { readonly [N in Name]?: readonly ReadColumn[] };
  /** A column served just before another rather than in its listed place (the contract's JSON order). */
  before?: { readonly [N in Name]?: Name };
}

/** The read's columns from a table's column list and its shape (dates as dates, everything else as values). */
export function servedColumns<Name extends string>(columns: ReadonlyArray<{ name: Name; kind: string }>, shape: ServedShape<Name> = {}): ReadColumn[] {
  const omitted = new Set<string>(shape.omit ?? []);
  const moved = new Map<Name, Name[]>();
  for (const [name, next] of Object.entries(shape.before ?? {}) as [Name, Name][]) moved.set(next, [...(moved.get(next) ?? []), name]);
  const byName = new Map(columns.map((column) => [column.name, column]));
  const served = (name: Name): ReadColumn[] => {
    const column = byName.get(name)!;
    return [shape.replace?.[name] ?? col(name, column.kind === 'date' ? 'date' : 'value'), ...(shape.then?.[name] ?? [])];
  };
  return columns.flatMap(({ name }) => {
    if (omitted.has(name) || (shape.before && name in shape.before)) return [];
    return [...(moved.get(name) ?? []).flatMap(served), ...served(name)];
  });
}
