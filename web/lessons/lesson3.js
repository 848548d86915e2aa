// lesson3.js - Parallel attention and concatenation: the course demo (seed 42, B=2, T=6, C=64,
// h=4).

import { el } from '../components/dom.js';
import { shapeTable, table } from '../components/tables.js';
import { figuresList, figureRow } from '../components/figures.js';
import { numpyBlock } from '../components/code.js';
import { field, indexSelect } from '../components/controls.js';
import { num, numList } from '../components/numbers.js';
import { heatmap } from '../components/heatmap.js';
import { goDeeper } from '../components/go-deeper.js';
import { arraysButton, downloadsRow } from '../components/downloads.js';
import { checkpointBox } from '../components/checkpoints.js';
import { courseBox } from '../components/course-box.js';
import { lesson3, lesson3Captions, lesson3Step } from '../model/lesson3.js';
import { meanOverHeads, slice2d } from '../model/arrays.js';
import { batchTokenLabels, columnLabels, positionLabels } from '../model/labels.js';
import { lesson3Script } from '../model/numpy-scripts.js';
import { lesson3Arrays } from '../model/lesson-arrays.js';
import { courseData } from '../model/course.js';

/** Options of a small (T, T) map of this lesson. */
function squareMap(toks, title, shape, extra) {
  const T = toks.length;
  return {
    rows: T,
    cols: T,
    rowLabels: toks,
    colLabels: toks,
    title,
    shape,
    cellSize: 30,
    ...extra,
  };
}

/** The mean-over-heads maps are a view, not a step of the layer. */
function meanNote() {
  return el('p', {
    className: 'note mean-note',
    text: `The last map of each row, the mean over heads, is a view for the eye, not a step of the layer: the layer never averages its heads. It concatenates their outputs (merge_heads) and lets Wo mix them.`,
  });
}

/** The code of each caption of kind `kind` (lesson3Captions), by name. */
function captionCode(r, kind, at = {}) {
  const caps = lesson3Captions({ ...r, ...at }).filter((c) => c.kind === kind);
  return Object.fromEntries(caps.map((c) => [c.name, c.code]));
}

/**
 * Every head's att and their mean, per batch item: { element (batch item 0's heads), others
 * (for Go deeper: the means, a view for the eye, and the other batch items), update(r) after a
 * recompute }.
 */
function attentionGrid(r, toks) {
  const { B, T, heads } = r;
  const grids = (list, row = '') => el('div', { className: `figure-grid pairs${row}` }, ...list);
  const map = (res, b, i) => {
    const code = captionCode(res, 'map');
    if (i < heads) {
      const o = squareMap(toks, `head ${i} · batch ${b}`, `${code[`att ${b} ${i}`]} (${T}, ${T})`);
      const data = slice2d(res.att, b * heads + i, T, T);
      return heatmap({ data, ...o, scale: 'unit', exportName: `lesson3-att-b${b}-h${i}` });
    }
    const title = `mean over heads · batch ${b} (a view, not a layer step)`;
    const o = squareMap(toks, title, `${code[`mean ${b}`]} (${T}, ${T})`);
    const data = meanOverHeads(res.att, b, heads, T);
    return heatmap({ data, ...o, scale: 'unit', exportName: `lesson3-att-b${b}-mean` });
  };
  // batch item 0's heads: the lesson's main line; the means and the other batch items: Go
  // deeper's, made when it first opens (`others()`), from the arrays shown then
  const grid = [[...Array(heads).keys()].map((i) => map(r, 0, i))];
  const box = el(
    'div',
    {},
    el('h3', { text: `Batch item 0: all ${heads} heads` }),
    grids(
      grid[0].map((m) => m.element),
      ' row', // (four side by side on a wide screen)
    ),
  );
  let shown = r;
  let others = null;
  const buildOthers = () => {
    others = el('div', {}, meanNote());
    grid[0].push(map(shown, 0, heads));
    others.append(el('h3', { text: 'Batch item 0: the mean over heads' }), grid[0][heads].element);
    for (let b = 1; b < B; b++) {
      grid.push([...Array(heads + 1).keys()].map((i) => map(shown, b, i)));
      others.append(
        el('h3', { text: `Batch item ${b}: all ${heads} heads, and their mean for the eye` }),
        grids(grid[b].map((m) => m.element)),
      );
    }
    return others;
  };
  const update = (res) => {
    shown = res;
    grid.forEach((maps, b) => {
      for (let i = 0; i < heads; i++) maps[i].update(slice2d(res.att, b * heads + i, T, T));
      maps[heads]?.update(meanOverHeads(res.att, b, heads, T));
    });
  };
  return { element: box, others: () => others ?? buildOthers(), update };
}

