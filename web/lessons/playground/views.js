// views.js - what the playground shows for one view (valid settings and what they compute): the
// token chips, the attention of one head and of every head, Y, the training loss, the figures
// list, and the NumPy code. Each view object has the elements to place and render(view).

import { el } from '../../components/dom.js';
import { progressBar, table } from '../../components/tables.js';
import { figuresList } from '../../components/figures.js';
import { field } from '../../components/controls.js';
import { tokenChips } from '../../components/token-chips.js';
import { num } from '../../components/numbers.js';
import { heatmap } from '../../components/heatmap.js';
import { lossChartBesideTable, setChartTitle } from '../../components/loss-view.js';
import { meanOverHeads, slice2d } from '../../model/arrays.js';
import { timeLeftText } from '../../model/format.js';
import {
  GRID_MAX_T,
  gridHeads,
  keptHead,
  shownAttention,
  stepCount,
} from '../../model/playground.js';

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
  const render = (view, shown) => {
    const { T, h } = view;
    const { att, label } = shown;
    const v = select.value;
    const data = v === 'mean' ? meanOverHeads(att, 0, h, T) : slice2d(att, Number(v), T, T);
    const title = `${v === 'mean' ? `mean over ${h} heads` : `head ${v}`}, ${label}`;
    const shape = v === 'mean' ? `att[0].mean(0) (${T}, ${T})` : `att[0, ${v}] (${T}, ${T})`;
    const opts = squareOptions(view, title, shape);
    if (fig.map) {
      fig.map.update(data, opts);
      return;
    }
    fig.map = heatmap({ data, ...opts, scale: 'unit', exportName: 'playground-attention' });
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
  return { select, slot, fig, render, setHeads };
}

