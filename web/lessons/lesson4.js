// lesson4.js - The backward pass: every gradient in the lesson's order, and the full gradient
// check.

import { COURSE } from '../model/defaults.js';
import { el } from '../components/dom.js';
import { table, groupThousands } from '../components/tables.js';
import { figuresList } from '../components/figures.js';
import { numpyBlock } from '../components/code.js';
import { field, indexSelect } from '../components/controls.js';
import { num } from '../components/numbers.js';
import { heatmap } from '../components/heatmap.js';
import { goDeeper } from '../components/go-deeper.js';
import { GradcheckPanel } from '../components/gradcheck-panel.js';
import { afterFrame } from '../jobs/scheduler.js';
import { arraysButton, downloadsRow } from '../components/downloads.js';
import { lesson4, lesson4From, gradientView, lesson4Captions } from '../model/lesson4.js';
import {
  L4_LINES,
  backwardOrder,
  gradcheckSize,
  passLineReason,
  passLinesText,
  pendingReport,
} from '../model/gradcheck-report.js';
import { formatSci } from '../components/scales.js';
import { positionLabels } from '../model/labels.js';
import { checkSamples } from '../model/custom-arrays.js';
import { shapeText } from '../model/format.js';
import { lesson4Script } from '../model/numpy-scripts.js';
import { lesson4Arrays } from '../model/lesson-arrays.js';
import { checkpointBox } from '../components/checkpoints.js';
import { courseBox } from '../components/course-box.js';
import { epsChart } from '../components/eps-chart.js';
import { entryLabel, epsilonSweep, sweepTensors } from '../model/epsilon-sweep.js';
import { dXPathsBox, matmulRuleBox } from './lesson4-rules.js';

// the axes of each gradient's map (its caption, NumPy that runs, is lesson4Captions')
const AXES = {
  dWo: ['concat feature (row)', 'output feature (column)'],
  dconcat: ['token (row)', 'feature (column)'],
  dheadout: ['token (row)', 'head feature (column)'],
  dV: ['key token (row)', 'head feature (column)'],
  datt: ['query (row)', 'key (column)'],
  dscores: ['query (row)', 'key (column)'],
  dQ: ['token (row)', 'head feature (column)'],
  dK: ['token (row)', 'head feature (column)'],
  dWq: ['input feature (row)', 'q feature (column)'],
  dWk: ['input feature (row)', 'k feature (column)'],
  dWv: ['input feature (row)', 'v feature (column)'],
  dX: ['token (row)', 'feature (column)'],
};

/**
 * Gradient k of lesson 4's order (r.order) as a heatmap of its (rows, cols) view v, captioned
 * with its NumPy (cap: a lesson4Captions entry).
 */
function gradientMap(r, cap, k, v, toks) {
  const { name } = cap;
  const [rowAxis, colAxis] = AXES[name];
  const square = v.rows === v.cols && v.rows === r.T;
  const thin = v.cols >= 64 && v.rows <= 12; // (6, 64): two grid columns where there are three
  // preferred sizes that fit a three-column grid at 1280 px (no second, fitted drawing)
  let cellSize = 30;
  if (v.cols >= 64) cellSize = thin ? 8 : 3;
  else if (v.cols >= 16) cellSize = 12;
  const map = heatmap({
    data: v.data,
    rows: v.rows,
    cols: v.cols,
    rowLabels: v.rows === r.T ? toks : undefined,
    colLabels: square ? toks : undefined,
    rowAxis,
    colAxis,
    title: `${k + 1}. ${name}${v.where}`,
    shape: `of ${shapeText(r.grads[name].shape)}`,
    caption: `${name} = ${cap.code}`,
    scale: 'diverging',
    numbers: square ? 'auto' : false,
    legendLabel: name,
    cellSize,
    exportName: `lesson4-${name}`,
  });
  if (thin) map.element.classList.add('figure-span-2');
  return map;
}

