import { badRequest, FieldProblem } from '../common/problem';
import { ReadTable } from './read-table';

/** Most rows a read returns, and most rows statistics are computed over (service.md 8). */
export const MAX_TAKE = 100_000;
/** The default window: the last hour, for from and to independently (service.md 4.3). */
export const DEFAULT_WINDOW_MS = 3_600_000;
/** Longest search text used; a longer one is cut (it is never stored). */
export const MAX_SEARCH = 256;

/** The parsed, clamped query of a grid read. */
export interface ReadQuery {
  from: Date;
  to: Date;
  take: number;
  samplePercentage: number;
  sortField: string | null;
  ascending: boolean;
  search: string | null;
  filters: { sql: string; value: string; type: 'integer' | 'uuid' | 'boolean' | 'text' }[];
  csv: boolean;
}

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// A date, optionally with a time and zone: what an ISO-8601 timestamp looks like.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

function single(raw: Record<string, unknown>, name: string, errors: FieldProblem[]): string | null {
  const value = raw[name];
  if (value === undefined) return null;
  if (Array.isArray(value)) {
    errors.push({ field: name, message: `${name} must be given once.` });
    return null;
  }
  if (typeof value !== 'string') {
    errors.push({ field: name, message: `${name} is not valid.` });
    return null;
  }
  return value;
}

function timestamp(raw: Record<string, unknown>, name: string, errors: FieldProblem[]): Date | null {
  const value = single(raw, name, errors)?.trim();
  if (value === undefined || value === null || value === '') return null;
  const ms = TIMESTAMP.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    errors.push({ field: name, message: `${name} must be an ISO-8601 timestamp.` });
    return null;
  }
  return new Date(ms);
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/**
 * Parses the query string of a grid read (service.md 4.3, contract 10): a value that does not parse
 * is a 400 naming its parameter; numbers out of range are clamped; from and to default independently
 * to the last hour of `nowMs`.
 */
export function parseReadQuery(table: ReadTable, raw: Record<string, unknown>, nowMs: number, accept: string | undefined): ReadQuery {
  const errors: FieldProblem[] = [];
  const common = parseCommon(table, raw, nowMs, errors);

  let take = MAX_TAKE;
  const takeText = single(raw, 'take', errors)?.trim();
  if (takeText) {
    if (!INTEGER.test(takeText)) errors.push({ field: 'take', message: 'take must be a whole number.' });
    else take = clamp(Number(takeText), 0, MAX_TAKE);
  }

  const sortField = single(raw, 'sortField', errors)?.trim() || null;
  const ascending = (single(raw, 'sortDirection', errors) ?? '').trim().toLowerCase() === 'asc';
  const searchText = table.searchColumns.length > 0 ? single(raw, 'search', errors) : null;
  const search = searchText && searchText.trim() !== '' ? Array.from(searchText).slice(0, MAX_SEARCH).join('') : null;

  const format = single(raw, 'format', errors)?.trim().toLowerCase();
  const csv = format === 'csv' || (format !== 'json' && /\btext\/csv\b/i.test(accept ?? ''));

  if (errors.length > 0) throw badRequest('The query is not valid.', errors);
  return { ...common, take, sortField, ascending, search, csv };
}

/** What a grid read and a series share: the window, the sample and the exact-match filters. */
function parseCommon(
  table: ReadTable,
  raw: Record<string, unknown>,
  nowMs: number,
  errors: FieldProblem[],
): Pick<ReadQuery, 'from' | 'to' | 'samplePercentage' | 'filters'> {
  const fromGiven = timestamp(raw, 'from', errors);
  const toGiven = timestamp(raw, 'to', errors);

  let samplePercentage = 100;
  const sampleText = single(raw, 'samplePercentage', errors)?.trim();
  if (sampleText) {
    if (!NUMBER.test(sampleText)) errors.push({ field: 'samplePercentage', message: 'samplePercentage must be a number.' });
    else samplePercentage = clamp(Number(sampleText), 0, 100);
  }

  const filters: ReadQuery['filters'] = [];
  for (const filter of table.filters) {
    const value = single(raw, filter.param, errors)?.trim();
    if (!value) continue;
    if (filter.type === 'boolean') {
      const flag = value.toLowerCase();
      if (flag !== 'true' && flag !== 'false') errors.push({ field: filter.param, message: `${filter.param} must be true or false.` });
      else filters.push({ sql: filter.sql, value: flag, type: 'boolean' });
    } else if (filter.type === 'integer' && !(INTEGER.test(value) && Math.abs(Number(value)) <= 2_147_483_647)) {
      errors.push({ field: filter.param, message: `${filter.param} must be a whole number.` });
    } else if (filter.type === 'integer' && filter.values && !filter.values.includes(Number(value))) {
      errors.push({ field: filter.param, message: `${filter.param} must be one of ${filter.values.join(', ')}.` });
    } else if (filter.type === 'text' && !(filter.texts ?? []).includes(value)) {
      errors.push({ field: filter.param, message: `${filter.param} must be one of ${(filter.texts ?? []).join(', ')}.` });
    } else if (filter.type === 'uuid' && !UUID.test(value)) {
      errors.push({ field: filter.param, message: `${filter.param} must be a GUID.` });
    } else {
      filters.push({ sql: filter.sql, value: filter.type === 'integer' ? String(Number(value)) : filter.type === 'text' ? value : value.toLowerCase(), type: filter.type });
    }
  }

  if (fromGiven && toGiven && fromGiven.getTime() > toGiven.getTime()) {
    errors.push({ field: 'from', message: 'from must not be after to.' });
  }
  return {
    from: fromGiven ?? new Date(nowMs - DEFAULT_WINDOW_MS),
    to: toGiven ?? new Date(nowMs),
    samplePercentage,
    filters,
  };
}

