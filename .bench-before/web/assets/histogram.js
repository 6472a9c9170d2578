// A 10-bar histogram drawn as inline SVG (no library, nothing fetched): bar heights scaled to the
// busiest bucket, each bar titled with its range and count.
import { formatNumber, s } from './dom.js';

const WIDTH = 480;
const HEIGHT = 170;
const PAD = { left: 34, right: 8, top: 10, bottom: 26 };

export function histogram(buckets, { label, testid } = {}) {
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const peak = Math.max(1, ...buckets.map((b) => Number(b.frequency) || 0));
  const slot = plotWidth / Math.max(1, buckets.length);
  const svg = s('svg', {
    class: 'histogram',
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-label': `Histogram of ${label}`,
    'data-testid': testid,
    preserveAspectRatio: 'xMidYMid meet',
  });
  svg.append(s('title', {}, `Histogram of ${label}`));
  // Gridlines at 0, the peak and, when it is a whole count, half the peak.
  const levels = peak % 2 === 0 ? [0, peak / 2, peak] : [0, peak];
  for (const level of levels) {
    const y = PAD.top + plotHeight * (1 - level / peak);
    svg.append(s('line', { class: 'grid-line', x1: PAD.left, x2: WIDTH - PAD.right, y1: y, y2: y }));
    svg.append(s('text', { class: 'axis-label', x: PAD.left - 4, y: y + 3, 'text-anchor': 'end' }, formatNumber(level)));
  }
  buckets.forEach((bucket, i) => {
    const frequency = Number(bucket.frequency) || 0;
    const barHeight = (frequency / peak) * plotHeight;
    const x = PAD.left + i * slot + 1.5;
    const rect = s('rect', {
      class: 'bar',
      x,
      y: PAD.top + plotHeight - barHeight,
      width: Math.max(1, slot - 3),
      height: Math.max(frequency > 0 ? 1 : 0, barHeight),
      'data-frequency': frequency,
    });
    rect.append(s('title', {}, `${formatNumber(bucket.from)} to ${formatNumber(bucket.to)}: ${formatNumber(frequency)}`));
    svg.append(rect);
  });
  if (buckets.length > 0) {
    const y = HEIGHT - 8;
    svg.append(s('text', { class: 'axis-label', x: PAD.left, y, 'text-anchor': 'start' }, formatNumber(buckets[0].from)));
    svg.append(s('text', { class: 'axis-label', x: WIDTH - PAD.right, y, 'text-anchor': 'end' }, formatNumber(buckets[buckets.length - 1].to)));
  } else {
    svg.append(s('text', { class: 'axis-label', x: WIDTH / 2, y: HEIGHT / 2, 'text-anchor': 'middle' }, 'No data'));
  }
  return svg;
}
