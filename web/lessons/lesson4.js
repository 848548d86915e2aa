// lesson4.js - The backward pass: every gradient in the lesson's order, and the full gradient
// check.

import { el } from '../components/dom.js';
import { table, groupThousands } from '../components/tables.js';
import { figuresList } from '../components/figures.js';
import { numpyBlock } from '../components/code.js';
import { field, indexSelect } from '../components/controls.js';
import { num } from '../components/numbers.js';
import { lazyHeatmap } from '../components/lazy-figure.js';
import { GradcheckPanel } from '../components/gradcheck-panel.js';
import { arraysButton, downloadsRow } from '../components/downloads.js';
import { lesson4, gradientView, gradientSizes } from '../model/lesson4.js';
import { L4_THRESHOLD, gradcheckSize, pendingReport } from '../model/gradcheck-report.js';
import { positionLabels } from '../model/labels.js';
import { checkSamples } from '../model/notebook-check.js';
import { shapeText } from '../model/format.js';
import { lesson4Script } from '../model/numpy-scripts.js';
import { lesson4Arrays } from '../model/lesson-arrays.js';
import { layerCheck } from '../jobs/gradcheck.js';
import { checkpointBox } from '../components/checkpoints.js';

const WHAT = {
  dWo: ['concat feature (row)', 'output feature (column)', 'concat.reshape(-1, C).T @ dY'],
  dconcat: ['token (row)', 'feature (column)', 'dY @ Wo.T'],
  dheadout: ['token (row)', 'head feature (column)', 'split_heads(dconcat)'],
  dV: ['key token (row)', 'head feature (column)', 'att.T @ dheadout'],
  datt: ['query (row)', 'key (column)', 'dheadout @ V.T'],
  dscores: ['query (row)', 'key (column)', 'att ⊙ (datt − rowsum(datt ⊙ att))'],
  dQ: ['token (row)', 'head feature (column)', 'dscores @ K / √hs'],
  dK: ['token (row)', 'head feature (column)', 'dscores.T @ Q / √hs'],
  dWq: ['input feature (row)', 'q feature (column)', 'X.T @ merge(dQ)'],
  dWk: ['input feature (row)', 'k feature (column)', 'X.T @ merge(dK)'],
  dWv: ['input feature (row)', 'v feature (column)', 'X.T @ merge(dV)'],
  dX: ['token (row)', 'feature (column)', 'merge(dQ) Wq.T + merge(dK) Wk.T + merge(dV) Wv.T'],
};

/** Gradient k of lesson 4's order (r.order) as a heatmap of its (rows, cols) view v. */
function gradientMap(r, name, k, v, toks) {
  const [rowAxis, colAxis, formula] = WHAT[name];
  const square = v.rows === v.cols && v.rows === r.T;
  const thin = v.cols >= 64 && v.rows <= 12; // (6, 64): two grid columns where there are three
  // preferred sizes that fit a three-column grid at 1280 px (no second, fitted drawing)
  let cellSize = 30;
  if (v.cols >= 64) cellSize = thin ? 8 : 3;
  else if (v.cols >= 16) cellSize = 12;
  return lazyHeatmap(
    {
      data: v.data,
      rows: v.rows,
      cols: v.cols,
      rowLabels: v.rows === r.T ? toks : undefined,
      colLabels: square ? toks : undefined,
      rowAxis,
      colAxis,
      title: `${k + 1}. ${name}${v.where}`,
      shape: `of ${shapeText(r.grads[name].shape)}`,
      caption: formula,
      scale: 'diverging',
      numbers: square ? 'auto' : false,
      legendLabel: name,
      cellSize,
      exportName: `lesson4-${name}`,
    },
    { className: thin ? 'figure-span-2' : '' },
  );
}

/** Every gradient's map, and the selects of the batch item / head they show. */
function gradientMaps(r) {
  const toks = positionLabels(r.T);
  const sel = { b: 0, h: 0 };
  const maps = {};
  r.order.forEach((name, k) => {
    maps[name] = gradientMap(r, name, k, gradientView(r.grads[name], 0, 0), toks);
  });
  const bSel = indexSelect('l4-batch', r.B, 'batch');
  const hSel = indexSelect('l4-head', r.heads, 'head');
  const refresh = () => {
    r.order.forEach((name, k) => {
      const v = gradientView(r.grads[name], sel.b, sel.h);
      maps[name].update(v.data, { title: `${k + 1}. ${name}${v.where}` });
    });
  };
  bSel.addEventListener('change', () => {
    sel.b = Number(bSel.value);
    refresh();
  });
  hSel.addEventListener('change', () => {
    sel.h = Number(hSel.value);
    refresh();
  });
  const controls = el(
    'div',
    { className: 'controls' },
    field('batch item (for 3-D and 4-D gradients)', bSel),
    field('head (for 4-D gradients)', hSel),
  );
  const grid = el(
    'div',
    { className: 'figure-grid has-wide' },
    ...r.order.map((n) => maps[n].element),
  );
  return { controls, grid };
}