/** Bucket widths the default picks from (contract 17), smallest first. */
export const DEFAULT_BUCKETS = [60, 300, 900, 3600, 21_600, 86_400] as const;
/** Most buckets the default width gives over a window. */
export const MAX_DEFAULT_BUCKETS = 120;
export const MIN_BUCKET_SECONDS = 60;
export const MAX_BUCKET_SECONDS = 86_400;
/** Most series of a grouped answer; the groups beyond are summed under `other`. */
export const MAX_SERIES = 20;

/** The parsed query of a series (contract 17): the read's window, sample and filters, and how to bucket. */
export interface SeriesQuery extends Pick<ReadQuery, 'from' | 'to' | 'samplePercentage' | 'filters'> {
  /** The statistics column (row member name), null for a table without statistics columns. */
  column: string | null;
  bucketSeconds: number;
  /** The group's `param` (stageId, entityAnalysisModelGuid, queueId, instance), or null for one series. */
  by: string | null;
}

/**
 * Buckets of `seconds` (aligned to the epoch) that the window [from, to] touches: the first holds
 * `from`, the last holds `to`.
 */
export function bucketsTouched(fromMs: number, toMs: number, seconds: number): number {
  const width = seconds * 1000;
  return Math.floor(toMs / width) - Math.floor(fromMs / width) + 1;
}

/** The smallest of DEFAULT_BUCKETS whose buckets touched by the window are at most 120 (a day when none). */
export function defaultBucketSeconds(fromMs: number, toMs: number): number {
  return DEFAULT_BUCKETS.find((seconds) => bucketsTouched(fromMs, toMs, seconds) <= MAX_DEFAULT_BUCKETS) ?? MAX_BUCKET_SECONDS;
}

/**
 * Parses the query string of a series route: as a grid read for from, to, samplePercentage and the
 * table's filters; `column` one of the table's statistics columns (default the first), `bucketSeconds`
 * a whole number clamped to 60..86400 (default: defaultBucketSeconds), `by` one of the table's groups.
 * A value that does not parse is a 400 naming its parameter.
 */
export function parseSeriesQuery(table: ReadTable, raw: Record<string, unknown>, nowMs: number): SeriesQuery {
  const errors: FieldProblem[] = [];
  const common = parseCommon(table, raw, nowMs, errors);

  let column: string | null = table.statistics[0] ?? null;
  const columnText = single(raw, 'column', errors)?.trim();
  if (columnText) {
    const named = table.statistics.find((name) => name.toLowerCase() === columnText.toLowerCase());
    if (named) column = named;
    else if (table.statistics.length === 0) errors.push({ field: 'column', message: 'column: this table has no statistics columns; its points carry count only.' });
    else errors.push({ field: 'column', message: `column must be one of ${table.statistics.join(', ')}.` });
  }

  let bucketSeconds: number | null = null;
  const bucketText = single(raw, 'bucketSeconds', errors)?.trim();
  if (bucketText) {
    if (!INTEGER.test(bucketText)) errors.push({ field: 'bucketSeconds', message: 'bucketSeconds must be a whole number of seconds.' });
    else bucketSeconds = clamp(Number(bucketText), MIN_BUCKET_SECONDS, MAX_BUCKET_SECONDS);
  }

  let by: string | null = null;
  const byText = single(raw, 'by', errors)?.trim();
  if (byText) {
    const groups = table.series?.groups ?? [];
    const group = groups.find((g) => g.param.toLowerCase() === byText.toLowerCase());
    if (group) by = group.param;
    else errors.push({ field: 'by', message: `by must be one of ${groups.map((g) => g.param).join(', ')}.` });
  }

  if (errors.length > 0) throw badRequest('The query is not valid.', errors);
  const fromMs = common.from.getTime();
  const toMs = common.to.getTime();
  return { ...common, column, bucketSeconds: bucketSeconds === null ? defaultBucketSeconds(fromMs, toMs) : boundedBucketSeconds(fromMs, toMs, bucketSeconds), by };
}

/** Most buckets a window is cut into: 21 series of them stay a few megabytes of answer. */
export const MAX_BUCKETS = 5000;

/**
 * A width asked for, raised (in whole minutes, so a rollup still serves it) until the window holds at
 * most MAX_BUCKETS buckets, and never beyond a day: `bucketSeconds=60` over a month would otherwise be
 * 43,200 points per series. The answer says which width was used.
 */
export function boundedBucketSeconds(fromMs: number, toMs: number, seconds: number): number {
  const least = Math.ceil((toMs - fromMs) / 1000 / MAX_BUCKETS / 60) * 60;
  return Math.min(MAX_BUCKET_SECONDS, Math.max(seconds, least));
}