/** Every gradient's map, and the selects of the batch item / head they show. */
function gradientMaps(r, captions) {
  const toks = positionLabels(r.T);
  const sel = { b: 0, h: 0 };
  const maps = {};
  captions.forEach((cap, k) => {
    maps[cap.name] = gradientMap(r, cap, k, gradientView(r.grads[cap.name], 0, 0), toks);
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

function gradientTable(r, captions) {
  const sizes = r.gradSizes;
  return table({
    headers: ['gradient', 'shape', 'max |g|', '‖g‖'],
    rows: captions.map(({ name: n, shape }) => [
      n,
      el('code', { className: 'shape', text: `${shape} = ${shapeText(r.grads[n].shape)}` }),
      num(sizes[n].maxAbs, 8),
      num(sizes[n].norm, 8),
    ]),
    caption:
      "Every gradient in the lesson's order; ‖g‖ is the square root of the sum of squares " +
      '(hover a number for full precision)',
    numeric: [2, 3],
    stack: true,
    className: 'grad-sizes',
  });
}

function checkPanel(mha, r, compute) {
  const panel = new GradcheckPanel({
    id: 'l4-gradcheck',
    compute,
    threshold: L4_LINES,
    caption: `Gradient check of L = sum(dY ⊙ Y): float64, every entry; one row per gradient, in the order the lesson computes them`,
    label: 'Lesson 4 gradient check',
    order: backwardOrder(mha),
  });
  panel.showPending(
    'The full check (every entry of every tensor) starts as soon as the page has rendered.',
    pendingReport(mha, { B: r.B, T: r.T, C: r.C, heads: r.heads }),
  );
  return panel;
}

/** A pass line or an error in words: one digit. */
const fmt0 = (x) => formatSci(x, 0);

function checkNote(total, params) {
  return el('p', {
    className: 'note',
    text: `Each of the ${groupThousands(total)} entries (the ${groupThousands(params)} of the parameters Wq, Wk, Wv, Wo and the input X, and those of every intermediate) is moved by ±ε and the loss computed again. The table starts as a notebook computes it: two-point central differences, numeric gradient = (L(x+ε) − L(x−ε)) / 2ε with ε = 10⁻⁵, and the relative error of each entry |a − n| / max(|a|, |n|) (a: analytic, n: numeric; the denominator is floored at 10⁻¹², so an entry where both are 0 has error 0). A tensor passes when its largest relative error is within the line: ${passLinesText(L4_LINES, fmt0)}. ${passLineReason('lesson4', fmt0, (x) => formatSci(x, 1))}. Choose the stencil, ε and the relative error your notebook uses above the table (Go deeper, below, says why ε = 10⁻⁵ and not smaller).`,
  });
}

/** Where lesson 4's dY comes from: the course's stream, a notebook's dY, or drawn for it. */
function dYText(r, custom) {
  const shape = `(${r.B}, ${r.T}, ${r.C})`;
  if (!custom) {
    return `dY: a random ${shape} array, the next draw of the seed-${COURSE.seed} stream`;
  }
  if (custom.given?.dY) return `dY: your notebook's ${shape} array`;
  return `dY: a random ${shape} array drawn for your arrays (your file has no dY of that size)`;
}

/** The five-point stencil, for Go deeper. */
function stencilNote() {
  return el('p', {
    className: 'note',
    text: `The five-point stencil (a stencil: the points at which a finite difference evaluates L, here x ± ε and x ± 2ε), (8(L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε, cancels the ε² term of the error as well: its truncation error falls as ε⁴, not ε², so at each stencil's best ε it is about ten times more precise, while at ε = 10⁻⁵, where rounding dominates, it is no better (the ε sweep below shows both).`,
  });
}

// ⊙, rowsum, split_heads and merge_heads, defined where lesson 4's text first uses them (the
// formulas and captions below)
const NOTATION = `Notation: A ⊙ B is the element-wise product (NumPy: A * B); rowsum(A) sums each row of A and keeps the sums as a column, A.sum(axis=-1, keepdims=True), so that they broadcast back over each row. split_heads(x, h) is lesson 2's x.reshape(B, T, h, hs).transpose(0, 2, 1, 3), (B, T, C) → (B, h, T, hs); merge_heads(x), its inverse, is x.transpose(0, 2, 1, 3).reshape(B, T, C).`;

// the softmax backward in three lines, for one row s of scores (the softmax acts on each row)
const SOFTMAX_WHY = [
  `att_j = exp(s_j) / Σ_k exp(s_k), so ∂att_j/∂s_k = att_j (δ_jk − att_k), where δ_jk is 1 if j = k and 0 otherwise;`,
  `dscores_k = Σ_j datt_j · ∂att_j/∂s_k = Σ_j datt_j att_j (δ_jk − att_k) = att_k datt_k − att_k Σ_j datt_j att_j;`,
  `dscores_k = att_k (datt_k − Σ_j datt_j att_j): for the whole row, dscores = att ⊙ (datt − rowsum(datt ⊙ att)), in NumPy att * (datt - (datt * att).sum(axis=-1, keepdims=True)).`,
];

/** Why the softmax backward is dscores = att ⊙ (datt − rowsum(datt ⊙ att)), in three lines. */
function softmaxWhy() {
  return el(
    'div',
    { className: 'callout softmax-why' },
    el('p', {
      text: `Why dscores = att ⊙ (datt − rowsum(datt ⊙ att)): for one row s of scores (the softmax acts on each row on its own),`,
    }),
    el('ol', {}, ...SOFTMAX_WHY.map((line) => el('li', { text: line }))),
  );
}

const EPS_WHY = `Why ε = 10⁻⁵ with two points, and why a notebook's check prints errors near 10⁻⁷ and not 10⁻¹⁵: a finite difference makes two errors. The truncation error is the part of the Taylor series L(x + ε) = L(x) + ε L′(x) + ε² L″(x)/2 + … that the stencil leaves out: it grows as ε² with two points and as ε⁴ with five, the right-hand side of the figure. The rounding error is float64's: L itself is exact only to about 10⁻¹⁶ × |L|, and the stencil divides the difference of two such values by ε, so it grows as 1/ε as ε shrinks, the left-hand side. Their sum makes the V; its bottom is near ε = 10⁻⁵ for two points (where ε² meets 10⁻¹⁶ / ε) and near 10⁻³ for five (ε⁴ against 10⁻¹⁶ / ε). Below about 10⁻⁸ the two lines coincide: rounding is all that is left. Each line is one entry's error, computed live on this lesson's arrays. The check table shows the largest error over every entry, and that one comes from an entry with a small gradient: the same absolute rounding error is a larger relative error there, so the table's worst rows sit orders of magnitude above the bottom of a V drawn for an entry whose gradient is near 1.`;

/** The figure of one entry's error against ε, for an input the student picks. */
function epsilonFigure(mha, data) {
  const select = el('select', { id: 'l4-eps-tensor' });
  const sizes = { B: data.B, T: data.T, C: data.C, heads: data.heads };
  for (const t of sweepTensors(mha)) {
    const label = entryLabel(t, mha.tensorShape(t, sizes).length);
    select.append(el('option', { text: label, attrs: { value: t } }));
  }
  const slot = el('div', { className: 'eps-figure' });
  const draw = () => slot.replaceChildren(epsChart(epsilonSweep(mha, data, select.value)));
  select.addEventListener('change', draw);
  draw();
  return el(
    'div',
    {},
    el('h3', { text: 'Truncation against rounding: the error against ε' }),
    el('p', { className: 'note', text: EPS_WHY }),
    el('div', { className: 'controls' }, field('entry', select)),
    slot,
  );
}

/**
 * Lesson 4 into `body`: the backward pass of lesson 3's arrays (data) with dY, and its gradient
 * check (started by afterReady).
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderLesson4(ctx) {
  const { mha, body, compute, custom = null, prepared } = ctx;
  // (computed by the compute engine while the script loaded; drawn again: here)
  const r = prepared ? lesson4From(mha, prepared) : lesson4(mha, { data: ctx.data });
  const { B, T, heads } = r;
  const captions = lesson4Captions(mha); // r.order, each with its NumPy
  const figs = figuresList();
  figs.set([
    { key: 'loss', label: 'L = sum(dY ⊙ Y)', value: r.loss },
    {
      key: 'params',
      label: 'parameters checked (Wq, Wk, Wv, Wo) and the input X',
      value: r.params,
    },
  ]);
  const gradTable = gradientTable(r, captions);
  // the check's panel is made with its job (afterReady, the task after the build's): here, its
  // place
  const panelSlot = el('div', { className: 'gradcheck-slot' });
  let panel = null;
  let disposed = false;
  const script = numpyBlock(() => lesson4Script(), { what: 'lesson 4' });
  const total = gradcheckSize(mha, { B, T, C: r.C, heads });

  const course = courseBox('lesson4', { custom: !!custom });
  course.update({ gradcheck: null });
  body.append(
    course.element,
    el('p', { className: 'note notation', text: NOTATION }),
    el('p', {
      className: 'formula',
      text: `loss L = sum(dY ⊙ Y)  ⇒  dL/dY = dY  (${dYText(r, custom)}; no causal mask here)`,
    }),
    gradTable,
    el('h3', { text: 'Gradient check' }),
    checkNote(total, r.params),
    panelSlot,
    figs.element,
    // (built when first opened: the view's first build is its main line)
    goDeeper(
      'every gradient as a map, the matmul rule, the softmax backward, the three paths to dX, ' +
        'the stencil and ε',
      () => {
        const grads = gradientMaps(r, captions);
        return [
          grads.controls,
          grads.grid,
          matmulRuleBox(r),
          softmaxWhy(),
          dXPathsBox(r),
          stencilNote(),
          epsilonFigure(mha, r),
        ];
      },
    ),
    script.element,
    downloadsRow(arraysButton(4, () => lesson4Arrays(mha, r)).element),
  );
  body.append(checkpointBox('lesson4', r, { what: 'lesson 4' }).element);

  return {
    figures: () => ({
      grads: Object.fromEntries(r.order.map((n) => [n, Array.from(r.grads[n].data)])),
      gradcheck: panel?.rows ?? null,
    }),
    script: () => lesson4Script(),
    afterReady() {
      panel = checkPanel(mha, r, compute);
      panel.onChange((p) => course.update({ gradcheck: p.rows }));
      panelSlot.replaceWith(panel.element);
      // first of the background jobs: the course-size check is what lesson 4 is about. In the
      // workers, or (the fallback) in main-thread slices of 40 ms: fewer yields to the browser
      // (each one may cost a frame) than the default 12 ms, still short enough for input. It
      // starts once the panel's frame is painted: a worker computing on the other core would
      // slow that frame's layout (on a machine of two cores)
      const samples = checkSamples(mha, { B, T, C: r.C, heads }); // 0 (all) at course size
      const check = { C: r.C, heads, W: r.W, X: r.X, opts: { B, T, G: r.dY, samples } };
      const opts = { priority: 7, total: samples ? undefined : total, sliceMs: 40 };
      return afterFrame().then(() => disposed || panel.run(check, opts));
    },
    dispose() {
      disposed = true;
      panel?.cancel();
    },
  };
}
