// highlight.js - what the heatmap marks: the outlined rows (highlightRows, drawn with the plot),
// and the hover overlay for the current cell, row or column (state.cursor, see cursor.js): it
// dims the rest of the matrix, rings the cell / row / column and marks its axis labels.

import { svgEl } from '../dom.js';
import { r2 } from '../scales.js';
import { HIGHLIGHT_INK, INK, WHITE } from './theme.js';

/** Each outlined row as primitives: a white halo, a dashed outline, a ◀ marker on the right. */
export function highlightItems(s, L) {
  const items = [];
  for (const r of s.highlightRows) {
    const y = L.my + r * L.cellH;
    const box = { type: 'rect', x: L.mx - 1, y: y - 1, w: L.mw + 2, h: L.cellH + 2, fill: 'none' };
    items.push({ ...box, stroke: WHITE, sw: 4, cls: 'hl-row-halo' });
    items.push({ ...box, stroke: HIGHLIGHT_INK, sw: 2, dash: '5 3', cls: 'hl-row' });
    items.push({
      type: 'text',
      x: L.markerX,
      y: y + L.cellH / 2 + L.rowFont * 0.35,
      text: '◀',
      size: L.rowFont,
      fill: HIGHLIGHT_INK,
      cls: 'hl-marker',
    });
  }
  return items;
}

const ZERO = { x: 0, y: 0, width: 0, height: 0 };

/**
 * The hover overlay, hidden: four white rects that dim the complement of the current row and
 * column, a thin band along the row, a white halo and a dark ring. Returns { g, parts }.
 */
export function createOverlay() {
  const g = svgEl('g', { class: 'hover-overlay', 'pointer-events': 'none', visibility: 'hidden' });
  const dims = [];
  for (let i = 0; i < 4; i++) {
    const d = svgEl('rect', { fill: WHITE, 'fill-opacity': '0.55', ...ZERO });
    dims.push(d);
    g.append(d);
  }
  const band = svgEl('rect', {
    fill: 'none',
    stroke: INK,
    'stroke-width': 1,
    'stroke-opacity': 0.55,
    ...ZERO,
  });
  const halo = svgEl('rect', { fill: 'none', stroke: WHITE, 'stroke-width': 4.5, ...ZERO });
  const ring = svgEl('rect', { fill: 'none', stroke: HIGHLIGHT_INK, 'stroke-width': 2, ...ZERO });
  g.append(band, halo, ring);
  return { g, parts: { dims, band, halo, ring } };
}

function setRect(e, x, y, w, h) {
  e.setAttribute('x', r2(x));
  e.setAttribute('y', r2(y));
  e.setAttribute('width', r2(Math.max(0, w)));
  e.setAttribute('height', r2(Math.max(0, h)));
}

/** Mark the axis labels with these keys ('row-3', 'col-0') as active, unmark the others. */
function setLabelsActive(state, keys) {
  for (const e of state.activeLabels) e.classList.remove('is-active');
  state.activeLabels = [];
  for (const k of keys) {
    const e = state.labels.get(k);
    if (e) {
      e.classList.add('is-active');
      state.activeLabels.push(e);
    }
  }
}

/** Cell (r, c): dim the four corners outside its row and column, ring the cell. */
function markCell({ dims, band, halo, ring }, L, r, c) {
  const { mx, my, mw, mh, cell, cellH } = L;
  const y0 = my + r * cellH;
  const x0 = mx + c * cell;
  setRect(dims[0], mx, my, c * cell, r * cellH);
  setRect(dims[1], x0 + cell, my, mw - (c + 1) * cell, r * cellH);
  setRect(dims[2], mx, y0 + cellH, c * cell, mh - (r + 1) * cellH);
  setRect(dims[3], x0 + cell, y0 + cellH, mw - (c + 1) * cell, mh - (r + 1) * cellH);
  setRect(band, mx, y0, mw, cellH);
  setRect(halo, x0, y0, cell, cellH);
  setRect(ring, x0, y0, cell, cellH);
  band.setAttribute('visibility', 'visible');
  halo.setAttribute('visibility', 'visible');
  ring.setAttribute('visibility', 'visible');
}

/** Row r: dim above and below it, ring the row. */
function markRow({ dims, band, halo, ring }, L, r) {
  const { mx, my, mw, mh, cellH } = L;
  const y0 = my + r * cellH;
  setRect(dims[0], mx, my, mw, r * cellH);
  setRect(dims[1], mx, y0 + cellH, mw, mh - (r + 1) * cellH);
  setRect(dims[2], 0, 0, 0, 0);
  setRect(dims[3], 0, 0, 0, 0);
  setRect(ring, mx, y0, mw, cellH);
  setRect(halo, mx, y0, mw, cellH);
  band.setAttribute('visibility', 'hidden');
}

/** Column c: dim left and right of it, ring the column. */
function markColumn({ dims, band, halo, ring }, L, c) {
  const { mx, my, mw, mh, cell } = L;
  const x0 = mx + c * cell;
  setRect(dims[0], mx, my, c * cell, mh);
  setRect(dims[1], x0 + cell, my, mw - (c + 1) * cell, mh);
  setRect(dims[2], 0, 0, 0, 0);
  setRect(dims[3], 0, 0, 0, 0);
  setRect(ring, x0, my, cell, mh);
  setRect(halo, x0, my, cell, mh);
  band.setAttribute('visibility', 'hidden');
}

/**
 * Show the overlay for `cur` = { r, c } (r or c = -1: the whole column / row), or hide it (null).
 */
export function drawHighlight(state, cur) {
  const { overlay, svg, L } = state;
  if (!cur) {
    overlay.g.setAttribute('visibility', 'hidden');
    svg.classList.remove('is-hovering');
    setLabelsActive(state, []);
    return;
  }
  const { r, c } = cur;
  overlay.g.setAttribute('visibility', 'visible');
  svg.classList.add('is-hovering');
  if (r >= 0 && c >= 0) {
    markCell(overlay.parts, L, r, c);
    setLabelsActive(state, [`row-${r}`, `col-${c}`]);
  } else if (r >= 0) {
    markRow(overlay.parts, L, r);
    setLabelsActive(state, [`row-${r}`]);
  } else {
    markColumn(overlay.parts, L, c);
    setLabelsActive(state, [`col-${c}`]);
  }
}
