import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiProduces, ApiProperty, ApiQuery, ApiTooManyRequestsResponse } from '@nestjs/swagger';
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
    ...table.filters.map((f) =>
      ApiQuery({
        name: f.param,
        required: false,
        description: f.description ?? 'Exact match.',
        schema: f.type === 'boolean' ? { type: 'boolean' } : f.type === 'integer' ? { type: 'integer', ...(f.values ? { enum: [...f.values] } : {}) } : { type: 'string', format: 'uuid' },
      }),
    ),
    q('format', 'csv streams the rows as CSV (as does Accept: text/csv); at most 2 exports per user at once (429 beyond).'),
    ApiProduces('application/json', 'text/csv'),
    ApiOkResponse({ type: ReadEnvelopeDto, description: summary }),
    ApiBadRequestResponse({ description: 'A parameter that does not parse, named in errors.' }),
    ApiTooManyRequestsResponse({ description: 'Too many exports (2 per user, a quarter of the pool per node) or reads at once; see Retry-After.' }),
  );
}