/** The NumPy under each map of the step view of batch item b, head h (lesson3Captions). */
function stepCaptions(r, b, h) {
  const caps = lesson3Captions({ ...r, b, h }).filter((c) => c.kind === 'step');
  const [qk, scaled, att, out] = caps.map((c) =>
    c.name === c.code ? c.code : `${c.name} = ${c.code}`,
  );
  return { qk, scaled, att, out };
}

/** The five maps of the step view for step s (see lesson3Step), batch item 0, head 0. */
function stepMaps(r, toks, s) {
  const { T, hs } = r;
  const shape = `(${T}, ${T})`;
  const cap = stepCaptions(r, 0, 0);
  const diverging = (title, legendLabel, exportName, caption) =>
    squareMap(toks, title, shape, { scale: 'diverging', legendLabel, exportName, caption });
  return {
    qk: heatmap({ data: s.QK, ...diverging('① Q Kᵀ', 'q · k', 'lesson3-step-QK', cap.qk) }),
    scaled: heatmap({
      data: s.scores,
      ...diverging(`② ÷ √hs = ÷ ${Math.sqrt(hs)}`, 'score', 'lesson3-step-scaled', cap.scaled),
    }),
    mask: heatmap({ data: s.masked, ...diverging('③ mask', 'score', 'lesson3-step-masked') }),
    att: heatmap({
      data: s.att,
      ...squareMap(toks, '④ softmax (rows)', shape, { scale: 'unit', caption: cap.att }),
      exportName: 'lesson3-step-softmax',
    }),
    out: heatmap({
      data: s.headout,
      rows: T,
      cols: hs,
      rowLabels: toks,
      colAxis: 'value feature (column)',
      rowAxis: 'query (row)',
      title: '⑤ head output: att times V',
      caption: cap.out,
      shape: `(${T}, ${hs})`,
      scale: 'diverging',
      numbers: false,
      cellSize: 16,
      legendLabel: 'head output',
      exportName: 'lesson3-step-headout',
    }),
  };
}

/** Why ÷ √hs, with the spread of this page's Q Kᵀ and scores measured live. */
function scalingNote(r) {
  const n = r.B * r.heads * r.T * r.T;
  const root = Math.sqrt(r.hs);
  return el(
    'p',
    { className: 'note why-scaling' },
    `Why ÷ √hs: each score is a dot product of hs = ${r.hs} terms. When the entries of q and k have a spread of about 1 (X is standard normal and each W is drawn ÷ √C, so here they do), such a sum has variance about hs, a standard deviation about √hs = ${root}. A softmax over numbers that far apart saturates: nearly all the weight goes to one key and the gradients through it vanish. Dividing by √hs brings the spread back near 1. Measured on this page over all ${n} entries (B·h·T·T): Q Kᵀ has standard deviation `,
    num(r.scoreSpread.before),
    `; the scores, after ÷ ${root}, have `,
    num(r.scoreSpread.after),
    '.',
  );
}

function rowSumTable(s, toks, b, h) {
  return table({
    headers: ['query (row)', 'sum of the row of ④', '|sum − 1|'],
    rows: s.sums.map((sum, t) => [toks[t], num(sum, 17), num(s.sumErrors[t], 3)]),
    caption: `Row sums of softmax, batch ${b}, head ${h}`,
    numeric: [1, 2],
  });
}

