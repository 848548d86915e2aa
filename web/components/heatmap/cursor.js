// cursor.js - the heatmap's cursor model and its display. Three inputs, in state:
//   hover    { r, c } under the pointer (r or c = -1: a whole column / row), or null
//   active   { r, c, pinned? } of the keyboard, a click, or highlight() (pinned: shown unfocused)
//   focused  the figure has the keyboard focus
// The current cell is the hovered one, else the active one while focused or pinned. show() draws
// it: overlay and labels (highlight.js), readout, tooltip and the legend's marker.

import { drawHighlight } from './highlight.js';
import { IDLE_TEXT, readoutText } from './readout.js';
import { hideTooltip, showTooltip } from './tooltip.js';

/** The cell, row or column to show, or null. */
function current(state) {
  if (state.hover) return state.hover;
  const { active } = state;
  if (active && (state.focused || active.pinned)) return active;
  return null;
}

/** Draw the current cell (or nothing) everywhere it shows. */
export function show(state) {
  if (!state.overlay) return;
  const cur = current(state);
  const { readout } = state.dom;
  drawHighlight(state, cur);
  readout.textContent = cur ? readoutText(state.s, cur) : IDLE_TEXT;
  readout.classList.toggle('is-active', !!cur);
  if (!cur || cur.r < 0 || cur.c < 0) {
    state.legend?.mark(null);
    hideTooltip(state);
    return;
  }
  const v = state.s.data[cur.r * state.s.cols + cur.c];
  state.legend?.mark(Number.isFinite(v) ? v : null);
  showTooltip(state, cur.r, cur.c, v);
}

/** A new hover position (null: none); redraws only when it changed. */
export function setHover(state, h) {
  const old = state.hover;
  if (h === old || (h && old && h.r === old.r && h.c === old.c)) return;
  state.hover = h;
  show(state);
}

/**
 * The linked highlight (highlight(row, col) of the component): cell (row, col); a row only
 * (col null or -1): the row; a column only: the column; neither: clear. Stays while unfocused.
 */
export function highlight(state, row, column) {
  const { s } = state;
  const r = Number.isInteger(row) && row >= 0 && row < s.rows ? row : -1;
  const c = Number.isInteger(column) && column >= 0 && column < s.cols ? column : -1;
  state.active = r < 0 && c < 0 ? null : { r, c, pinned: true };
  show(state);
}

/** Forget hover and active positions that fall outside a new size. */
export function clampCursor(state) {
  const { s, hover, active } = state;
  if (hover && (hover.r >= s.rows || hover.c >= s.cols)) state.hover = null;
  if (active && (active.r >= s.rows || active.c >= s.cols)) state.active = null;
}
