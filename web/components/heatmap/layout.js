// layout.js - the heatmap's options normalised, the cell size fitted to the width available, and
// the geometry of the plot (SVG user units = CSS px at natural size).
//
//   s = normalise(options)        rows, cols, data checked; labels as strings or null
//   s = fitted(s, avail, measure) s.cell, s.numbersOn for a plot box `avail` px wide
//   L = computeLayout(s, measure) { W, H, mx, my, mw, mh, cell, gap, rx, fonts, label steps ... }

import { formatFixed, r2 } from '../scales.js';

// Cells drawn as SVG <rect>s up to this many (every lesson figure); a canvas above (fast at 64x64).
const SVG_CELL_LIMIT = 256;
const AUTO_NUMBERS_LIMIT = 100;
const LABEL_MAX_CHARS = 14;
const PAD = 10;
const AXIS_FONT = 12;
export const COS45 = Math.SQRT1_2;

/** labels[i] as a string, or null where there is none (n entries). */
function labelsOf(labels, n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = labels && labels[i] !== undefined && labels[i] !== null ? String(labels[i]) : null;
  }
  return out;
}

function defaultCellSize(rows, cols) {
  const n = Math.max(rows, cols);
  if (n <= 6) return 48;
  if (n <= 10) return 42;
  if (n <= 16) return 30;
  if (n <= 24) return 22;
  if (n <= 32) return 18;
  return Math.max(3, Math.min(14, Math.floor(640 / n)));
}

/**
 * The height of a row (px) for cells `cell` px wide: the cell itself, or at least the
 * minRowHeight option (rows of a wide, short matrix stay readable; cells are then taller than
 * wide).
 */
export function rowHeight(s, cell) {
  return s.minRowHeight > 0 ? Math.max(cell, s.minRowHeight) : cell;
}

/** The options checked and completed with their defaults (throws on a bad size or data). */
export function normalise(o) {
  const { rows, cols, data } = o;
  if (!Number.isInteger(rows) || rows < 1 || !Number.isInteger(cols) || cols < 1) {
    throw new Error(`heatmap: rows and cols must be positive integers, got ${rows} x ${cols}`);
  }
  if (!data || typeof data.length !== 'number' || data.length < rows * cols) {
    throw new Error(
      `heatmap: data must hold rows*cols = ${rows * cols} numbers, got ${data ? data.length : data}`,
    );
  }
  return {
    ...o,
    rows,
    cols,
    data,
    scale: o.scale === 'diverging' ? 'diverging' : 'unit',
    rowLabels: labelsOf(o.rowLabels, rows),
    colLabels: labelsOf(o.colLabels, cols),
    rowAxis: o.rowAxis ?? 'query (row)',
    colAxis: o.colAxis ?? 'key (column)',
    digits: Number.isInteger(o.digits) ? o.digits : 2,
    highlightRows: Array.from(o.highlightRows ?? []).filter(
      (r) => Number.isInteger(r) && r >= 0 && r < rows,
    ),
    cellPref: o.cellSize > 0 ? o.cellSize : defaultCellSize(rows, cols),
    fixedCell: o.cellSize > 0,
    svgCellLimit: Number.isFinite(o.svgCellLimit) ? o.svgCellLimit : SVG_CELL_LIMIT,
  };
}

/** Numbers in the cells: asked for, or 'auto' (the default) for at most 100 cells. */
function autoNumbers(s) {
  return s.numbers !== false && s.rows * s.cols <= AUTO_NUMBERS_LIMIT;
}

/**
 * The cell size for an available width (px; Infinity: the preferred size). Cells shrink so the
 * plot fits its container with labels at their full size. A given cellSize is the preferred size:
 * a figure with numbers in its cells keeps it while it fits; where it does not (a phone), its
 * cells shrink like any other figure's (the numbers then leave the cells: fitted), so that
 * neither its labels nor its numbers are drawn smaller than their size.
 */
function fittedCell(s, avail, measure) {
  let cell = s.cellPref;
  if (!Number.isFinite(avail) || !(avail > 0)) return cell;
  // (the width the cells decide: a title wider than a narrow box is not a reason to shrink them
  // to nothing; the figure is then scaled to the box a little)
  let L = computeLayout({ ...s, cell, numbersOn: false }, measure);
  if (L.cellsW <= avail) return cell;
  const min = autoNumbers(s) && !s.fixedCell ? 20 : 3;
  const fixed = L.cellsW - L.mw;
  cell = Math.max(min, Math.min(cell, Math.floor((avail - fixed) / s.cols)));
  for (let i = 0; i < 6 && cell > min; i++) {
    L = computeLayout({ ...s, cell, numbersOn: false }, measure);
    if (L.cellsW <= avail) break;
    cell -= Math.max(1, Math.ceil((L.cellsW - avail) / s.cols));
    cell = Math.max(min, cell);
  }
  return cell;
}

// The smallest font of the numbers in the cells (px): smaller cells show their values on hover,
// tap or the arrow keys instead (the readout).
const MIN_NUMBER_PX = 11;

/**
 * s with the cell size and the number display for an available width: numbers are shown ('auto')
 * for at most 100 cells while their font is at least MIN_NUMBER_PX.
 */
export function fitted(s, avail, measure) {
  const cell = fittedCell(s, avail, measure);
  const font = autoNumbers(s) ? numberFont({ ...s, cell, numbersOn: true }, cellGap(cell)) : 0;
  return { ...s, cell, numbersOn: s.numbers === true || font >= MIN_NUMBER_PX };
}

/** The smallest of 1, 2, 4, 8, 16 ... that is >= x: label every step-th index. */
function niceStep(x) {
  let step = 1;
  while (step < x) step *= 2;
  return step;
}