/** One (batch item, head), step by step, with its own selects. update(r) after a recompute. */
function stepView(r, toks) {
  const sel = { b: 0, h: 0, r };
  const bSel = indexSelect('l3-batch', r.B, 'batch');
  const hSel = indexSelect('l3-head', r.heads, 'head');
  const controls = el(
    'div',
    { className: 'controls' },
    field('batch item', bSel),
    field('head', hSel),
  );
  const maps = stepMaps(r, toks, lesson3Step(r, 0, 0));
  const rowSumSlot = el('div');
  const update = (res = sel.r) => {
    sel.r = res;
    const s = lesson3Step(res, sel.b, sel.h);
    const cap = stepCaptions(res, sel.b, sel.h);
    maps.qk.update(s.QK, { title: '① Q Kᵀ', caption: cap.qk });
    maps.scaled.update(s.scores, { caption: cap.scaled });
    maps.mask.update(s.masked, {
      title: res.causal ? '③ causal mask: −∞ above the diagonal' : '③ mask (off: nothing masked)',
    });
    maps.att.update(s.att, { caption: cap.att });
    maps.out.update(s.headout, { caption: cap.out });
    rowSumSlot.replaceChildren(rowSumTable(s, toks, sel.b, sel.h));
  };
  bSel.addEventListener('change', () => {
    sel.b = Number(bSel.value);
    update();
  });
  hSel.addEventListener('change', () => {
    sel.h = Number(hSel.value);
    update();
  });
  const grid = el('div', { className: 'figure-grid' }, maps.qk.element, maps.scaled.element);
  grid.append(maps.mask.element, maps.att.element);
  return { controls, grid, row: figureRow(maps.out.element, rowSumSlot), update };
}

/**
 * ΔY (B·T, C) after headout[:, 0] += 1 with the block-diagonal and the full Wo. Y's columns are
 * labelled by number: with the full Wo a column of Y belongs to no head.
 */
function blockExperiment(r) {
  const { B, T, C } = r;
  const common = {
    rows: B * T,
    cols: C,
    rowLabels: batchTokenLabels(B, T),
    colLabels: columnLabels(C),
    rowAxis: 'batch · token (row)',
    colAxis: 'output column of Y',
    shape: `(${B}·${T}, ${C})`,
    scale: 'diverging',
    maxAbs: r.deltaMaxAbs,
    numbers: false,
    cellSize: 12,
    legendLabel: 'ΔY',
  };
  const bdMap = heatmap({
    data: r.bdDeltaY,
    ...common,
    title: 'ΔY with block-diagonal Wo',
    exportName: 'lesson3-deltaY-blockdiag',
    caption: `only ${r.columnBlocks[0]} change: they read only head 0`,
  });
  const fullMap = heatmap({
    data: r.fullDeltaY,
    ...common,
    title: 'ΔY with the full Wo',
    exportName: 'lesson3-deltaY-full',
    caption: `every column block changes: each column reads all ${r.heads} heads`,
  });
  const slot = el('div');
  const rowsSlot = el('div');
  const update = (res) => {
    bdMap.update(res.bdDeltaY, { maxAbs: res.deltaMaxAbs });
    fullMap.update(res.fullDeltaY, { maxAbs: res.deltaMaxAbs });
    slot.replaceChildren(blockTable(res));
    rowsSlot.replaceChildren(rowsNote(res));
  };
  const maps = el('div', { className: 'figure-grid cols-2' }, bdMap.element, fullMap.element);
  return { slot, maps, rowsSlot, update };
}

