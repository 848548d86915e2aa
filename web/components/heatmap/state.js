// state.js - the one object a heatmap's parts share (no module-level state: each heatmap has its
// own). Fields, and the part that writes them:
//   s              the normalised options, fitted to the width (layout.js; render.js)
//   avail          the width of the plot box in px, Infinity until measured (render.js)
//   measure        the text measurer of the layout (measure.js)
//   dom            the figure's HTML elements by name (frame.js)
//   svg, L, col    the drawn <svg>, its layout, its colours; structureKey: what it was built for
//   cellEls, numEls, canvas, smallCanvas   the cells as <rect>s and <text>s, or a canvas (cells.js)
//   labels, activeLabels   axis label elements by key, those marked active (highlight.js)
//   overlay        the hover overlay { g, parts } (highlight.js); legend: the legend (legend.js)
//   marksKey       the key of the marked cells beside the legend { key, element } (marks.js)
//   hover, active, focused   the cursor model (cursor.js, hover.js, keyboard.js)

import { textMeasurer } from './measure.js';
import { normalise } from './layout.js';
import { createFrame } from './frame.js';

/** The state of a new heatmap for `options`, with its elements created but nothing drawn. */
export function createState(options) {
  return {
    s: normalise({ ...options }),
    avail: Infinity,
    measure: textMeasurer(),
    dom: createFrame(),
    svg: null,
    L: null,
    col: null,
    structureKey: '',
    cellEls: [],
    numEls: [],
    canvas: null,
    smallCanvas: null,
    labels: new Map(),
    activeLabels: [],
    overlay: null,
    legend: null,
    marksKey: null,
    hover: null,
    active: null,
    focused: false,
  };
}
