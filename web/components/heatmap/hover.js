// hover.js - the pointer: which cell, row label or column label is under it (by coordinates: one
// set of listeners on the figure, not one per cell), hover and click.

import { COS45 } from './layout.js';
import { setHover, show } from './cursor.js';

/** The part of the footer and legend where the pointer shows nothing. */
const OUTSIDE_PLOT = '.heatmap-export, .heatmap-side, .heatmap-footer';

/**
 * What is under the client point (x, y): { r, c } a cell, { r, c: -1 } a row label, { r: -1, c }
 * a column label, or null.
 */
function hitTest(state, clientX, clientY) {
  const { svg, L, s } = state;
  if (!svg) return null;
  const rect = svg.getBoundingClientRect();
  if (!rect.width) return null;
  const k = L.W / rect.width;
  const x = (clientX - rect.left) * k;
  const y = (clientY - rect.top) * k;
  const { mx, my, mw, mh, cell, cellH } = L;
  const inRows = y >= my && y < my + mh;
  if (inRows && x >= mx && x < mx + mw) {
    return { r: Math.floor((y - my) / cellH), c: Math.floor((x - mx) / cell) };
  }
  if (inRows && x < mx && x >= L.pad) return { r: Math.floor((y - my) / cellH), c: -1 };
  if (y < my && y > L.titleY + 4) {
    // the column labels rise at 45° from (their cell's centre, L.colLabelY)
    const rise = L.colLabelY - y;
    const c = Math.floor((x - rise - mx + L.colFont * 0.25) / cell);
    if (c >= 0 && c < s.cols && rise <= (L.colW[c] ?? 0) * COS45 + L.colFont) return { r: -1, c };
  }
  return null;
}

/** Hover follows the pointer; a click on a cell makes it the active cell. */
export function listenPointer(state) {
  const { figure } = state.dom;
  figure.addEventListener('pointermove', (e) => {
    if (e.target.closest?.(OUTSIDE_PLOT)) setHover(state, null);
    else setHover(state, hitTest(state, e.clientX, e.clientY));
  });
  figure.addEventListener('pointerleave', () => setHover(state, null));
  figure.addEventListener('click', (e) => {
    if (e.target.closest?.('button[data-export]')) return;
    const h = hitTest(state, e.clientX, e.clientY);
    if (h && h.r >= 0 && h.c >= 0) {
      state.active = { r: h.r, c: h.c };
      show(state);
    }
  });
}
