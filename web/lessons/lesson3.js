// lesson3.js - Parallel attention and concatenation: the course demo (seed 42, B=2, T=6, C=64, h=4).

import { shapeTable, table } from '../components/tables.js';
import { lesson3, meanOverHeads, slice2d } from '../model.js';
import { lesson3Script } from './numpy.js';
import {
  el,
  figuresList,
  numpyBlock,
  numList,
  num,
  field,
  figureRow,
  lazyHeatmap,
} from './common.js';

export function renderLesson3({ mha, body, data }) {
  let causal = false;
  let r = lesson3(mha, { causal, data });
  const { B, T, heads, hs, C } = r;
  const toks = Array.from({ length: T }, (_, t) => `t${t}`);

  // --- controls
  const causalBox = el('input', { id: 'l3-causal', attrs: { type: 'checkbox' } });
  const controls = el(
    'div',
    { className: 'controls' },
    field('causal mask (a token may only attend to itself and earlier tokens)', causalBox),
  );

  // --- shapes
  const shapesSlot = el('div');

  // --- all heads, per batch item, plus the mean over heads
  const gridMaps = [];
  const gridBox = el('div');
  for (let b = 0; b < B; b++) {
    const maps = [];
    for (let i = 0; i < heads; i++) {
      const h = lazyHeatmap({
        data: slice2d(r.att, b * heads + i, T, T),
        rows: T,
        cols: T,
        rowLabels: toks,
        colLabels: toks,
        title: `head ${i} · batch ${b}`,
        shape: `att[${b}, ${i}] (${T}, ${T})`,
        scale: 'unit',
        cellSize: 30,
        exportName: `lesson3-att-b${b}-h${i}`,
      });
      maps.push(h);
    }
    const mean = lazyHeatmap({
      data: meanOverHeads(r.att, b, heads, T),
      rows: T,
      cols: T,
      rowLabels: toks,
      colLabels: toks,
      title: `mean over heads · batch ${b}`,
      shape: `att[${b}].mean(0) (${T}, ${T})`,
      scale: 'unit',
      cellSize: 30,
      exportName: `lesson3-att-b${b}-mean`,
    });
    maps.push(mean);
    gridMaps.push(maps);
    gridBox.append(
      el('h3', { text: `Batch item ${b}: all ${heads} heads and their mean` }),
      el('div', { className: 'figure-grid' }, ...maps.map((m) => m.element)),
    );
  }

  // --- step view for one (batch, head)
  const bSel = el(
    'select',
    { id: 'l3-batch' },
    ...Array.from({ length: B }, (_, b) => el('option', { value: String(b), text: `batch ${b}` })),
  );
  const hSel = el(
    'select',
    { id: 'l3-head' },
    ...Array.from({ length: heads }, (_, i) =>
      el('option', { value: String(i), text: `head ${i}` }),
    ),
  );
  const stepControls = el(
    'div',
    { className: 'controls' },
    field('batch item', bSel),
    field('head', hSel),
  );
  let sb = 0,
    sh = 0;
  const idx = () => sb * heads + sh;
  const sqrtHs = Math.sqrt(hs);
  const masked = () => {
    const s = slice2d(r.tensors.scores.data, idx(), T, T);
    if (r.causal) {
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) s[i * T + j] = -Infinity;
    }
    return s;
  };
  const stepMaps = {
    qk: lazyHeatmap({
      data: slice2d(r.QK, idx(), T, T),
      rows: T,
      cols: T,
      rowLabels: toks,
      colLabels: toks,
      title: '① Q Kᵀ',
      shape: `(${T}, ${T})`,
      scale: 'diverging',
      cellSize: 30,
      legendLabel: 'q · k',
      exportName: 'lesson3-step-QK',
    }),
    scaled: lazyHeatmap({
      data: slice2d(r.tensors.scores.data, idx(), T, T),
      rows: T,
      cols: T,
      rowLabels: toks,
      colLabels: toks,
      title: `② ÷ √hs = ÷ ${sqrtHs}`,
      shape: `(${T}, ${T})`,
      scale: 'diverging',
      cellSize: 30,
      legendLabel: 'score',
      exportName: 'lesson3-step-scaled',
    }),
    mask: lazyHeatmap({
      data: masked(),
      rows: T,
      cols: T,
      rowLabels: toks,
      colLabels: toks,
      title: '③ mask',
      shape: `(${T}, ${T})`,
      scale: 'diverging',
      cellSize: 30,
      legendLabel: 'score',
      exportName: 'lesson3-step-masked',
    }),
    att: lazyHeatmap({
      data: slice2d(r.att, idx(), T, T),
      rows: T,
      cols: T,
      rowLabels: toks,
      colLabels: toks,
      title: '④ softmax (rows)',
      shape: `(${T}, ${T})`,
      scale: 'unit',
      cellSize: 30,
      exportName: 'lesson3-step-softmax',
    }),
    out: lazyHeatmap({
      data: slice2d(r.tensors.headout.data, idx(), T, hs),
      rows: T,
      cols: hs,
      rowLabels: toks,
      colAxis: 'value feature (column)',
      rowAxis: 'query (row)',
      title: '⑤ att @ V → head output',
      shape: `(${T}, ${hs})`,
      scale: 'diverging',
      numbers: false,
      cellSize: 16,
      legendLabel: 'head output',
      exportName: 'lesson3-step-headout',
    }),
  };
  const rowSumSlot = el('div');

  // --- block-diagonal vs full Wo
  const rowLabelsBT = [];
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) rowLabelsBT.push(`b${b} t${t}`);
  const colLabelsC = Array.from({ length: C }, (_, c) => `h${Math.floor(c / hs)}:${c}`);
  const dm = () => Math.max(...Array.from(r.fullDeltaY, Math.abs));
  const bdMap = lazyHeatmap({
    data: r.bdDeltaY,
    rows: B * T,
    cols: C,
    rowLabels: rowLabelsBT,
    colLabels: colLabelsC,
    rowAxis: 'batch · token (row)',
    colAxis: 'output column of Y',
    title: 'ΔY with block-diagonal Wo',
    shape: `(${B}·${T}, ${C})`,
    scale: 'diverging',
    maxAbs: dm(),
    numbers: false,
    cellSize: 12,
    legendLabel: 'ΔY',
    exportName: 'lesson3-deltaY-blockdiag',
    caption: "only columns 0…15 (head 0's block) change",
  });
  const fullMap = lazyHeatmap({
    data: r.fullDeltaY,
    rows: B * T,
    cols: C,
    rowLabels: rowLabelsBT,
    colLabels: colLabelsC,
    rowAxis: 'batch · token (row)',
    colAxis: 'output column of Y',
    title: 'ΔY with the full Wo',
    shape: `(${B}·${T}, ${C})`,
    scale: 'diverging',
    maxAbs: dm(),
    numbers: false,
    cellSize: 12,
    legendLabel: 'ΔY',
    exportName: 'lesson3-deltaY-full',
    caption: 'every block changes',
  });
  const blockSlot = el('div');

  const figs = figuresList();
  const script = numpyBlock(() => lesson3Script({ causal }), { what: 'lesson 3' });

  function fillSteps() {
    const i = idx();
    stepMaps.qk.update(slice2d(r.QK, i, T, T), { title: '① Q Kᵀ' });
    stepMaps.scaled.update(slice2d(r.tensors.scores.data, i, T, T));
    stepMaps.mask.update(masked(), {
      title: r.causal ? '③ causal mask: −∞ above the diagonal' : '③ mask (off: nothing masked)',
    });
    stepMaps.att.update(slice2d(r.att, i, T, T));
    stepMaps.out.update(slice2d(r.tensors.headout.data, i, T, hs));
    const sums = Array.from(r.rowSums.subarray(i * T, (i + 1) * T));
    rowSumSlot.replaceChildren(
      table({
        headers: ['query (row)', 'sum of the row of ④', '|sum − 1|'],
        rows: sums.map((s, t) => [toks[t], num(s, 17), num(Math.abs(s - 1), 3)]),
        caption: `Row sums of softmax, batch ${sb}, head ${sh}`,
        numeric: [1, 2],
      }),
    );
  }

  function fill() {
    shapesSlot.replaceChildren(
      shapeTable(r.stages, {
        caption: `Shapes at every stage (seed 42, B = ${B}, T = ${T}, C = ${C}, h = ${heads}, hs = ${hs})`,
      }),
    );
    for (let b = 0; b < B; b++) {
      for (let i = 0; i < heads; i++) gridMaps[b][i].update(slice2d(r.att, b * heads + i, T, T));
      gridMaps[b][heads].update(meanOverHeads(r.att, b, heads, T));
    }
    fillSteps();
    bdMap.update(r.bdDeltaY, { maxAbs: dm() });
    fullMap.update(r.fullDeltaY, { maxAbs: dm() });
    blockSlot.replaceChildren(
      table({
        headers: [
          'column block of Y',
          'columns',
          'block-diagonal Wo: max |ΔY|',
          'full Wo: max |ΔY|',
        ],
        rows: r.blockDiagDelta.map((v, j) => [
          `block ${j} (head ${j})`,
          `${j * hs}…${(j + 1) * hs - 1}`,
          num(v),
          num(r.fullDelta[j]),
        ]),
        caption: "Add 1.0 to every entry of head 0's output (headout[:, 0]) and recompute Y",
        numeric: [2, 3],
      }),
    );
    figs.set([
      {
        key: 'rowSumMaxErr',
        label: `max |row sum − 1| over all ${B * heads * T} rows`,
        value: r.rowSumMaxErr,
        note: 'float64 rounding: the last bits depend on the summation order',
      },
      {
        key: 'blockDiagDelta',
        label: 'block-diagonal Wo: max |ΔY| per block',
        value: numList(r.blockDiagDelta),
      },
      { key: 'fullDelta', label: 'full Wo: max |ΔY| per block', value: numList(r.fullDelta) },
      { key: 'causal', label: 'causal mask', value: r.causal ? 'on' : 'off' },
    ]);
    script.refresh();
  }

  causalBox.addEventListener('change', () => {
    causal = causalBox.checked;
    r = lesson3(mha, { causal, data });
    fill();
  });
  bSel.addEventListener('change', () => {
    sb = Number(bSel.value);
    fillSteps();
  });
  hSel.addEventListener('change', () => {
    sh = Number(hSel.value);
    fillSteps();
  });

  fill();
  body.append(
    controls,
    shapesSlot,
    gridBox,
    el('h3', { text: 'One head, step by step' }),
    el('p', {
      className: 'formula',
      text: 'att = softmax(mask(Q Kᵀ / √hs)),   head output = att @ V',
    }),
    stepControls,
    el(
      'div',
      { className: 'figure-grid' },
      stepMaps.qk.element,
      stepMaps.scaled.element,
      stepMaps.mask.element,
      stepMaps.att.element,
    ),
    figureRow(stepMaps.out.element, rowSumSlot),
    el('h3', { text: 'Block-diagonal vs full Wo' }),
    el('p', {
      className: 'note',
      text: 'Y = concat @ Wo. With Wo block-diagonal (the off-diagonal 16 × 16 blocks set to 0), output block j reads only head j; with the full Wo each output column reads all heads.',
    }),
    blockSlot,
    el('div', { className: 'figure-grid cols-1' }, bdMap.element, fullMap.element),
    figs.element,
    script.element,
  );

  return {
    figures: () => ({
      shapes: Object.fromEntries(Object.entries(r.shapes).map(([k, v]) => [k, [...v]])),
      att: Array.from(r.att),
      rowSumMaxErr: r.rowSumMaxErr,
      blockDiagDelta: [...r.blockDiagDelta],
      fullDelta: [...r.fullDelta],
      causal: r.causal,
    }),
  };
}
