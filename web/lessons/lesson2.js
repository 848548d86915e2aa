// lesson2.js - Splitting into heads: (1, 6, 64) -> (1, 6, 4, 16) -> (1, 4, 6, 16), and the proofs.

import { shapeTable } from '../components/tables.js';
import { lesson2 } from '../model.js';
import { lesson2Script } from './numpy.js';
import { el, figuresList, numpyBlock, numList, lazyHeatmap } from './common.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
// Okabe-Ito colours (colour-blind safe), with different lightness so greyscale still separates
// them; every block is also labelled h0 ... h3, so colour is never the only cue.
export const HEAD_COLORS = [
  '#E69F00',
  '#56B4E9',
  '#009E73',
  '#CC79A7',
  '#F0E442',
  '#0072B2',
  '#D55E00',
  '#999999',
];

function svg(name, attrs = {}, text) {
  const e = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The shape diagram: rows of q cut into 4 head blocks, then regrouped by head. */
function shapeDiagram({ T, C, heads, hs }) {
  const cw = 3,
    rh = 9; // px per feature column, px per token row
  const H = 172;
  const root = svg('svg', { role: 'img', class: 'shape-diagram' });
  root.setAttribute(
    'aria-label',
    `Shape diagram: q of shape (1, ${T}, ${C}) is cut into ${heads} blocks of ${hs} columns per token (reshape to (1, ${T}, ${heads}, ${hs})), then regrouped so that each head holds a (${T}, ${hs}) matrix (transpose to (1, ${heads}, ${T}, ${hs})).`,
  );
  const top = 46;
  const label = (x, y, text, opts = {}) =>
    root.append(
      svg(
        'text',
        {
          x,
          y,
          'font-size': opts.size ?? 12,
          'text-anchor': opts.anchor ?? 'start',
          fill: opts.fill ?? '#1f2937',
          'font-weight': opts.weight ?? 400,
        },
        text,
      ),
    );
  const block = (x, y, w, h, i) => {
    root.append(
      svg('rect', {
        x,
        y,
        width: w,
        height: h,
        fill: HEAD_COLORS[i % HEAD_COLORS.length],
        stroke: '#fff',
        'stroke-width': 0.6,
      }),
    );
  };
  // panel 1: q (1, T, C)
  const x0 = 34;
  label(x0, 16, 'q = x @ Wq', { weight: 650 });
  label(x0, 32, `(1, ${T}, ${C})`, { size: 11, fill: '#4b5563' });
  for (let t = 0; t < T; t++) {
    label(x0 - 6, top + t * rh + rh - 1.5, `t${t}`, { size: 8, anchor: 'end', fill: '#4b5563' });
    for (let i = 0; i < heads; i++) block(x0 + i * hs * cw, top + t * rh, hs * cw, rh, i);
  }
  for (let i = 0; i < heads; i++) {
    label(x0 + (i + 0.5) * hs * cw, top + T * rh + 12, `h${i}`, { size: 10, anchor: 'middle' });
  }
  label(x0, top + T * rh + 28, `${C} columns = ${heads} heads × ${hs}`, {
    size: 10,
    fill: '#4b5563',
  });

  const arrow = (xa, xb, y, text1, text2) => {
    root.append(
      svg('line', { x1: xa, y1: y, x2: xb - 6, y2: y, stroke: '#374151', 'stroke-width': 1.5 }),
    );
    root.append(
      svg('path', { d: `M${xb - 8},${y - 4} L${xb},${y} L${xb - 8},${y + 4} Z`, fill: '#374151' }),
    );
    label((xa + xb) / 2, y - 8, text1, { size: 10, anchor: 'middle', weight: 600 });
    label((xa + xb) / 2, y + 14, text2, { size: 9, anchor: 'middle', fill: '#4b5563' });
  };
  const p1end = x0 + C * cw;
  // panel 2: (1, T, h, hs)
  const gap = 6;
  const x2 = p1end + 120;
  arrow(
    p1end + 8,
    x2 - 8,
    top + (T * rh) / 2,
    `.reshape(1, ${T}, ${heads}, ${hs})`,
    'cut each row',
  );
  label(x2, 16, 'q4', { weight: 650 });
  label(x2, 32, `(1, ${T}, ${heads}, ${hs})`, { size: 11, fill: '#4b5563' });
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < heads; i++) block(x2 + i * (hs * cw + gap), top + t * rh, hs * cw, rh, i);
  }
  for (let i = 0; i < heads; i++) {
    label(x2 + i * (hs * cw + gap) + (hs * cw) / 2, top + T * rh + 12, `h${i}`, {
      size: 10,
      anchor: 'middle',
    });
  }
  label(x2, top + T * rh + 28, 'same numbers, same order', { size: 10, fill: '#4b5563' });
  const p2end = x2 + heads * (hs * cw + gap) - gap;
  // panel 3: (1, h, T, hs), heads stacked as tiles
  const x3 = p2end + 130;
  arrow(p2end + 8, x3 - 8, top + (T * rh) / 2, '.transpose(0, 2, 1, 3)', 'group by head');
  label(x3, 16, 'heads', { weight: 650 });
  label(x3, 32, `(1, ${heads}, ${T}, ${hs})`, { size: 11, fill: '#4b5563' });
  const cols = Math.min(2, heads);
  const tileW = hs * cw,
    tileH = T * rh * 0.62;
  for (let i = 0; i < heads; i++) {
    const cx = x3 + (i % cols) * (tileW + 26),
      cy = top + Math.floor(i / cols) * (tileH + 22);
    for (let t = 0; t < T; t++) block(cx, cy + (t * tileH) / T, tileW, tileH / T, i);
    label(cx + tileW + 3, cy + tileH / 2 + 3, `h${i}`, { size: 10 });
    label(cx, cy + tileH + 10, `(${T}, ${hs})`, { size: 8, fill: '#4b5563' });
  }
  const W = Math.ceil(x3 + cols * (tileW + 26) + 10);
  root.setAttribute('viewBox', `0 0 ${W} ${H}`);
  root.setAttribute('width', String(W));
  root.setAttribute('height', String(H));
  root.style.maxWidth = '100%';
  root.style.height = 'auto';
  return root;
}

