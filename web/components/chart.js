// chart.js - a small SVG line chart of a training loss, with its values in a table below.
//
// The parts, in chart/: ticks (nice tick values), axes (grid, ticks, titles), line (curve,
// points, last value), hover (guide and readout), table (the values), draw (all of it).

import { el, svgEl } from './dom.js';
import { uniqueId } from './scales.js';
import { markOverflow } from './tables.js';
import { FONT_STACK } from './export.js';
import { H, draw } from './chart/draw.js';
import { listenHover } from './chart/hover.js';
import { fillTable } from './chart/table.js';

export { niceTicks } from './chart/ticks.js';

const W_DEFAULT = 560;
const W_MIN = 260;

/** The chart's elements by name (state.dom). */
function createFrame(title, W) {
  const capId = uniqueId('chart-cap');
  const capTitle = el('span', { className: 'chart-title', text: title });
  const capSummary = el('span', { className: 'chart-summary' });
  const caption = el('figcaption', { className: 'chart-caption', id: capId }, capTitle, capSummary);
  const svg = svgEl('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    class: 'chart-svg',
    role: 'img',
    'font-family': FONT_STACK,
  });
  const plot = el('div', { className: 'chart-plot' }, svg);
  const sizer = el('div', { className: 'chart-sizer', attrs: { 'aria-hidden': 'true' } });
  const summary = el('summary');
  const tableWrap = markOverflow(el('div', { className: 'table-wrap' }));
  const details = el('details', { className: 'chart-values' }, summary, tableWrap);
  const readout = el('p', { className: 'chart-readout', attrs: { 'aria-hidden': 'true' } });
  const figure = el(
    'figure',
    { className: 'chart loss-chart', attrs: { 'aria-labelledby': capId } },
    caption,
    sizer,
    plot,
    readout,
    details,
  );
  return { figure, capSummary, svg, sizer, summary, tableWrap, details, readout };
}

/** The chart is laid out for the width it gets, W_MIN..W_DEFAULT (text keeps its size). */
function observeWidth(state) {
  if (typeof ResizeObserver !== 'function') return;
  const ro = new ResizeObserver((entries) => {
    const w = Math.round(entries[entries.length - 1].contentRect.width);
    const next = Math.max(W_MIN, Math.min(W_DEFAULT, w));
    if (w > 0 && next !== state.W) {
      state.W = next;
      draw(state);
    }
  });
  ro.observe(state.dom.sizer);
}

/**
 * lossChart({ losses, title = 'MSE loss', xLabel = 'step', yLabel = 'loss' })
 *   -> { element, update(losses) }.
 * losses[i] is the loss at step i (step 0 = before any update). Additions: xStart (the step of
 * losses[0], default 0), digits (decimals in the table, default 6).
 */
export function lossChart({
  losses = [],
  title = 'MSE loss',
  xLabel = 'step',
  yLabel = 'loss',
  xStart = 0,
  digits = 6,
} = {}) {
  const state = {
    opts: { title, xLabel, yLabel, xStart, digits },
    W: W_DEFAULT,
    dom: createFrame(title, W_DEFAULT),
    values: [],
    geom: null,
    guide: null,
  };
  const { details, readout } = state.dom;
  function update(next) {
    const wasOpen = details.dataset.touched ? details.open : null;
    state.values = Array.from(next ?? [], Number);
    draw(state);
    fillTable(state);
    details.open = wasOpen ?? state.values.length <= 12;
    details.hidden = state.values.length === 0;
    readout.textContent = '';
  }
  details.addEventListener('toggle', () => {
    details.dataset.touched = '1';
  });
  listenHover(state);
  observeWidth(state);
  update(losses);
  return { element: state.dom.figure, update };
}
