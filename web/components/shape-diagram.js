// shape-diagram.js - lesson 2's diagram (SVG): the rows of q cut into head blocks by the reshape,
// then regrouped by head by the transpose. Every block is labelled h0 ... h3, so colour is never
// the only cue.

import { svgEl } from './dom.js';

// Okabe-Ito colours (colour-blind safe), with different lightness so greyscale still separates
// them.
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

const CW = 3; // px per feature column
const RH = 9; // px per token row
const TOP = 46; // y of the first row of blocks
const HEIGHT = 172;
const INK = '#1f2937';
const MUTED = '#4b5563';

/** Drawing helpers bound to one <svg> root. */
function painter(root) {
  const svg = (name, attrs, text) => {
    const e = svgEl(name, attrs);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const label = (x, y, text, opts = {}) =>
    root.append(
      svg(
        'text',
        {
          x,
          y,
          'font-size': opts.size ?? 12,
          'text-anchor': opts.anchor ?? 'start',
          fill: opts.fill ?? INK,
          'font-weight': opts.weight ?? 400,
        },
        text,
      ),
    );
  const block = (x, y, w, h, i) => {
    const fill = HEAD_COLORS[i % HEAD_COLORS.length];
    root.append(
      svg('rect', { x, y, width: w, height: h, fill, stroke: '#fff', 'stroke-width': 0.6 }),
    );
  };
  const arrow = (xa, xb, y, text1, text2) => {
    root.append(
      svg('line', { x1: xa, y1: y, x2: xb - 6, y2: y, stroke: '#374151', 'stroke-width': 1.5 }),
    );
    root.append(
      svg('path', { d: `M${xb - 8},${y - 4} L${xb},${y} L${xb - 8},${y + 4} Z`, fill: '#374151' }),
    );
    label((xa + xb) / 2, y - 8, text1, { size: 10, anchor: 'middle', weight: 600 });
    label((xa + xb) / 2, y + 14, text2, { size: 9, anchor: 'middle', fill: MUTED });
  };
  return { label, block, arrow };
}

/** Panel 1: q (1, T, C), each row cut into `heads` coloured blocks. Returns its right edge. */
function qPanel(p, x0, { T, C, heads, hs }) {
  p.label(x0, 16, 'q = x @ Wq', { weight: 650 });
  p.label(x0, 32, `(1, ${T}, ${C})`, { size: 11, fill: MUTED });
  for (let t = 0; t < T; t++) {
    p.label(x0 - 6, TOP + t * RH + RH - 1.5, `t${t}`, { size: 8, anchor: 'end', fill: MUTED });
    for (let i = 0; i < heads; i++) p.block(x0 + i * hs * CW, TOP + t * RH, hs * CW, RH, i);
  }
  for (let i = 0; i < heads; i++) {
    p.label(x0 + (i + 0.5) * hs * CW, TOP + T * RH + 12, `h${i}`, { size: 10, anchor: 'middle' });
  }
  p.label(x0, TOP + T * RH + 28, `${C} columns = ${heads} heads × ${hs}`, {
    size: 10,
    fill: MUTED,
  });
  return x0 + C * CW;
}

/** Panel 2: q4 (1, T, h, hs), the same blocks with gaps. Returns its right edge. */
function q4Panel(p, x2, { T, heads, hs }) {
  const gap = 6;
  p.label(x2, 16, 'q4', { weight: 650 });
  p.label(x2, 32, `(1, ${T}, ${heads}, ${hs})`, { size: 11, fill: MUTED });
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < heads; i++) {
      p.block(x2 + i * (hs * CW + gap), TOP + t * RH, hs * CW, RH, i);
    }
  }
  for (let i = 0; i < heads; i++) {
    p.label(x2 + i * (hs * CW + gap) + (hs * CW) / 2, TOP + T * RH + 12, `h${i}`, {
      size: 10,
      anchor: 'middle',
    });
  }
  p.label(x2, TOP + T * RH + 28, 'same numbers, same order', { size: 10, fill: MUTED });
  return x2 + heads * (hs * CW + gap) - gap;
}

/** Panel 3: heads (1, h, T, hs), one tile per head, two per row. Returns the diagram's width. */
function headsPanel(p, x3, { T, heads, hs }) {
  p.label(x3, 16, 'heads', { weight: 650 });
  p.label(x3, 32, `(1, ${heads}, ${T}, ${hs})`, { size: 11, fill: MUTED });
  const cols = Math.min(2, heads);
  const tileW = hs * CW,
    tileH = T * RH * 0.62;
  for (let i = 0; i < heads; i++) {
    const cx = x3 + (i % cols) * (tileW + 26),
      cy = TOP + Math.floor(i / cols) * (tileH + 22);
    for (let t = 0; t < T; t++) p.block(cx, cy + (t * tileH) / T, tileW, tileH / T, i);
    p.label(cx + tileW + 3, cy + tileH / 2 + 3, `h${i}`, { size: 10 });
    p.label(cx, cy + tileH + 10, `(${T}, ${hs})`, { size: 8, fill: MUTED });
  }
  return Math.ceil(x3 + cols * (tileW + 26) + 10);
}

/** The shape diagram for q of shape (1, T, C) and `heads` heads of hs columns. */
export function shapeDiagram({ T, C, heads, hs }) {
  const root = svgEl('svg', { role: 'img', class: 'shape-diagram' });
  root.setAttribute(
    'aria-label',
    `Shape diagram: q of shape (1, ${T}, ${C}) is cut into ${heads} blocks of ${hs} columns per token (reshape to (1, ${T}, ${heads}, ${hs})), then regrouped so that each head holds a (${T}, ${hs}) matrix (transpose to (1, ${heads}, ${T}, ${hs})).`,
  );
  const p = painter(root);
  const mid = TOP + (T * RH) / 2;
  const p1end = qPanel(p, 34, { T, C, heads, hs });
  const x2 = p1end + 120;
  p.arrow(p1end + 8, x2 - 8, mid, `.reshape(1, ${T}, ${heads}, ${hs})`, 'cut each row');
  const p2end = q4Panel(p, x2, { T, heads, hs });
  const x3 = p2end + 130;
  p.arrow(p2end + 8, x3 - 8, mid, '.transpose(0, 2, 1, 3)', 'group by head');
  const W = headsPanel(p, x3, { T, heads, hs });
  root.setAttribute('viewBox', `0 0 ${W} ${HEIGHT}`);
  root.setAttribute('width', String(W));
  root.setAttribute('height', String(HEIGHT));
  root.style.maxWidth = '100%';
  root.style.height = 'auto';
  return root;
}
