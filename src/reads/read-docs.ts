import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiProduces, ApiProperty, ApiQuery, ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { MAX_SERIES } from './read-query';
import { ReadTable } from './read-table';

/** Statistics of one column: over the newest 100000 rows of the filtered, sampled set. */
export class HistogramBucketDto {
  @ApiProperty({ description: 'Lower bound (inclusive).' }) from!: number;
  @ApiProperty({ description: 'Upper bound (exclusive, inclusive for the last bucket).' }) to!: number;
  @ApiProperty() frequency!: number;
}

export class ColumnStatisticsDto {
  @ApiProperty() min!: number;
  @ApiProperty() max!: number;
  @ApiProperty() mean!: number;
  @ApiProperty() median!: number;
  @ApiProperty({ description: 'Sample standard deviation (n-1); 0 for a single value.' }) standardDeviation!: number;
  @ApiProperty({ type: [HistogramBucketDto], description: '10 equal-width buckets from min to max; empty for no rows.' })
  histogram!: HistogramBucketDto[];
}

/**
 * The common envelope of every grid read (service.md 4.3). The members come in this order so the
 * answer can stream: statistics and total first, then the rows as they are read.
 */
export class ReadEnvelopeDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ColumnStatisticsDto' },
    description: 'Per statistics column; {} for the audit trails.',
  })
  statistics!: Record<string, ColumnStatisticsDto>;
  @ApiProperty({ description: 'Full filtered (and sampled) count, regardless of take.' }) total!: number;
  @ApiProperty({ type: 'array', items: { type: 'object' }, description: 'Rows in camelCase, at most take.' }) rows!: object[];
}

/** The table's filter parameters, described the same way for its grid read and its series. */
const filterQueries = (table: ReadTable) =>
  table.filters.map((f) =>
    ApiQuery({
      name: f.param,
      required: false,
      description: f.description ?? 'Exact match.',
      schema: f.type === 'boolean' ? { type: 'boolean' } : f.type === 'integer' ? { type: 'integer', ...(f.values ? { enum: [...f.values] } : {}) } : { type: 'string', format: 'uuid' },
    }),
  );

/** OpenAPI description of a grid read: its query parameters (per table) and its answers. */
export function GridReadDocs(table: ReadTable, summary: string) {
  const q = (name: string, description: string, type: 'string' | 'number' | 'integer' = 'string') =>
    ApiQuery({ name, required: false, description, schema: { type } });
  return applyDecorators(
    q('from', 'Lower bound on the date column (ISO-8601); default one hour ago.'),
    q('to', 'Upper bound on the date column (ISO-8601); default now.'),
    q('take', 'Most rows returned; clamped to 0..100000.', 'integer'),
    q('samplePercentage', 'Unbiased sample, 0..100 (clamped); rows, total and statistics use the same sample.', 'number'),
    q('sortField', `Any row member (${table.columns.map((c) => c.name).join(', ')}); otherwise newest first.`),
    q('sortDirection', 'asc ascends; anything else descends.'),
    ...(table.searchColumns.length > 0
      ? [q('search', `Case-insensitive substring${table.searchLookups?.length ? ` (also of the shown ${table.searchLookups.join(', ')})` : ''}.`)]
      : []),
    ...filterQueries(table),
    q('format', 'csv streams the rows as CSV (as does Accept: text/csv); at most 2 exports per user at once (429 beyond).'),
    ApiProduces('application/json', 'text/csv'),
    ApiOkResponse({ type: ReadEnvelopeDto, description: summary }),
    ApiBadRequestResponse({ description: 'A parameter that does not parse, named in errors.' }),
    ApiTooManyRequestsResponse({ description: 'Too many exports (2 per user, a quarter of the pool per node) or reads at once; see Retry-After.' }),
  );
}

/** One bucket of a series (contract 17). */
export class SeriesPointDto {
  @ApiProperty({ description: 'Start of the bucket (ISO-8601 UTC): a multiple of bucketSeconds since 1970-01-01T00:00:00Z.' }) at!: string;
  @ApiProperty({ description: 'Rows in the bucket (of the sample, when samplePercentage < 100: not scaled up).' }) count!: number;
  @ApiProperty({ required: false, description: 'Sum of column over the rows (absent for the Redis event tables).' }) sum?: number;
  @ApiProperty({ required: false, description: 'sum / rows with a value.' }) mean?: number;
  @ApiProperty({ required: false }) min?: number;
  @ApiProperty({ required: false }) max?: number;
  @ApiProperty({ required: false, description: 'Stage counter tables only: sum of InvokeCount.' }) invocations?: number;
  @ApiProperty({ required: false, description: 'Stage counter tables only: sum of TotalMicroseconds / sum of InvokeCount, 0 without invocations.' })
  meanMicroseconds?: number;
}

export class SeriesDto {
  @ApiProperty({ description: "'all' without by; the group's value (stageId, queueId, GUID, instance), '(null)' for rows without one, or 'other'." })
  key!: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'Stage, queue or model name where one is known.' }) name!: string | null;
  @ApiProperty({ type: [SeriesPointDto], description: 'In time order; only buckets holding rows.' }) points!: SeriesPointDto[];
}

export class SeriesAnswerDto {
  @ApiProperty({ type: 'string', nullable: true, description: 'The statistics column; null for a table without any (count only).' }) column!: string | null;
  @ApiProperty() bucketSeconds!: number;
  @ApiProperty({ description: 'The window, ISO-8601.' }) from!: string;
  @ApiProperty() to!: string;
  @ApiProperty({ type: [SeriesDto], description: `At most ${MAX_SERIES} series (the groups with the most rows), the rest summed under other.` }) series!: SeriesDto[];
}

/** OpenAPI description of a series route (contract 17): the read's filters plus column, bucketSeconds and by. */
export function SeriesDocs(table: ReadTable, summary: string) {
  const q = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ApiQuery({ name, required: false, description, schema });
  const groups = table.series?.groups.map((g) => g.param) ?? [];
  return applyDecorators(
    q('from', 'Lower bound on the date column (ISO-8601); default one hour ago.'),
    q('to', 'Upper bound on the date column (ISO-8601); default now.'),
    q(
      'samplePercentage',
      'The same unbiased sample as the grid (a seeded hash of Id, drawn per request), 0..100 (clamped): points count and sum the sampled rows only, not scaled up.',
      { type: 'number' },
    ),
    ...filterQueries(table),
    ...(table.statistics.length > 0 ? [q('column', `Statistics column of the points (default ${table.statistics[0]}).`, { type: 'string', enum: table.statistics })] : []),
    q(
      'bucketSeconds',
      'Bucket width, 60..86400 (clamped, and raised in whole minutes so the window holds at most 5000 buckets); buckets start at multiples of it since the epoch. Default: the smallest of 60, 300, 900, 3600, 21600, 86400 with at most 120 buckets touching the window.',
      { type: 'integer', minimum: 60, maximum: 86400 },
    ),
    q('by', `Grouping: one series per value, the ${MAX_SERIES} with the most rows, the rest under other.`, { type: 'string', enum: groups }),
    ApiOkResponse({ type: SeriesAnswerDto, description: summary }),
    ApiBadRequestResponse({ description: 'A parameter that does not parse, named in errors.' }),
    ApiTooManyRequestsResponse({ description: 'Too many reads at once; see Retry-After.' }),
  );
}