/** Every head (the first gridHeads of them), small; none above GRID_MAX_T tokens. */
function gridView() {
  const title = el('h3');
  const slot = el('div', { className: 'figure-grid' });
  const grid = { maps: [], view: null };
  const render = (view, shown) => {
    const { T, h } = view;
    const n = gridHeads(T, h);
    if (n === 0) {
      title.textContent = `One head at a time above ${GRID_MAX_T} tokens: pick it in “show head”`;
      grid.maps = [];
      grid.view = view;
      slot.replaceChildren();
      return;
    }
    const which = n < h ? `the first ${n} of ${h} (pick any head above)` : `all ${h} heads`;
    title.textContent = `Attention of ${which}, ${shown.label}`;
    const opts = (i) => squareOptions(view, `head ${i}, ${shown.label}`, `(${T}, ${T})`);
    if (grid.view === view) {
      // the same view with other weights (the toggle, or training moved on): redraw in place
      grid.maps.forEach((m, i) => m.update(slice2d(shown.att, i, T, T), opts(i)));
      return;
    }
    grid.view = view;
    const numbers = T <= 10 ? 'auto' : false;
    grid.maps = Array.from({ length: n }, (_, i) =>
      heatmap({
        data: slice2d(shown.att, i, T, T),
        ...opts(i),
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

/** One radio button of the weights toggle, with its label. */
function weightsRadio(id, value) {
  const input = el('input', { id, attrs: { type: 'radio', name: 'pg-att-weights', value } });
  const text = el('span', { className: 'label-text' });
  const label = el('label', { className: 'control-inline', attrs: { for: id } }, input, text);
  return { input, text, label };
}

/**
 * The toggle between the attention at the initial weights and after the steps taken: { element,
 * want, set(view, shown) } (want: what the student picked; shown: what the maps show, which is
 * the initial attention while no step is taken).
 */
function weightsToggle(onChange) {
  const initial = weightsRadio('pg-att-initial', 'initial');
  const trained = weightsRadio('pg-att-trained', 'trained');
  initial.text.textContent = 'initial weights (before any step)';
  const element = el(
    'fieldset',
    { className: 'weights-toggle' },
    el('legend', { text: 'Attention maps show the weights' }),
    initial.label,
    trained.label,
  );
  const toggle = { element, want: 'initial' };
  for (const r of [initial, trained]) {
    r.input.addEventListener('change', () => {
      if (!r.input.checked) return;
      toggle.want = r.input.value;
      onChange();
    });
  }
  toggle.set = (view, shown) => {
    const steps = view.trained?.steps ?? 0;
    const target = view.settings.steps;
    trained.text.textContent =
      steps > 0
        ? `after ${stepCount(steps)}${steps < target ? ` of ${target} (training…)` : ''}`
        : `after ${stepCount(target)} (no step taken yet)`;
    trained.input.disabled = steps === 0;
    initial.input.checked = shown.weights === 'initial';
    trained.input.checked = shown.weights === 'trained';
  };
  return toggle;
}

/**
 * The attention views: token chips (hover highlights a row and column everywhere), the toggle
 * between the initial weights and the weights after the steps taken, the focus map with its head
 * select, and the grid of heads. shown(view): what the maps show (see shownAttention).
 */
export function attentionViews(currentView) {
  const chipsSlot = el('div');
  const focus = focusView();
  const grid = gridView();
  const toggle = weightsToggle(() => refresh(currentView()));
  const row = el(
    'div',
    { className: 'controls' },
    field('show head', focus.select),
    toggle.element,
  );
  const shown = (view) => shownAttention(view, toggle.want);
  const highlight = (t) => {
    const r = t === null ? -1 : t;
    focus.fig.map?.highlight(r, r);
    for (const m of grid.grid.maps) m.highlight(r, r);
  };
  /** Draw the maps for the view's attention as the toggle asks (after training moved on too). */
  function refresh(view) {
    if (!view) return;
    const s = shown(view);
    toggle.set(view, s);
    focus.render(view, s);
    grid.render(view, s);
  }
  let rendered = null; // the view the maps were built for
  /** A new view: its maps; then the mark mha:pg-attention (detail: its T, C, h) for timings. */
  const render = (view) => {
    chipsSlot.replaceChildren(tokenChips(view.tokens, view.model.ids, highlight));
    focus.setHeads(view.h);
    rendered = view;
    refresh(view);
    const detail = { T: view.T, C: view.settings.C, h: view.h, built: !!focus.fig.map };
    performance.mark('mha:pg-attention', { detail });
  };
  /** Training moved on: redraw when the maps show the trained weights, else relabel the toggle. */
  const progress = (view) => {
    if (view !== rendered) return; // render(view) comes next and draws it all
    if (toggle.want === 'trained') refresh(view);
    else toggle.set(view, shown(view));
  };
  /** The head select changed: only the large map. */
  const headChanged = (view) => view && focus.render(view, shown(view));
  return { chipsSlot, row, focus, grid, toggle, render, refresh, progress, headChanged, shown };
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
    fig.map = heatmap({ data: Y, ...opts, ...style, exportName: 'playground-Y' });
    slot.replaceChildren(fig.map.element);
  };
  details.addEventListener('toggle', () => render(currentView()));
  return { details, render };
}

/** The loss table: row k is the loss after k steps, as lesson 5's script prints it. */
function lossTable(losses, s) {
  const taken = losses.length - 1;
  return table({
    headers: ['steps taken k', 'loss after k steps'],
    rows: losses.map((L, k) => [String(k), num(L, 10)]),
    caption:
      taken < s.steps
        ? `Training… ${taken} of ${stepCount(s.steps)} taken (row 0: the initial weights)`
        : `The loss table: ${stepCount(s.steps)} at lr = ${s.lr} (row 0: the initial weights)`,
    numeric: [1],
  });
}

/** The chart's values summary, counted as lesson 5's script counts steps. */
function valuesSummary(title, losses) {
  const taken = losses.length - 1;
  if (taken < 1) return `${title}: the loss before any step`;
  return `${title}: the loss before any step and after each of ${stepCount(taken)}`;
}

/** The loss chart and table of the view's training run (as far as it has gone). */
/** Where a run in the compute engine runs, for its status line. */
function runsWhere(where) {
  return where === 'worker' ? 'in a background worker' : 'in small slices on this page';
}

/**
 * The status of a run in the compute engine (view.run, see training.js): a progress bar over the
 * steps and a line with the time left; hidden for a run trained at once (view.run null).
 */
function trainingProgress() {
  const element = el('div', { id: 'pg-train-progress', className: 'train-progress' });
  const line = el('p', { className: 'note', attrs: { 'aria-live': 'polite' } });
  const state = { bar: null, started: null };
  const render = (view) => {
    const r = view.run;
    element.hidden = !r;
    if (!r) return;
    if (state.started !== r.t0) {
      state.started = r.t0;
      state.bar = progressBar({ label: `Training: ${stepCount(r.steps)}` });
      element.replaceChildren(state.bar.element, line);
    }
    element.dataset.state = r.state;
    const steps = `${r.step} of ${stepCount(r.steps)}`;
    if (r.state === 'running') {
      state.bar.set(r.step, r.steps);
      line.textContent = `Training ${runsWhere(r.where)}: ${steps} taken.${timeLeftText(r.etaMs)}`;
    } else if (r.state === 'done') {
      state.bar.finish(`${stepCount(r.step)} in ${(r.ms / 1000).toFixed(1)} s`);
      line.textContent = `Trained ${runsWhere(r.where)}.`;
    } else {
      state.bar.finish(`stopped after ${stepCount(r.step)}`);
      line.textContent = `Training stopped after ${steps}.`;
    }
  };
  return { element, render };
}

export function trainingView() {
  const chartSlot = el('div', { className: 'figure-row' });
  const progress = trainingProgress();
  const slot = el('div', { className: 'training-slot' }, progress.element, chartSlot);
  const fig = { chart: null };
  const render = (view) => {
    const s = view.settings;
    const { losses } = view;
    const title = `MSE loss, ${stepCount(s.steps)} at lr = ${s.lr}`;
    progress.render(view);
    if (fig.chart) fig.chart.update(losses);
    else fig.chart = lossChartBesideTable({ losses, title });
    setChartTitle(fig.chart, title);
    const summary = fig.chart.element.querySelector('details.chart-values > summary');
    if (summary) summary.textContent = valuesSummary(title, losses);
    chartSlot.replaceChildren(fig.chart.element, lossTable(losses, s));
  };
  return { slot, render };
}

/** The loss after the steps taken, or (none yet) a word that training is under way. */
function lastLoss(L, s) {
  const taken = L.length - 1;
  if (taken < 1) {
    return { key: 'lossN', label: `loss after ${stepCount(s.steps)}`, value: 'training…' };
  }
  return { key: 'lossN', label: `loss after ${stepCount(taken)}`, value: L[taken], digits: 10 };
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
      { key: 'loss0', label: 'loss before any step (initial weights)', value: L[0], digits: 10 },
      lastLoss(L, s),
    ]);
  };
  return { element: figs.element, render };
}
