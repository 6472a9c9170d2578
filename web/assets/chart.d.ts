/** Types for chart.js (a plain browser module): the pure helpers its unit spec checks. */
export declare function niceStep(span: number, count: number): number;
export declare function formatBucket(seconds: number): string;
export declare function seriesChart(answer: unknown, measure: unknown, options?: { width?: number; testid?: string; bucketLabel?: string }): unknown;
