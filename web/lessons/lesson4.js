// lesson4.js - The backward pass: every gradient in the lesson's order, and the full gradient check.

import { table } from '../components/tables.js';
import {
  lesson4,
  pendingReport,
  GRAD_ORDER,
  maxAbs,
  frobenius,
  layerWith,
  gradcheckJob,
  gradcheckSize,
} from '../model.js';
import { lesson4Script } from './numpy.js';
import {
  el,
  figuresList,
  numpyBlock,
  num,
  field,
  shapeText,
  thousands,
  GradcheckPanel,
  lazyHeatmap,
} from './common.js';

export const L4_THRESHOLD = 1e-7;

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

export function renderLesson4({ mha, body, data, scheduler }) {
  const r = lesson4(mha, { data });
  const { B, T, heads, hs } = r;
  const toks = Array.from({ length: T }, (_, t) => `t${t}`);
  let sb = 0,
    sh = 0;

  // the (rows, cols) view of a gradient for the selected batch item / head
  function view(name) {
    const g = r.grads[name];
    const s = g.shape;
    if (s.length === 2) return { data: g.data, rows: s[0], cols: s[1], where: '' };
    if (s.length === 3) {
      const n = s[1] * s[2];
      return {
        data: g.data.subarray(sb * n, (sb + 1) * n),
        rows: s[1],
        cols: s[2],
        where: `[${sb}]`,
      };
    }
    const n = s[2] * s[3];
    const k = sb * s[1] + sh;
    return {
      data: g.data.subarray(k * n, (k + 1) * n),
      rows: s[2],
      cols: s[3],
      where: `[${sb}, ${sh}]`,
    };
  }

  const bSel = el(
    'select',
    { id: 'l4-batch' },
    ...Array.from({ length: B }, (_, b) => el('option', { value: String(b), text: `batch ${b}` })),
  );
  const hSel = el(
    'select',
    { id: 'l4-head' },
    ...Array.from({ length: heads }, (_, i) =>
      el('option', { value: String(i), text: `head ${i}` }),
    ),
  );
  const controls = el(
    'div',
    { className: 'controls' },
    field('batch item (for 3-D and 4-D gradients)', bSel),
    field('head (for 4-D gradients)', hSel),
  );

  const maps = {};
  GRAD_ORDER.forEach((name, k) => {
    const v = view(name);
    const [rowAxis, colAxis, formula] = WHAT[name];
    const square = v.rows === v.cols && v.rows === T;
    const thin = v.cols >= 64 && v.rows <= 12; // (6, 64): two grid columns where there are three
    maps[name] = lazyHeatmap(
      {
        data: v.data,
        rows: v.rows,
        cols: v.cols,
        rowLabels: v.rows === T ? toks : undefined,
        colLabels: square ? toks : undefined,
        rowAxis,
        colAxis,
        title: `${k + 1}. ${name}${v.where}`,
        shape: `of ${shapeText(r.grads[name].shape)}`,
        caption: formula,
        scale: 'diverging',
        numbers: square ? 'auto' : false,
        legendLabel: name,
        // preferred sizes that fit a three-column grid at 1280 px (no second, fitted drawing)
        cellSize: v.cols >= 64 ? (thin ? 8 : 3) : v.cols >= 16 ? 12 : 30,
        exportName: `lesson4-${name}`,
      },
      { className: thin ? 'figure-span-2' : '' },
    );
  });

  const figs = figuresList();
  figs.set([
    { key: 'loss', label: 'L = sum(dY ⊙ Y)', value: r.loss },
    {
      key: 'params',
      label: 'parameters checked (Wq, Wk, Wv, Wo, X)',
      value: 4 * r.C * r.C + B * T * r.C,
    },
  ]);
  const gradTable = table({
    headers: ['gradient', 'shape', 'max |g|', '‖g‖ (square root of the sum of squares)'],
    rows: GRAD_ORDER.map((n) => [
      n,
      el('code', { className: 'shape', text: shapeText(r.grads[n].shape) }),
      num(maxAbs(r.grads[n].data), 8),
      num(frobenius(r.grads[n].data), 8),
    ]),
    caption: "Every gradient in the lesson's order (hover a number for full precision)",
    numeric: [2, 3],
  });

  const panel = new GradcheckPanel({
    id: 'l4-gradcheck',
    scheduler,
    threshold: L4_THRESHOLD,
    caption:
      'Gradient check of L = sum(dY ⊙ Y): float64, five-point central differences, ε = 10⁻³, every entry',
    label: 'Lesson 4 gradient check',
  });
  panel.showPending(
    'The full check (every entry of every tensor) starts as soon as the page has rendered.',
    pendingReport({ B, T, C: r.C, heads }),
  );

  function refresh() {
    for (const name of GRAD_ORDER) {
      const v = view(name);
      maps[name].update(v.data, { title: `${GRAD_ORDER.indexOf(name) + 1}. ${name}${v.where}` });
    }
  }
  bSel.addEventListener('change', () => {
    sb = Number(bSel.value);
    refresh();
  });
  hSel.addEventListener('change', () => {
    sh = Number(hSel.value);
    refresh();
  });

  const script = numpyBlock(() => lesson4Script(), { what: 'lesson 4' });
  const total = gradcheckSize({ B, T, C: r.C, heads });

  body.append(
    el('p', {
      className: 'formula',
      text: 'loss L = sum(dY ⊙ Y)  ⇒  dL/dY = dY  (dY: a random (2, 6, 64) array, the next draw of the seed-42 stream; no causal mask here)',
    }),
    controls,
    el('div', { className: 'figure-grid has-wide' }, ...GRAD_ORDER.map((n) => maps[n].element)),
    gradTable,
    el('h3', { text: 'Gradient check' }),
    el('p', {
      className: 'note',
      text: `Each of the ${thousands(total)} entries (the ${thousands(4 * r.C * r.C + B * T * r.C)} of Wq, Wk, Wv, Wo and X, and every intermediate) is moved by ±ε and ±2ε; numeric gradient = (8(L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε. Relative error = |analytic − numeric| / max(|analytic|, |numeric|, 10⁻¹²); a tensor passes when its largest relative error is ≤ 10⁻⁷.`,
    }),
    panel.element,
    figs.element,
    script.element,
  );

  return {
    figures: () => ({
      grads: Object.fromEntries(GRAD_ORDER.map((n) => [n, Array.from(r.grads[n].data)])),
      gradcheck: panel.rows,
    }),
    afterReady() {
      // first of the background jobs: the course-size check is what lesson 4 is about. Slices of
      // 40 ms: fewer yields to the browser (each one may cost a frame) than the default 12 ms,
      // still short enough for input to stay responsive
      panel.run(
        gradcheckJob(() => layerWith(mha, r.C, heads, r.W), r.X, { B, T, G: r.dY }),
        { priority: 7, total, sliceMs: 40 },
      );
    },
    panel,
  };
}
