// views.js - what the playground shows for one view (valid settings and what they compute): the
// token chips, the attention of one head and of every head, Y, the training loss, the figures
// list, and the NumPy code. Each view object has the elements to place and render(view).

import { el } from '../../components/dom.js';
import { table } from '../../components/tables.js';
import { figuresList } from '../../components/figures.js';
import { field } from '../../components/controls.js';
import { tokenChips } from '../../components/token-chips.js';
import { num } from '../../components/numbers.js';
import { lazyHeatmap } from '../../components/lazy-figure.js';
import { lossChartBesideTable, setChartTitle } from '../../components/loss-view.js';
import { meanOverHeads, slice2d } from '../../model/arrays.js';
import { gridCount, keptHead } from '../../model/playground.js';

/** The options of a (T, T) attention map of the view. */
function squareOptions(view, title, shape) {
  return {
    rows: view.T,
    cols: view.T,
    rowLabels: view.tokens,
    colLabels: view.tokens,
    title,
    shape,
  };
}

/** The head picked in the select (or the mean over heads), drawn large. */
function focusView() {
  const select = el('select', { id: 'pg-head' });
  const slot = el('div');
  const fig = { map: null };
  const render = (view) => {
    const { att, T, h } = view;
    const v = select.value;
    const data = v === 'mean' ? meanOverHeads(att, 0, h, T) : slice2d(att, Number(v), T, T);
    const title = v === 'mean' ? `mean over ${h} heads` : `head ${v}`;
    const shape = v === 'mean' ? `att[0].mean(0) (${T}, ${T})` : `att[0, ${v}] (${T}, ${T})`;
    const opts = squareOptions(view, title, shape);
    if (fig.map) {
      fig.map.update(data, opts);
      return;
    }
    fig.map = lazyHeatmap({ data, ...opts, scale: 'unit', exportName: 'playground-attention' });
    slot.replaceChildren(fig.map.element);
  };
  /** New options for h heads, keeping the head picked when it still exists. */
  const setHeads = (h) => {
    const prev = select.value;
    select.replaceChildren(
      el('option', { value: 'mean', text: `mean over ${h} heads` }),
      ...Array.from({ length: h }, (_, i) => el('option', { value: String(i), text: `head ${i}` })),
    );
    select.value = keptHead(prev, h);
    if (!select.value) select.value = '0';
  };
  const row = el('div', { className: 'controls' }, field('show head', select));
  return { select, row, slot, fig, render, setHeads };
}

/** Every head (the first gridCount of them), small. */
function gridView() {
  const title = el('h3');
  const slot = el('div', { className: 'figure-grid' });
  const grid = { maps: [] };
  const render = (view) => {
    const { att, T, h } = view;
    const n = gridCount(T, h);
    title.textContent =
      n < h ? `All heads: the first ${n} of ${h} (pick any head above)` : `All ${h} heads`;
    const numbers = T <= 10 ? 'auto' : false;
    grid.maps = Array.from({ length: n }, (_, i) =>
      lazyHeatmap({
        data: slice2d(att, i, T, T),
        ...squareOptions(view, `head ${i}`, `(${T}, ${T})`),
        scale: 'unit',
        numbers,
        cellSize: T <= 8 ? 26 : undefined,
        exportName: `playground-att-h${i}`,
      }),
    );
    slot.replaceChildren(...grid.maps.map((m) => m.element));
  };
  return { title, slot, grid, render };
}

/**
 * The attention views: token chips (hover highlights a row and column everywhere), the focus map
 * with its head select, and the grid of heads.
 */
export function attentionViews() {
  const chipsSlot = el('div');
  const focus = focusView();
  const grid = gridView();
  const highlight = (t) => {
    const r = t === null ? -1 : t;
    focus.fig.map?.highlight(r, r);
    for (const m of grid.grid.maps) m.highlight(r, r);
  };
  const render = (view) => {
    chipsSlot.replaceChildren(tokenChips(view.tokens, view.model.ids, highlight));
    focus.setHeads(view.h);
    focus.render(view);
    grid.render(view);
  };
  return { chipsSlot, focus, grid, render };
}

/** Y = layer(X), drawn when its <details> is opened (it is in figures() either way). */
export function yView(currentView) {
  const slot = el('div');
  const details = el(
    'details',
    { className: 'y-details' },
    el('summary', { text: 'Show the layer output Y = layer(X) as a heatmap' }),
    slot,
  );
  const fig = { map: null };
  const render = (view) => {
    if (!view || !details.open) return;
    const { Y, tokens, settings, T } = view;
    const opts = {
      rows: T,
      cols: settings.C,
      rowLabels: tokens,
      rowAxis: 'token (row)',
      colAxis: 'feature (column)',
      title: 'Y = layer(X) at the initial weights',
      shape: `(1, ${T}, ${settings.C})`,
    };
    if (fig.map) {
      fig.map.update(Y, { ...opts, colLabels: undefined, cellSize: undefined });
      return;
    }
    const style = { scale: 'diverging', numbers: false, legendLabel: 'Y' };
    fig.map = lazyHeatmap(
      { data: Y, ...opts, ...style, exportName: 'playground-Y' },
      { eager: true },
    );
    slot.replaceChildren(fig.map.element);
  };
  details.addEventListener('toggle', () => render(currentView()));
  return { details, render };
}

function lossTable(losses, s) {
  return table({
    headers: ['step', 'loss after the step'],
    rows: losses.map((L, k) => [String(k), num(L, 10)]),
    caption:
      losses.length - 1 < s.steps
        ? `Training… ${losses.length - 1} of ${s.steps} steps`
        : `The loss table (${s.steps} steps, lr = ${s.lr})`,
    numeric: [1],
  });
}

/** The loss chart and table of the view's training run (as far as it has gone). */
export function trainingView() {
  const slot = el('div', { className: 'figure-row' });
  const fig = { chart: null };
  const render = (view) => {
    const s = view.settings;
    const { losses } = view;
    const title = `MSE loss, ${s.steps} steps at lr = ${s.lr}`;
    if (fig.chart) fig.chart.update(losses);
    else fig.chart = lossChartBesideTable({ losses, title });
    setChartTitle(fig.chart, title);
    slot.replaceChildren(fig.chart.element, lossTable(losses, s));
  };
  return { slot, render };
}

/** The figures list of the view. */
export function figuresView() {
  const figs = figuresList();
  const render = (view) => {
    const s = view.settings;
    const L = view.losses;
    figs.set([
      {
        key: 'T',
        label: 'tokens T / distinct words V',
        value: `${view.T} / ${view.model.vocab.length}`,
      },
      { key: 'shape', label: 'X.shape', value: `(1, ${view.T}, ${s.C})` },
      { key: 'hs', label: 'head size hs = C / h', value: view.model.hs },
      { key: 'loss0', label: 'loss at step 0', value: L[0], digits: 10 },
      {
        key: 'lossN',
        label: `loss after step ${L.length - 1}`,
        value: L[L.length - 1],
        digits: 10,
      },
    ]);
  };
  return { element: figs.element, render };
}
