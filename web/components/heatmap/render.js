// render.js - (re)draw a heatmap from its state: the <svg> is rebuilt when the structure changes
// (size, labels, cell size, scale ...), else only the cells are repainted.

import { svgEl } from '../dom.js';
import { FONT_STACK } from '../export.js';
import { formatTick } from '../scales.js';
import { axisItems } from './axes.js';
import { colorizer, drawCells, hatchDefs, paintCells } from './cells.js';
import { clampCursor, show } from './cursor.js';
import { updateCaption } from './frame.js';
import { createOverlay, highlightItems } from './highlight.js';
import { computeLayout, fitted } from './layout.js';
import { updateSide } from './legend.js';
import {
  groupItems,
  groupsLabel,
  marksLabel,
  nanDefs,
  ringItems,
  updateMarksKey,
} from './marks.js';
import { drawItemsDOM } from './primitives.js';

/** The <svg>'s accessible name: size, axes and the range of the finite values. */
function svgLabel(s) {
  let lo = Infinity;
  let hi = -Infinity;
  const n = s.rows * s.cols;
  for (let i = 0; i < n; i++) {
    const v = s.data[i];
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  const range = lo <= hi ? `, values from ${formatTick(lo)} to ${formatTick(hi)}` : '';
  const marks = `${groupsLabel(s)}${marksLabel(s)}`; // '' unless colGroups / markNonFinite
  return `Heatmap of ${s.rows} rows (${s.rowAxis}) by ${s.cols} columns (${s.colAxis})${range}${marks}`;
}

/**
 * Size the plot box: it asks for the preferred size (so the figure's width never depends on how
 * much the cells were shrunk) and shrinks with its container; cells are then fitted to it.
 */
function sizePlotBox(state) {
  const { s, L, measure } = state;
  const { plot, sizer } = state.dom;
  const preferred = s.cell === s.cellPref ? L : computeLayout({ ...s, cell: s.cellPref }, measure);
  plot.style.width = `${preferred.W}px`;
  plot.style.maxWidth = '100%';
  sizer.style.width = `${preferred.W}px`;
  sizer.style.maxWidth = '100%';
}

/** A new <svg>: hatch pattern, axes, cells, outlined rows, hover overlay; then painted. */
function buildSVG(state) {
  const { s, dom } = state;
  state.L = computeLayout(s, state.measure);
  state.col = colorizer(s);
  const { L } = state;
  // the numbers' font size, looked up now (a new size asks the browser's process for the font,
  // a few ms): in this task rather than in the layout of the frame that draws the figure
  if (L.numFont) state.measure('0', L.numFont);
  sizePlotBox(state);
  const svg = svgEl('svg', {
    class: 'heatmap-svg',
    viewBox: `0 0 ${L.W} ${L.H}`,
    width: L.W,
    height: L.H,
    role: 'img',
    'font-family': FONT_STACK,
  });
  svg.setAttribute('aria-label', svgLabel(s));
  hatchDefs(svg);
  nanDefs(svg, s);
  state.labels = drawItemsDOM(axisItems(s, L), svg);
  state.activeLabels = [];
  const old = state.svg;
  state.svg = svg;
  drawCells(state);
  dom.figure.dataset.renderer = state.canvas ? 'canvas' : 'svg';
  drawItemsDOM(groupItems(s, L), svg);
  drawItemsDOM(highlightItems(s, L), svg);
  drawItemsDOM(ringItems(s, L), svg);
  state.overlay = createOverlay();
  svg.append(state.overlay.g);
  if (old) old.replaceWith(svg);
  else dom.plot.append(svg, dom.tooltip.element);
  paintCells(state);
}

/** What decides the <svg>'s elements: a change rebuilds it. */
function structure(s) {
  return JSON.stringify([
    s.rows,
    s.cols,
    s.cell,
    s.numbersOn,
    s.rowLabels,
    s.colLabels,
    s.rowAxis,
    s.colAxis,
    s.highlightRows,
    s.scale,
    s.digits,
    s.colGroups ?? null,
    s.markNonFinite ?? null,
    s.markCells ?? null,
    s.minRowHeight ?? null,
  ]);
}

/** Repaint for new data in the same structure (rebuild if the numbers' font size changes). */
function repaint(state) {
  state.col = colorizer(state.s);
  // the width of the numbers may change (e.g. a minus sign appears)
  if (state.numEls.length && computeLayout(state.s, state.measure).numFont !== state.L.numFont) {
    buildSVG(state);
  } else {
    paintCells(state);
  }
  state.svg.setAttribute('aria-label', svgLabel(state.s));
}

/** Draw the state: fit to the width, caption, plot (rebuilt if `full` or needed), side, cursor. */
export function render(state, full) {
  state.s = fitted(state.s, state.avail, state.measure);
  updateCaption(state);
  const key = structure(state.s);
  if (full || key !== state.structureKey || !state.svg) {
    buildSVG(state);
    state.structureKey = key;
  } else {
    repaint(state);
  }
  updateSide(state);
  updateMarksKey(state);
  clampCursor(state);
  show(state);
}

/**
 * Fit the cells to the width of the plot box while it changes (one observer per heatmap); the
 * first width it measures draws the plot (see prepare). Returns whether it observes (a browser
 * without ResizeObserver: false).
 */
export function observeWidth(state) {
  if (typeof ResizeObserver !== 'function') return false;
  const ro = new ResizeObserver((entries) => {
    const w = entries[entries.length - 1].contentRect.width;
    if (!(w > 0)) return;
    if (!state.svg) {
      state.avail = w;
      render(state, true);
      return;
    }
    if (Math.abs(w - state.avail) < 0.5) return;
    state.avail = w;
    const f = fitted(state.s, state.avail, state.measure);
    if (f.cell !== state.s.cell || f.numbersOn !== state.s.numbersOn) render(state, false);
  });
  ro.observe(state.dom.sizer);
  return true;
}

/**
 * A heatmap whose plot is not drawn yet: its caption, legend and key, and its plot box at the
 * preferred width (shrinking with its container), so that the first width measured
 * (observeWidth) is the one the plot is drawn at, once (drawn at the preferred size first, most
 * maps were drawn again, fitted, a moment later).
 */
export function prepare(state) {
  state.s = fitted(state.s, Infinity, state.measure);
  updateCaption(state);
  state.L = computeLayout(state.s, state.measure);
  state.col = colorizer(state.s);
  sizePlotBox(state);
  updateSide(state);
  updateMarksKey(state);
}
