// lesson2.js - Splitting into heads: (1, 6, 64) -> (1, 6, 4, 16) -> (1, 4, 6, 16), and the proofs.

import { el } from '../components/dom.js';
import { shapeTable } from '../components/tables.js';
import { figuresList } from '../components/figures.js';
import { numpyBlock } from '../components/code.js';
import { numList } from '../components/numbers.js';
import { lazyHeatmap } from '../components/lazy-figure.js';
import { arraysButton, downloadsRow } from '../components/downloads.js';
import { shapeDiagram } from '../components/shape-diagram.js';
import { checkpointBox } from '../components/checkpoints.js';
import { lesson2 } from '../model/lesson2.js';
import { block2d } from '../model/arrays.js';
import { columnLabels, positionLabels } from '../model/labels.js';
import { lesson2Script } from '../model/numpy-scripts.js';
import { lesson2Arrays } from '../model/lesson-arrays.js';

function stagesTable(r) {
  return shapeTable(
    [
      {
        stage: 'x',
        shape: r.shapes.x,
        note: `B = 1 sequence, T = ${r.T} tokens, C = ${r.C} features`,
      },
      { stage: 'q = x @ Wq', shape: r.shapes.x, note: 'one matmul for all heads' },
      {
        stage: `q.reshape(1, ${r.T}, ${r.heads}, ${r.hs})`,
        shape: r.shapes.q4,
        note: `cut each token's ${r.C} numbers into ${r.heads} heads × ${r.hs}`,
      },
      {
        stage: '.transpose(0, 2, 1, 3)',
        shape: r.shapes.heads,
        note: 'head axis before the token axis: one (6, 16) matrix per head',
      },
      {
        stage: 'merge: .transpose(0, 2, 1, 3).reshape(1, 6, 64)',
        shape: r.shapes.x,
        note: 'back to q, exactly',
      },
    ],
    { caption: 'Split and merge: the shapes' },
  );
}

function diagramFigure(r) {
  return el(
    'figure',
    { className: 'shape-diagram-figure', tabIndex: 0 },
    shapeDiagram(r),
    el('figcaption', {
      className: 'note',
      text: `Each colour is one head's 16 columns. Reshape only cuts every row into 4 pieces; transpose regroups the pieces so each head gets its own 6 × 16 matrix. No number changes.`,
    }),
  );
}

function qHeatmap(r, tokens) {
  return lazyHeatmap({
    data: r.q,
    rows: r.T,
    cols: r.C,
    rowLabels: tokens,
    colLabels: columnLabels(r.C),
    rowAxis: 'token (row)',
    colAxis: 'feature (column)',
    title: 'q = x @ Wq',
    shape: '(1, 6, 64)',
    scale: 'diverging',
    numbers: false,
    exportName: 'lesson2-q',
    legendLabel: 'q',
    cellSize: 9,
  });
}

/** heads[0, i] (T, hs) for each head i, on q's colour scale. */
function headHeatmaps(r, tokens) {
  return Array.from({ length: r.heads }, (_, i) =>
    lazyHeatmap({
      data: block2d(r.Qheads, i, r.T, r.hs),
      rows: r.T,
      cols: r.hs,
      rowLabels: tokens,
      colLabels: columnLabels(r.hs, i * r.hs),
      rowAxis: 'token (row)',
      colAxis: 'feature (column)',
      title: `head ${i}: heads[0, ${i}]`,
      shape: `(${r.T}, ${r.hs})`,
      caption: `= columns ${i * r.hs}…${(i + 1) * r.hs - 1} of q`,
      scale: 'diverging',
      maxAbs: r.qMaxAbs,
      numbers: false,
      exportName: `lesson2-head-${i}`,
      legendLabel: 'q',
      cellSize: 14,
    }),
  );
}

function lesson2Figures(r) {
  const shape = (text) => el('span', { className: 'shape', text });
  return [
    { key: 'shapeX', label: 'x.shape', value: shape('(1, 6, 64)') },
    { key: 'shapeQ4', label: 'after reshape', value: shape('(1, 6, 4, 16)') },
    { key: 'shapeHeads', label: 'after transpose', value: shape('(1, 4, 6, 16)') },
    {
      key: 'headMaxDiff',
      label: 'max |head_i − x @ Wq[:, 16i:16(i+1)]|',
      value: r.headMaxDiff,
      note: 'over all heads i',
    },
    { key: 'perHead', label: 'the same, per head', value: numList(r.perHead) },
    { key: 'roundTrip', label: 'max |merge(split(q)) − q|', value: r.roundTrip },
  ];
}

/** What the two proof numbers show, and what they cannot: whether q itself is right. */
function proofsNote(r) {
  return el('p', {
    className: 'note proofs-note',
    text: `What the two proofs show: splitting only relabels numbers (head i is columns ${r.hs}·i to ${r.hs}·i+${r.hs - 1} of q, exactly what the small projection x @ Wq[:, ${r.hs}i:${r.hs}(i+1)] computes) and merging undoes it. What they cannot show: that q is right. Both sides of each comparison come from the same x and Wq, so both numbers are 0 with a wrong Wq too (transposed, scaled differently, drawn from another seed). For that, compare the checkpoint below with your notebook: heads[0, 1, 0, :4] and (x @ Wq[:, hs:2*hs])[0, 0, :4] are the same four numbers, and yours must be these.`,
  });
}

export function renderLesson2({ mha, body }) {
  const r = lesson2(mha);
  const tokens = positionLabels(r.T);
  const stages = stagesTable(r);
  const diagram = diagramFigure(r);
  const qmap = qHeatmap(r, tokens);
  const headMaps = headHeatmaps(r, tokens);
  const figs = figuresList();
  figs.set(lesson2Figures(r));
  const script = numpyBlock(() => lesson2Script(), { what: 'lesson 2' });
  const checks = checkpointBox('lesson2', r, { what: 'lesson 2' });

  body.append(
    diagram,
    stages,
    qmap.element,
    el('div', { className: 'figure-grid cols-2' }, ...headMaps.map((h) => h.element)),
    figs.element,
    proofsNote(r),
    checks.element,
    script.element,
    downloadsRow(arraysButton(2, () => lesson2Arrays(r)).element),
  );

  return {
    figures: () => ({
      shapes: { x: [...r.shapes.x], q4: [...r.shapes.q4], heads: [...r.shapes.heads] },
      headMaxDiff: r.headMaxDiff,
      roundTrip: r.roundTrip,
    }),
    script: () => lesson2Script(),
  };
}