/**
 * Every how many rows (columns) a label is drawn: often enough for labels `need` cells apart;
 * a long axis of indices (no labels, or labels ending in a number such as "17" or "h1:17")
 * gets about 8-10 labels (every 8th of 64 features), tokens as many as fit.
 */
function labelStep(need, n, labels) {
  let step = niceStep(need);
  if (n > 24 && labels.every((l) => l === null || /\d$/.test(l))) {
    step = Math.max(step, niceStep(n / 10));
  }
  return step;
}

function truncate(label) {
  const chars = Array.from(label);
  return chars.length > LABEL_MAX_CHARS
    ? `${chars.slice(0, LABEL_MAX_CHARS - 1).join('')}…`
    : label;
}

/** Gap between cells (px): none for tiny cells. */
function cellGap(cell) {
  if (cell >= 24) return 2;
  return cell >= 12 ? 1 : 0;
}

/** Corner radius of a cell (px). */
function cellRadius(cell) {
  if (cell >= 30) return 3;
  return cell >= 16 ? 1.5 : 0;
}

/**
 * The axis labels: fonts, every how many a label is drawn, texts and widths. Labels keep a
 * readable size however small the cells get; dense axes label every 2nd, 4th, 8th ... index
 * instead (hover readouts always name the exact row and column). Rows: consecutive baselines at
 * least a font size apart; rotated columns (-45°): the perpendicular gap between neighbours is
 * step * cell * sin 45° >= 0.81 font + 1.4 px.
 */
function labelGeometry(s, measure) {
  const { rows, cols, cell } = s;
  const cellH = rowHeight(s, cell);
  const rowFont = r2(Math.min(13, Math.max(9, cellH * 0.9)));
  const colFont = r2(Math.min(13, Math.max(10, cell * 0.8)));
  const rowStep = labelStep(rowFont / cellH, rows, s.rowLabels);
  const colStep = labelStep((colFont * 1.15 + 2) / cell, cols, s.colLabels);
  const rowText = s.rowLabels.map((l, i) => truncate(l ?? String(i)));
  const colText = s.colLabels.map((l, i) => truncate(l ?? String(i)));
  const rowW = rowText.map((t) => measure(t, rowFont));
  const colW = colText.map((t) => measure(t, colFont));
  return {
    rowFont,
    colFont,
    rowStep,
    colStep,
    rowText,
    colText,
    colW,
    maxRowW: Math.max(0, ...rowW.filter((_, i) => i % rowStep === 0)),
    maxColW: Math.max(0, ...colW.filter((_, i) => i % colStep === 0)),
  };
}

/** How far the rotated column labels reach right of the matrix (px). */
function labelOverhang(s, g, mw) {
  let overhang = 0;
  for (let c = 0; c < s.cols; c += g.colStep) {
    overhang = Math.max(overhang, (c + 0.5) * s.cell + g.colW[c] * COS45 + g.colFont * 0.5 - mw);
  }
  return overhang;
}

/** The font size of the numbers in the cells (0: none): the longest number fits its cell. */
function numberFont(s, gap) {
  if (!s.numbersOn) return 0;
  let maxChars = 1;
  const n = s.rows * s.cols;
  for (let i = 0; i < n; i++) {
    const len = formatFixed(s.data[i], s.digits).length;
    if (len > maxChars) maxChars = len;
  }
  const { cell } = s;
  return r2(Math.max(6, Math.min(13, cell * 0.36, (cell - gap - 3) / (maxChars * 0.58))));
}

/** Geometry of the plot: the matrix at (mx, my), mw x mh, in a W x H box; rows cellH px tall. */
export function computeLayout(s, measure) {
  const { rows, cols, cell } = s;
  const cellH = rowHeight(s, cell);
  const g = labelGeometry(s, measure);
  const gap = cellGap(cell);
  const topTitle = `${s.colAxis} →`;
  // drawn rotated along the left edge, reading upwards: the arrow points down the rows
  const sideTitle = `← ${s.rowAxis}`;
  const mx = PAD + Math.ceil(AXIS_FONT + 8 + g.maxRowW + 8);
  const titleY = PAD + AXIS_FONT;
  const my = titleY + 8 + Math.ceil(g.maxColW * COS45 + g.colFont * 0.8 + 6);
  const mw = cols * cell;
  const mh = rows * cellH;
  const markerW = s.highlightRows.length ? g.rowFont + 8 : 0;
  const right = Math.max(labelOverhang(s, g, mw), markerW);
  const topTitleW = measure(topTitle, AXIS_FONT, 600);
  const sideTitleW = measure(sideTitle, AXIS_FONT, 600);
  const cellsW = Math.ceil(mx + mw + right + PAD); // the width the cells' size decides
  return {
    W: Math.max(cellsW, Math.ceil(mx + topTitleW + PAD)),
    cellsW,
    H: Math.ceil(Math.max(my + mh + PAD, my + mh / 2 + sideTitleW / 2 + PAD)),
    pad: PAD,
    mx,
    my,
    mw,
    mh,
    cell,
    cellH,
    gap,
    rx: cellRadius(cell),
    axisFont: AXIS_FONT,
    rowFont: g.rowFont,
    colFont: g.colFont,
    numFont: numberFont(s, gap),
    rowStep: g.rowStep,
    colStep: g.colStep,
    rowText: g.rowText,
    colText: g.colText,
    colW: g.colW,
    topTitle,
    sideTitle,
    titleY,
    sideTitleX: PAD + AXIS_FONT * 0.85,
    colLabelY: my - 5,
    markerX: mx + mw + 4,
  };
}