function gradientTable(r) {
  const sizes = gradientSizes(r.grads);
  return table({
    headers: ['gradient', 'shape', 'max |g|', '‖g‖ (square root of the sum of squares)'],
    rows: r.order.map((n) => [
      n,
      el('code', { className: 'shape', text: shapeText(r.grads[n].shape) }),
      num(sizes[n].maxAbs, 8),
      num(sizes[n].norm, 8),
    ]),
    caption: "Every gradient in the lesson's order (hover a number for full precision)",
    numeric: [2, 3],
  });
}

function checkPanel(mha, r, scheduler) {
  const panel = new GradcheckPanel({
    id: 'l4-gradcheck',
    scheduler,
    threshold: L4_THRESHOLD,
    caption: `Gradient check of L = sum(dY ⊙ Y): float64, five-point central differences, ε = 10⁻³, every entry`,
    label: 'Lesson 4 gradient check',
  });
  panel.showPending(
    'The full check (every entry of every tensor) starts as soon as the page has rendered.',
    pendingReport(mha, { B: r.B, T: r.T, C: r.C, heads: r.heads }),
  );
  return panel;
}

function checkNote(total, params) {
  return el('p', {
    className: 'note',
    text: `Each of the ${groupThousands(total)} entries (the ${groupThousands(params)} of Wq, Wk, Wv, Wo and X, and every intermediate) is moved by ±ε and ±2ε; numeric gradient = (8(L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε. Relative error = |analytic − numeric| / max(|analytic|, |numeric|, 10⁻¹²); a tensor passes when its largest relative error is ≤ 10⁻⁷.`,
  });
}

export function renderLesson4({ mha, body, data, scheduler }) {
  const r = lesson4(mha, { data });
  const { B, T, heads } = r;
  const grads = gradientMaps(r);
  const figs = figuresList();
  figs.set([
    { key: 'loss', label: 'L = sum(dY ⊙ Y)', value: r.loss },
    { key: 'params', label: 'parameters checked (Wq, Wk, Wv, Wo, X)', value: r.params },
  ]);
  const gradTable = gradientTable(r);
  const panel = checkPanel(mha, r, scheduler);
  const script = numpyBlock(() => lesson4Script(), { what: 'lesson 4' });
  const total = gradcheckSize(mha, { B, T, C: r.C, heads });

  body.append(
    el('p', {
      className: 'formula',
      text: `loss L = sum(dY ⊙ Y)  ⇒  dL/dY = dY  (dY: a random (2, 6, 64) array, the next draw of the seed-42 stream; no causal mask here)`,
    }),
    grads.controls,
    grads.grid,
    gradTable,
    el('h3', { text: 'Gradient check' }),
    checkNote(total, r.params),
    panel.element,
    figs.element,
    script.element,
    downloadsRow(arraysButton(4, () => lesson4Arrays(mha, r)).element),
  );
  body.append(checkpointBox('lesson4', r, { what: 'lesson 4' }).element);

  return {
    figures: () => ({
      grads: Object.fromEntries(r.order.map((n) => [n, Array.from(r.grads[n].data)])),
      gradcheck: panel.rows,
    }),
    script: () => lesson4Script(),
    afterReady() {
      // first of the background jobs: the course-size check is what lesson 4 is about. Slices of
      // 40 ms: fewer yields to the browser (each one may cost a frame) than the default 12 ms,
      // still short enough for input to stay responsive
      const samples = checkSamples(mha, { B, T, C: r.C, heads }); // 0 (all) at course size
      const start = layerCheck(mha, { C: r.C, heads, W: r.W }, r.X, { B, T, G: r.dY, samples });
      panel.run(start, { priority: 7, total: samples ? undefined : total, sliceMs: 40, samples });
    },
    panel,
  };
}
