// heatmap.js - an accessible, fast heatmap of a row-major matrix (attention weights, scores,
// gradients).
//
//   const h = heatmap({ data, rows, cols, rowLabels, colLabels, title, shape, scale: 'unit' });
//   container.append(h.element);  h.update(newData);  h.highlight(row, col);
//
// Drawing: one SVG, one <rect class="cell"> per cell up to svgCellLimit (256) cells; above, the
// cells go on a <canvas> inside the SVG (labels, highlights stay SVG). Interaction: a single set
// of listeners on the <figure> (event delegation by coordinates, not one listener per cell).
// Text from data (token labels) is only ever set with textContent or escaped by escapeXML().
//
// The parts, in heatmap/: state (the object they share), layout, cells, axes, legend, highlight,
// cursor + hover + keyboard + readout + tooltip, export, frame (the HTML), render.

import { highlight } from './heatmap/cursor.js';
import { csvText, exportCanvas, exportSVGMarkup, listenExport } from './heatmap/export.js';
import { listenPointer } from './heatmap/hover.js';
import { listenKeyboard } from './heatmap/keyboard.js';
import { fitted, normalise } from './heatmap/layout.js';
import { observeWidth, prepare, render } from './heatmap/render.js';
import { createState } from './heatmap/state.js';

export { escapeXML } from './heatmap/primitives.js';

/**
 * The options of update(newData, opts) over the current ones: a new size drops the labels, the
 * shape text and the outlined rows that no longer fit; numbers and cellSize not given in opts
 * fall back to those first given (`options`), so a figure can grow back.
 */
function nextOptions(s, options, newData, opts) {
  const next = { ...s, ...opts };
  if (newData !== undefined && newData !== null) next.data = newData;
  const resized = next.rows !== s.rows || next.cols !== s.cols;
  if (opts.rows !== undefined || opts.cols !== undefined) {
    if (opts.rowLabels === undefined && next.rows !== s.rows) next.rowLabels = undefined;
    if (opts.colLabels === undefined && next.cols !== s.cols) next.colLabels = undefined;
    if (opts.highlightRows === undefined) {
      next.highlightRows = s.highlightRows.filter((r) => r < next.rows);
    }
    if (opts.shape === undefined && resized) next.shape = undefined;
  }
  if (opts.numbers === undefined) next.numbers = options.numbers ?? s.numbers;
  if (opts.cellSize === undefined && resized) next.cellSize = options.cellSize;
  return next;
}

/**
 * A heatmap figure. Options: data, rows, cols, rowLabels, colLabels, rowAxis, colAxis, title,
 * shape, scale ('unit' | 'diverging'), numbers ('auto' | true | false), digits, highlightRows,
 * exportName, cellSize; highlightLabel (text of the key for outlined rows), legendLabel, maxAbs
 * (fixed diverging range), min/max (range of a 'unit' scale, default 0..1), caption (an extra
 * sentence under the title), exportButtons (default true), svgCellLimit; minRowHeight (rows at
 * least this many px tall: cells may be taller than wide), colGroups (a line between blocks of
 * that many columns) and colGroupLabel (what a block is, for the accessible name),
 * markCells ([[row, col], …] ringed, black on white: e.g. each row's argmax) and markLabel (what
 * the rings mark, for the key and the accessible name),
 * markNonFinite (NaN cells crossed apart from the hatched ±∞ ones, with a key), blank (a 0/1
 * flag per cell: drawn empty) and blankText (why, for the key and readout): see heatmap/marks.js.
 * Returns { element, update(newData, opts?), highlight(row, col), exportSVG(), exportCanvas(),
 * csv() }.
 */
export function heatmap(options) {
  const state = createState(options);
  listenPointer(state);
  listenExport(state);
  listenKeyboard(state);
  // the plot drawn at the first width the browser measures; without ResizeObserver, at once
  if (observeWidth(state)) prepare(state);
  else render(state, true);
  const preferred = () => fitted(state.s, Infinity, state.measure);
  return {
    element: state.dom.figure,
    /** Re-render with new data (same or different size); opts may change any option. */
    update(newData, opts = {}) {
      state.s = normalise(nextOptions(state.s, options, newData, opts));
      render(state, false);
    },
    /** Highlight cell (row, col); a row only (col null/-1): the row; a column only; none: clear. */
    highlight: (row, column) => highlight(state, row, column),
    /** Standalone SVG markup of the figure (title, matrix, legend), as the SVG button saves it. */
    exportSVG: () => exportSVGMarkup(preferred(), state.measure),
    /** A canvas with the figure drawn at `scale` x (what the PNG button saves). */
    exportCanvas: (scale = 2) => exportCanvas(preferred(), state.measure, scale),
    /** The CSV text the CSV button saves. */
    csv: () => csvText(state.s),
  };
}