/** Why every row of ΔY is the same, with this page's Wo and ΔY (the block experiment). */
function rowsNote(r) {
  const { B, T, hs } = r;
  const first = r.columnBlocks[0];
  return el(
    'p',
    { className: 'note why-rows' },
    `Why every row of ΔY looks the same: the change is headout[:, 0] += 1, the same +1 on every entry of head 0, for all ${B * T} tokens (B·T). After merge_heads, every token's row of Δconcat (the change of concat) is the same: ones in head 0's ${first}, zeros elsewhere. ΔY = Δconcat @ Wo, so every row of ΔY is that one row times Wo: the sum of Wo's rows 0 to ${hs - 1}, Wo[:${hs}].sum(axis=0), whatever the token. With the block-diagonal Wo those ${hs} rows are 0 outside ${first}, and so is their sum. Measured on this page: each row of ΔY differs from Wo[:${hs}].sum(axis=0) by at most `,
    num(r.fullRows.maxDiff),
    ' with the full Wo and ',
    num(r.bdRows.maxDiff),
    ` with the block-diagonal one (float64 rounding); column 0, for instance, is Wo[:${hs}, 0].sum() = `,
    num(r.fullRows.headSum[0]),
    ' in every row.',
  );
}

function blockTable(r) {
  return table({
    headers: [
      'columns of Y',
      'with the block-diagonal Wo, they read',
      'block-diagonal Wo: max |ΔY|',
      'full Wo: max |ΔY|',
    ],
    rows: r.blockDiagDelta.map((v, j) => [
      r.columnBlocks[j],
      `head ${j} only`,
      num(v),
      num(r.fullDelta[j]),
    ]),
    caption: `Add 1.0 to every entry of head 0's output, ${captionCode(r, 'bump')['headout[:, 0]']}, and recompute Y`,
    numeric: [2, 3],
    stack: true,
  });
}

/** 'columns 0–15, 16–31, 32–47, 48–63': Y's column blocks in one phrase. */
function blockList(r) {
  return `columns ${r.columnBlocks.map((b) => b.replace('columns ', '')).join(', ')}`;
}

function lesson3Figures(r) {
  return [
    {
      key: 'rowSumMaxErr',
      label: `max |row sum − 1| over all ${r.B * r.heads * r.T} rows`,
      value: r.rowSumMaxErr,
      note: 'float64 rounding: the last bits depend on the summation order',
    },
    {
      key: 'blockDiagDelta',
      label: `block-diagonal Wo: max |ΔY| in ${blockList(r)} of Y`,
      value: numList(r.blockDiagDelta),
    },
    {
      key: 'fullDelta',
      label: `full Wo: max |ΔY| in ${blockList(r)} of Y`,
      value: numList(r.fullDelta),
    },
    { key: 'causal', label: 'causal mask', value: r.causal ? 'on' : 'off' },
  ];
}

function shapesCaption(r, custom) {
  const from = custom ? 'your arrays' : 'seed 42';
  return `Shapes at every stage (${from}, B = ${r.B}, T = ${r.T}, C = ${r.C}, h = ${r.heads}, hs = ${r.hs})`;
}

/** Why Wo is what lets the heads interact (the words of the block-diagonal experiment). */
function woText({ hs }) {
  const b = `${hs} × ${hs}`;
  const first = `columns 0–${hs - 1}`;
  return `Why Wo is where the heads interact: up to concat, each head's output sits in its own ${hs} columns (head i in columns ${hs}·i to ${hs}·i+${hs - 1}) and no head has seen another's numbers. Y = concat @ Wo, and the ${b} block of Wo in row block i and column block j carries head i into columns ${hs}·j to ${hs}·j+${hs - 1} of Y. The diagonal blocks keep every head in its own columns; only the off-diagonal blocks let one output column read several heads. With them set to 0 (a block-diagonal Wo) columns ${hs}·j to ${hs}·j+${hs - 1} of Y read only head j, so the change to head 0 below moves only ${first} of Y; with the full Wo each column of Y reads every head, belongs to none, and every column block moves.`;
}

