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
  filters: { sql: string; value: string; type: 'integer' | 'uuid' | 'boolean' }[];
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
  const fromGiven = timestamp(raw, 'from', errors);
  const toGiven = timestamp(raw, 'to', errors);

  let take = MAX_TAKE;
  const takeText = single(raw, 'take', errors)?.trim();
  if (takeText) {
    if (!INTEGER.test(takeText)) errors.push({ field: 'take', message: 'take must be a whole number.' });
    else take = clamp(Number(takeText), 0, MAX_TAKE);
  }

  let samplePercentage = 100;
  const sampleText = single(raw, 'samplePercentage', errors)?.trim();
  if (sampleText) {
    if (!NUMBER.test(sampleText)) errors.push({ field: 'samplePercentage', message: 'samplePercentage must be a number.' });
    else samplePercentage = clamp(Number(sampleText), 0, 100);
  }

  const sortField = single(raw, 'sortField', errors)?.trim() || null;
  const ascending = (single(raw, 'sortDirection', errors) ?? '').trim().toLowerCase() === 'asc';
  const searchText = table.searchColumns.length > 0 ? single(raw, 'search', errors) : null;
  const search = searchText && searchText.trim() !== '' ? Array.from(searchText).slice(0, MAX_SEARCH).join('') : null;

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
    } else if (filter.type === 'uuid' && !UUID.test(value)) {
      errors.push({ field: filter.param, message: `${filter.param} must be a GUID.` });
    } else {
      filters.push({ sql: filter.sql, value: filter.type === 'integer' ? String(Number(value)) : value.toLowerCase(), type: filter.type });
    }
  }

  const format = single(raw, 'format', errors)?.trim().toLowerCase();
  const csv = format === 'csv' || (format !== 'json' && /\btext\/csv\b/i.test(accept ?? ''));

  if (fromGiven && toGiven && fromGiven.getTime() > toGiven.getTime()) {
    errors.push({ field: 'from', message: 'from must not be after to.' });
  }
  if (errors.length > 0) throw badRequest('The query is not valid.', errors);

  return {
    from: fromGiven ?? new Date(nowMs - DEFAULT_WINDOW_MS),
    to: toGiven ?? new Date(nowMs),
    take,
    samplePercentage,
    sortField,
    ascending,
    search,
    filters,
    csv,
  };
}
