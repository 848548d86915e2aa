// lesson2.js - Splitting into heads: (1, 6, 64) -> (1, 6, 4, 16) -> (1, 4, 6, 16), and the proofs.

import { el } from '../components/dom.js';
import { shapeTable } from '../components/tables.js';
import { figuresList } from '../components/figures.js';
import { numpyBlock } from '../components/code.js';
import { numList } from '../components/numbers.js';
import { heatmap } from '../components/heatmap.js';
import { goDeeper } from '../components/go-deeper.js';
import { arraysButton, downloadsRow } from '../components/downloads.js';
import { HEAD_COLORS, shapeDiagram } from '../components/shape-diagram.js';
import { checkpointBox } from '../components/checkpoints.js';
import { courseBox } from '../components/course-box.js';
import { lesson2, lesson2Captions } from '../model/lesson2.js';
import { block2d } from '../model/arrays.js';
import { columnLabels, positionLabels } from '../model/labels.js';
import { lesson2Script } from '../model/numpy-scripts.js';
import { lesson2Arrays } from '../model/lesson-arrays.js';
import { fmt } from '../model/format.js';

// the notes of the table's stages, by caption name (lesson2Captions, kind 'stage')
function stageNotes(r) {
  return {
    x: `B = ${r.B} ${r.B === 1 ? 'sequence' : 'sequences'}, T = ${r.T} tokens, C = ${r.C} features`,
    q: 'one matmul for all heads',
    q4: `cut each token's ${r.C} numbers into ${r.heads} heads × ${r.hs}`,
    heads: `head axis before the token axis: one (${r.T}, ${r.hs}) matrix per head`,
    merged: 'merge: back to q, exactly',
  };
}

/** `name = code` of a caption, or the code alone where it is the name. */
const captionText = (c) => (c.name === c.code ? c.code : `${c.name} = ${c.code}`);

function stagesTable(r, caps) {
  const notes = stageNotes(r);
  const shapes = { x: r.shapes.x, q: r.shapes.x, q4: r.shapes.q4, heads: r.shapes.heads };
  const rows = caps
    .filter((c) => c.kind === 'stage')
    .map((c) => ({
      stage: captionText(c),
      shape: shapes[c.name] ?? r.shapes.x,
      note: notes[c.name],
    }));
  return shapeTable(rows, { caption: 'Split and merge: the shapes' });
}

function diagramFigure(r) {
  return el(
    'figure',
    { className: 'shape-diagram-figure', tabIndex: 0 },
    shapeDiagram(r),
    el('figcaption', {
      className: 'note',
      text: `Each colour is one head's ${r.hs} columns. Reshape only cuts every row into ${r.heads} pieces; transpose regroups the pieces so each head gets its own ${r.T} × ${r.hs} matrix. No number changes.`,
    }),
  );
}

function qHeatmap(r, tokens, caps) {
  return heatmap({
    data: r.q,
    rows: r.T,
    cols: r.C,
    rowLabels: tokens,
    colLabels: columnLabels(r.C),
    rowAxis: 'token (row)',
    colAxis: 'feature (column)',
    title: captionText(caps.find((c) => c.name === 'q')),
    shape: `(${r.B}, ${r.T}, ${r.C})`,
    ...(r.B > 1 ? { caption: 'batch item 0: q[0]' } : {}),
    scale: 'diverging',
    numbers: false,
    exportName: 'lesson2-q',
    legendLabel: 'q',
    cellSize: 9,
  });
}

/** heads[0, i] (T, hs) for each head i, on q's colour scale. */
function headHeatmaps(r, tokens, caps) {
  const code = (name) => caps.find((c) => c.name === name).code;
  return Array.from({ length: r.heads }, (_, i) =>
    heatmap({
      data: block2d(r.Qheads, i, r.T, r.hs),
      rows: r.T,
      cols: r.hs,
      rowLabels: tokens,
      colLabels: columnLabels(r.hs, i * r.hs),
      rowAxis: 'token (row)',
      colAxis: 'feature (column)',
      title: `head ${i}: ${code(`head ${i}`)}`,
      shape: `(${r.T}, ${r.hs})`,
      caption: `= ${code(`columns ${i}`)} (columns ${i * r.hs}…${(i + 1) * r.hs - 1} of q)`,
      scale: 'diverging',
      maxAbs: r.qMaxAbs,
      numbers: false,
      exportName: `lesson2-head-${i}`,
      legendLabel: 'q',
      cellSize: 14,
    }),
  );
}