export function renderLesson2({ mha, body }) {
  const r = lesson2(mha);
  const tokens = Array.from({ length: r.T }, (_, t) => `t${t}`);
  const featureLabels = Array.from({ length: r.C }, (_, c) => String(c));

  const stages = shapeTable(
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

  const diagram = el(
    'figure',
    { className: 'shape-diagram-figure', tabIndex: 0 },
    shapeDiagram(r),
    el('figcaption', {
      className: 'note',
      text: "Each colour is one head's 16 columns. Reshape only cuts every row into 4 pieces; transpose regroups the pieces so each head gets its own 6 × 16 matrix. No number changes.",
    }),
  );

  const qmap = lazyHeatmap({
    data: r.q,
    rows: r.T,
    cols: r.C,
    rowLabels: tokens,
    colLabels: featureLabels,
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
  const m = Math.max(...Array.from(r.q, Math.abs));
  const headMaps = [];
  for (let i = 0; i < r.heads; i++) {
    headMaps.push(
      lazyHeatmap({
        data: r.Qheads.subarray(i * r.T * r.hs, (i + 1) * r.T * r.hs),
        rows: r.T,
        cols: r.hs,
        rowLabels: tokens,
        colLabels: Array.from({ length: r.hs }, (_, d) => String(i * r.hs + d)),
        rowAxis: 'token (row)',
        colAxis: 'feature (column)',
        title: `head ${i}: heads[0, ${i}]`,
        shape: `(${r.T}, ${r.hs})`,
        caption: `= columns ${i * r.hs}…${(i + 1) * r.hs - 1} of q`,
        scale: 'diverging',
        maxAbs: m,
        numbers: false,
        exportName: `lesson2-head-${i}`,
        legendLabel: 'q',
        cellSize: 14,
      }),
    );
  }

  const figs = figuresList();
  figs.set([
    {
      key: 'shapeX',
      label: 'x.shape',
      value: el('span', { className: 'shape', text: '(1, 6, 64)' }),
    },
    {
      key: 'shapeQ4',
      label: 'after reshape',
      value: el('span', { className: 'shape', text: '(1, 6, 4, 16)' }),
    },
    {
      key: 'shapeHeads',
      label: 'after transpose',
      value: el('span', { className: 'shape', text: '(1, 4, 6, 16)' }),
    },
    {
      key: 'headMaxDiff',
      label: 'max |head_i − x @ Wq[:, 16i:16(i+1)]|',
      value: r.headMaxDiff,
      note: 'over all heads i',
    },
    { key: 'perHead', label: 'the same, per head', value: numList(r.perHead) },
    { key: 'roundTrip', label: 'max |merge(split(q)) − q|', value: r.roundTrip },
  ]);
  const script = numpyBlock(() => lesson2Script(), { what: 'lesson 2' });

  body.append(
    diagram,
    stages,
    qmap.element,
    el('div', { className: 'figure-grid cols-2' }, ...headMaps.map((h) => h.element)),
    figs.element,
    script.element,
  );

  return {
    figures: () => ({
      shapes: { x: [...r.shapes.x], q4: [...r.shapes.q4], heads: [...r.shapes.heads] },
      headMaxDiff: r.headMaxDiff,
      roundTrip: r.roundTrip,
    }),
  };
}
