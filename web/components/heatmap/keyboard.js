// keyboard.js - the keyboard: the focused figure moves its active cell with the arrow keys (Home /
// End: first / last column, with Ctrl also first / last row; Page Up / Page Down: first / last
// row; Escape: clear). The plot box inside is a region of its own in the tab order (for
// scrolling a plot wider than the box with the keys); a click there still focuses the figure.

import { show } from './cursor.js';

/** Where each key moves the active cell p = { r, c } (unclamped). */
const MOVES = new Map([
  ['ArrowUp', (p) => ({ r: p.r - 1, c: p.c })],
  ['ArrowDown', (p) => ({ r: p.r + 1, c: p.c })],
  ['ArrowLeft', (p) => ({ r: p.r, c: p.c - 1 })],
  ['ArrowRight', (p) => ({ r: p.r, c: p.c + 1 })],
  ['Home', (p, s, ctrl) => ({ r: ctrl ? 0 : p.r, c: 0 })],
  ['End', (p, s, ctrl) => ({ r: ctrl ? s.rows - 1 : p.r, c: s.cols - 1 })],
  ['PageUp', (p) => ({ r: 0, c: p.c })],
  ['PageDown', (p, s) => ({ r: s.rows - 1, c: p.c })],
]);

const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));

function onKey(state, e) {
  const { s } = state;
  if (e.key === 'Escape') {
    if (!state.active) return;
    state.active = null;
    state.hover = null;
    show(state);
    e.preventDefault();
    return;
  }
  const move = MOVES.get(e.key);
  if (!move) return;
  e.preventDefault();
  // from the active cell (a row or column highlight starts from its first cell)
  const a = state.active ?? { r: 0, c: 0 };
  const to = move({ r: Math.max(0, a.r), c: Math.max(0, a.c) }, s, e.ctrlKey);
  state.active = { r: clamp(to.r, s.rows), c: clamp(to.c, s.cols) };
  state.hover = null; // the keyboard takes over from a stale mouse position
  show(state);
}

/** Focus shows the active cell (the first one at first); blur hides it; keys move it. */
export function listenKeyboard(state) {
  const { figure, plot } = state.dom;
  figure.addEventListener('focus', (e) => {
    if (e.target !== figure) return;
    state.focused = true;
    if (!state.active) state.active = { r: 0, c: 0 };
    show(state);
  });
  figure.addEventListener('blur', (e) => {
    if (e.target !== figure) return;
    state.focused = false;
    if (state.active) state.active.pinned = false;
    show(state);
  });
  figure.addEventListener('keydown', (e) => {
    if (e.target !== figure || e.altKey || e.metaKey) return;
    onKey(state, e);
  });
  // The plot box is focusable for scrolling with the keys; a click in it focuses the figure, as
  // it did before the box was focusable (the arrow keys then move the active cell).
  plot.addEventListener('focus', () => {
    if (!plot.matches(':focus-visible')) figure.focus({ preventScroll: true });
  });
}