function lesson2Figures(r, caps) {
  const shape = (text) => el('span', { className: 'shape', text });
  const label = (name) => captionText(caps.find((c) => c.name === name));
  const shapeText = (s) => `(${s.join(', ')})`;
  return [
    { key: 'shapeX', label: label('shapeX'), value: shape(shapeText(r.shapes.x)) },
    {
      key: 'shapeQ4',
      label: `after reshape: ${label('shapeQ4')}`,
      value: shape(shapeText(r.shapes.q4)),
    },
    {
      key: 'shapeHeads',
      label: `after transpose: ${label('shapeHeads')}`,
      value: shape(shapeText(r.shapes.heads)),
    },
    {
      key: 'headMaxDiff',
      label: label('head_max_diff'),
      value: r.headMaxDiff,
      note: 'over all heads i',
    },
    {
      key: 'perHead',
      label: `the same, per head: ${label('per_head')}`,
      value: numList(r.perHead),
    },
    { key: 'roundTrip', label: label('round_trip'), value: r.roundTrip },
  ];
}

/** How to check q itself: the checkpoint (course's arrays), or the four numbers of yours. */
function proofsCheck(r) {
  const four = 'heads[0, 1, 0, :4] and (x @ Wq[:, hs:2*hs])[0, 0, :4]';
  if (!r.custom) {
    return (
      `For that, run this lesson's Copy as NumPy script and compare it with the checkpoint ` +
      `below: ${four} are the same four numbers there. A course notebook draws its own numbers, ` +
      'so its four differ from these; in it, the two expressions must agree with each other.'
    );
  }
  const values = r.head1Projection.map((v) => fmt(v, 6)).join(', ');
  return `Here x and Wq are your notebook's: ${four} are ${values} from them.`;
}

/** What the two proof numbers show, and what they cannot: whether q itself is right. */
function proofsNote(r) {
  return el('p', {
    className: 'note proofs-note',
    text: `What the two proofs show: splitting only relabels numbers (head i is columns ${r.hs}·i to ${r.hs}·i+${r.hs - 1} of q, exactly what the small projection x @ Wq[:, ${r.hs}i:${r.hs}(i+1)] computes) and merging undoes it. What they cannot show: that q is right. Both sides of each comparison come from the same x and Wq, so both numbers are 0 with a wrong Wq too (transposed, scaled differently, drawn from another seed). ${proofsCheck(r)}`,
  });
}

/** Whether the shape diagram (drawn for B = 1, up to 12 tokens and 8 heads) fits these sizes. */
const diagramFits = (r) => r.B === 1 && r.T <= 12 && r.heads <= HEAD_COLORS.length;

/**
 * Lesson 2 into `body`: the course's x and Wq, or (custom: lesson2Part of a notebook's arrays) the
 * student's (no checkpoints, no .npz of the course's arrays).
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderLesson2({ mha, body, custom = null }) {
  const r = custom ? lesson2(mha, { arrays: custom }) : lesson2(mha);
  const caps = lesson2Captions(r); // every caption below, as NumPy that runs
  const tokens = positionLabels(r.T);
  const diagram = diagramFits(r) ? [diagramFigure(r)] : [];
  const stages = stagesTable(r, caps);
  const qmap = qHeatmap(r, tokens, caps);
  const headMaps = headHeatmaps(r, tokens, caps);
  const figs = figuresList();
  figs.set(lesson2Figures(r, caps));
  const script = numpyBlock(() => lesson2Script(), { what: 'lesson 2' });
  const checks = custom ? null : checkpointBox('lesson2', r, { what: 'lesson 2' });
  const course = courseBox('lesson2', { custom: !!custom });
  course.update(r);

  body.append(
    course.element,
    ...diagram,
    stages,
    qmap.element,
    el('div', { className: 'figure-grid cols-2' }, ...headMaps.map((h) => h.element)),
    figs.element,
    goDeeper('what the two proofs can and cannot show', proofsNote(r)),
    ...(checks ? [checks.element] : []),
    script.element,
    ...(custom ? [] : [downloadsRow(arraysButton(2, () => lesson2Arrays(r)).element)]),
  );

  return {
    figures: () => ({
      shapes: { x: [...r.shapes.x], q4: [...r.shapes.q4], heads: [...r.shapes.heads] },
      headMaxDiff: r.headMaxDiff,
      roundTrip: r.roundTrip,
      perHead: [...r.perHead],
      head1Projection: [...r.head1Projection],
    }),
    script: () => lesson2Script(),
  };
}
