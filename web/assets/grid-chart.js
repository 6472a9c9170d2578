// The grid's chart over time (contract 17): which measure, one line per what, drawn from the Series
// answer in the page's state to the width it has; a resize (a phone turned, a window widened)
// redraws it.
import { notice, h } from './dom.js';
import { formatBucket, seriesChart } from './chart.js';

/** @typedef {import('../../src/reads/grid-page').GridPage} Grid */
/** @typedef {import('./grid-state.js').GridState} GridState */

/**
 * The chart card, or null for a grid without a chart.
 * @param {Grid} grid
 * @param {GridState} state the page's state, read again at each draw
 * @param {{ onMeasure: (index: number) => void, onBy: (param: string) => void }} actions
 */
export function gridChart(grid, state, { onMeasure, onBy }) {
  const chart = grid.chart;
  if (!chart) return null;
  const holder = h('div', { class: 'chart-holder', id: 'chart-holder' });
  const note = h('p', { class: 'hint chart-note', id: 'chart-note' });
  const measureSelect = h('select', { name: 'chart', id: 'chart-measure', 'aria-label': 'Measure drawn' }, chart.measures.map((m, i) => h('option', { value: String(i), selected: i === state.chartMeasure }, m.label)));
  const bySelect = h(
    'select',
    { name: 'by', id: 'chart-by', 'aria-label': 'One line per' },
    chart.by.map((b) => h('option', { value: b.param, selected: b.param === state.chartBy }, `Per ${b.label.toLowerCase()}`)),
    h('option', { value: '', selected: state.chartBy === '' }, 'All rows together'),
  );
  measureSelect.addEventListener('change', () => onMeasure(Number(measureSelect.value)));
  bySelect.addEventListener('change', () => onBy(bySelect.value));
  const element = h(
    'section',
    { class: 'card chart-card', id: 'chart-card', 'aria-labelledby': 'chart-title' },
    h('div', { class: 'chart-head' }, h('h2', { id: 'chart-title' }, 'Over time'), h('div', { class: 'chart-controls' }, measureSelect, bySelect)),
    holder,
    note,
  );

  function draw() {
    if (state.chartProblem) {
      holder.replaceChildren(notice('error', state.chartProblem, { testid: 'chart-error' }));
      return;
    }
    const series = state.series;
    if (!chart || !series) return;
    // The Series route takes the window and the codes, not the search: say so when a search is on.
    note.textContent = grid.search && state.search ? `The chart follows From, To and the filters above, not the search “${state.search}”.` : '';
    const measure = chart.measures[state.chartMeasure];
    const by = chart.by.find((b) => b.param === state.chartBy);
    holder.replaceChildren(
      seriesChart(series, measure, {
        width: holder.clientWidth || 640,
        bucketLabel: `${measure.label}, ${by ? `one line per ${by.label.toLowerCase()}` : 'all rows together'}, per ${formatBucket(series.bucketSeconds)}`,
      }),
    );
  }

  if ('ResizeObserver' in window) {
    let width = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    new ResizeObserver(() => {
      if (Math.abs(holder.clientWidth - width) < 8) return;
      width = holder.clientWidth;
      clearTimeout(timer);
      timer = setTimeout(draw, 120);
    }).observe(holder);
  }

  /** @type {unknown[] | null} */
  let drawn = null;
  return {
    element,
    /** Draws a new answer or problem; says whether one is on its way. @param {GridState} state */
    render(state) {
      if (state.chartPhase) holder.dataset.state = state.chartPhase;
      const inputs = [state.series, state.chartProblem];
      if (drawn && inputs.every((value, i) => value === drawn?.[i])) return;
      drawn = inputs;
      draw();
    },
  };
}
