import { MAX_TAKE } from './read-query';
import type { ReadTable } from './read-table';

/** Statistics of one column (contract 10 and 12). */
export interface ColumnStatistics {
  min: number;
  max: number;
  mean: number;
  median: number;
  standardDeviation: number;
  histogram: { from: number; to: number; frequency: number }[];
}

export const BUCKETS = 10;

/** What PostgreSQL returns per statistics column: count, ends, middle values, moments, partition points. */
export interface SortedColumn {
  n: number | null;
  mn: number;
  mx: number;
  m1: number;
  m2: number;
  mean: number;
  sd: number;
  /** cut[b-1] = how many values lie in buckets below b, b = 1..9; null when min = max. */
  p: number[] | null;
}

/** The bucket of value x: floor((x - min) * 10 / (max - min)), the last bucket closed. */
const bucketOf = (x: string, e: string) => `least(floor((${x} - ${e}.mn) * ${BUCKETS} / (${e}.mx - ${e}.mn)), ${BUCKETS - 1})`;

/**
 * Statistics of column i from its sorted array `a.v{i}`. The bucket of a value never decreases as the
 * value grows, so bucket b starts at the partition point where the bucket formula first reaches b.
 * width_bucket(x, sorted array) is a binary search that counts the values <= x; the partition point
 * lies between the counts at threshold - d and threshold + d (d: a billionth of the magnitude, far
 * above rounding error), and the few values in between are put in their bucket by the formula itself,
 * so the counts equal those of applying the formula to every value. Outside ordinary magnitudes, the
 * formula is applied to all values.
 */
function columnStatisticsSql(i: number): string {
  const v = `a.v${i}`;
  const ordinary = `(e.mx - e.mn < 'Infinity'::float8 AND greatest(abs(e.mn), abs(e.mx)) BETWEEN 1e-290::float8 AND 1e290::float8)`;
  const threshold = `e.mn + (e.mx - e.mn) * b.b / ${BUCKETS}`;
  const d = `greatest(abs(e.mn), abs(e.mx)) * 1e-9::float8`;
  const partitions = `(SELECT array_agg(r.lo + (SELECT count(*) FROM unnest(${v}[r.lo + 1:r.hi]) x WHERE ${bucketOf('x', 'e')} < b.b) ORDER BY b.b)
       FROM generate_series(1, ${BUCKETS - 1}) b(b),
            LATERAL (SELECT CASE WHEN ${ordinary} THEN width_bucket(${threshold} - ${d}, ${v}) ELSE 0 END AS lo,
                            CASE WHEN ${ordinary} THEN width_bucket(${threshold} + ${d}, ${v}) ELSE e.n END AS hi) r)`;
  return `(SELECT json_build_object('n', e.n, 'mn', e.mn, 'mx', e.mx, 'm1', ${v}[e.h1], 'm2', ${v}[e.h2], 'mean', a.mean${i}, 'sd', a.sd${i},
             'p', CASE WHEN e.mx > e.mn THEN ${partitions} END)
           FROM (SELECT c.n, ${v}[1] AS mn, ${v}[c.n] AS mx, 1 + floor(0.5 * (c.n - 1))::int AS h1, 1 + ceil(0.5 * (c.n - 1))::int AS h2
                   FROM (SELECT coalesce(cardinality(${v}), 0) AS n) c) e)`;
}

/**
 * The statistics part of a JSON read's statement over the filtered set `base` (sorted by `dateColumn`):
 * the `agg` CTE to add (none without statistics columns), the expression of the statistics as JSON
 * text, and of how many of the newest MAX_TAKE rows the scan found (null without statistics columns).
 */
export function statisticsSql(table: ReadTable, expressions: Map<string, string>): { cte: string | null; statistics: string; newest: string | null } {
  const statColumns = table.statistics;
  if (statColumns.length === 0) return { cte: null, statistics: `'[]'::text`, newest: null };
  // One scan of the newest rows, one sort per column: each column's non-null values arrive as a
  // sorted float8 array next to its mean and standard deviation. min, max and the median are then
  // positions in the array, and the histogram is nine binary searches in it (columnStatisticsSql).
  // Each column is sorted in its own type and the sorted array cast to float8[] afterwards: an
  // integer sort uses PostgreSQL's specialised integer comparator (≈ 20 % less than sorting the
  // float8 values of the same 100000 rows, bench/RESULTS.md issue 21); the order is the same.
  const picks = statColumns.map((name, i) => `${expressions.get(name)} AS s${i}`).join(', ');
  const aggregates = statColumns
    .map(
      (_, i) =>
        `(array_agg(s${i} ORDER BY s${i}) FILTER (WHERE s${i} IS NOT NULL))::float8[] AS v${i}, ` +
        `avg(s${i}::float8) AS mean${i}, coalesce(stddev_samp(s${i}::float8), 0) AS sd${i}`,
    )
    .concat('count(*) AS newest')
    .join(', ');
  return {
    cte: `agg AS MATERIALIZED (SELECT ${aggregates}
           FROM (SELECT ${picks} FROM base t ORDER BY t."${table.dateColumn}" DESC, t."Id" DESC LIMIT ${MAX_TAKE}) n)`,
    statistics: `(SELECT json_build_array(${statColumns.map((_, i) => columnStatisticsSql(i)).join(', ')})::text FROM agg a)`,
    newest: '(SELECT newest FROM agg)',
  };
}

/** Turns the per-column aggregates into the contract's shape; a column with no values is all zeros. */
export function shapeStatistics(columns: string[], sorted: SortedColumn[]): Record<string, ColumnStatistics> {
  const statistics: Record<string, ColumnStatistics> = {};
  columns.forEach((name, i) => {
    const c = sorted[i];
    const n = Number(c?.n ?? 0);
    if (n === 0) {
      statistics[name] = { min: 0, max: 0, mean: 0, median: 0, standardDeviation: 0, histogram: [] };
      return;
    }
    const min = Number(c.mn);
    const max = Number(c.mx);
    const width = (max - min) / BUCKETS;
    // Partition points: values before position cut[b] are in buckets below b. min = max: all in the first.
    const cut = [0, ...(c.p ?? new Array<number>(BUCKETS - 1).fill(n)).map(Number), n];
    // percentile_cont(0.5): the middle value, or the two middle values interpolated half way.
    const median = c.m1 === c.m2 ? Number(c.m1) : Number(c.m1) + (Number(c.m2) - Number(c.m1)) * 0.5;
    statistics[name] = {
      min,
      max,
      mean: Number(c.mean),
      median,
      standardDeviation: Number(c.sd),
      histogram: cut.slice(0, BUCKETS).map((position, b) => ({
        from: min + width * b,
        to: b === BUCKETS - 1 ? max : min + width * (b + 1),
        frequency: cut[b + 1] - position,
      })),
    };
  });
  return statistics;
}