function lesson3Body(parts) {
  const { r } = parts;
  return [
    parts.controls,
    parts.shapesSlot,
    parts.grid.element,
    el('h3', { text: 'Block-diagonal vs full Wo' }),
    parts.blocks.slot,
    parts.blocks.maps,
    parts.figs.element,
    parts.checks.element,
    // (built when first opened, from the arrays shown then: its eleven maps are not the first
    // build's)
    goDeeper(
      `one head step by step, why ÷ √hs, why Wo is where the heads meet, the mean over heads${r.B > 1 ? ', the other batch items' : ''}`,
      () => {
        const steps = parts.steps();
        return [
          el('h3', { text: 'One head, step by step' }),
          el('p', {
            className: 'formula',
            text: 'att = softmax(mask(Q Kᵀ / √hs)),   head output = att · V',
          }),
          parts.scalingSlot,
          steps.controls,
          steps.grid,
          steps.row,
          el('p', { className: 'note why-wo', text: woText(r) }),
          parts.blocks.rowsSlot,
          parts.grid.others(),
        ];
      },
    ),
    parts.script.element,
    parts.downloads,
  ];
}

/**
 * Lesson 3 into `body`: the course's forward pass (data: courseData) or a notebook's arrays.
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderLesson3({ mha, body, data, custom = null }) {
  const state = { causal: false, r: null };
  state.r = lesson3(mha, { causal: false, data });
  const toks = positionLabels(state.r.T);
  const causalBox = el('input', { id: 'l3-causal', attrs: { type: 'checkbox' } });
  const label = 'causal mask (a token may only attend to itself and earlier tokens)';
  const controls = el('div', { className: 'controls' }, field(label, causalBox));
  const shapesSlot = el('div');
  const grid = attentionGrid(state.r, toks);
  let steps = null; // Go deeper's step view: made when it first opens, for the arrays shown
  const stepsView = () => {
    if (!steps) {
      steps = stepView(state.r, toks);
      steps.update(state.r);
    }
    return steps;
  };
  const blocks = blockExperiment(state.r);
  const figs = figuresList();
  const getScript = () => lesson3Script({ causal: state.causal });
  const script = numpyBlock(getScript, { what: 'lesson 3' });
  const scalingSlot = el('div');
  const checks = checkpointBox('lesson3', state.r, { what: 'lesson 3' });
  const course = courseBox('lesson3', { custom: !!custom });

  function fill() {
    const r = state.r;
    const { X, Q, att, Y } = r.shapes;
    course.update({ shapes: [X, Q, att, Y], rowSumMaxErr: r.rowSumMaxErr });
    shapesSlot.replaceChildren(shapeTable(r.stages, { caption: shapesCaption(r, custom) }));
    grid.update(r);
    steps?.update(r);
    blocks.update(r);
    figs.set(lesson3Figures(r));
    scalingSlot.replaceChildren(scalingNote(r));
    checks.update(r);
    script.refresh();
  }
  causalBox.addEventListener('change', () => {
    state.causal = causalBox.checked;
    state.r = lesson3(mha, { causal: state.causal, data });
    fill();
  });

  fill();
  // the lesson's arrays with its mask as it is at the click
  const getArrays = () => lesson3Arrays(mha, data ?? courseData(mha), { causal: state.causal });
  const downloads = downloadsRow(arraysButton(3, getArrays).element);
  const parts = { r: state.r, controls, shapesSlot, grid, steps: stepsView, blocks, figs, script };
  body.append(course.element, ...lesson3Body({ ...parts, scalingSlot, checks, downloads }));

  return {
    figures: () => {
      const r = state.r;
      return {
        shapes: Object.fromEntries(Object.entries(r.shapes).map(([k, v]) => [k, [...v]])),
        att: Array.from(r.att),
        rowSumMaxErr: r.rowSumMaxErr,
        blockDiagDelta: [...r.blockDiagDelta],
        fullDelta: [...r.fullDelta],
        causal: r.causal,
      };
    },
    script: getScript,
  };
}
