/**
 * The statistics of a grid read (min, max, mean, median, sample standard deviation and the ten
 * equal-width histogram buckets), computed here from the raw values, independently of the service's
 * SQL, so the specs of the reads check the service against something it did not write.
 */
export function referenceStatistics(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const min = sorted[0];
  const max = sorted[n - 1];
  const mean = sorted.reduce((a, b) => a + b, 0) / n;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const sd = n > 1 ? Math.sqrt(sorted.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1)) : 0;
  const frequencies = new Array(10).fill(0);
  for (const v of sorted) frequencies[max === min ? 0 : Math.min(9, Math.floor(((v - min) * 10) / (max - min)))]++;
  return { min, max, mean, median, sd, frequencies };
}
