// cells.js - the cells of the heatmap: their colours, the SVG <rect>s (up to s.svgCellLimit cells)
// or one <canvas> (above), the numbers in the cells, the hatching of masked (non-finite) cells,
// and the cells drawn on a canvas or as markup for the PNG / SVG exports.

import { svgEl } from '../dom.js';
import {
  divergingColor,
  divergingPacked,
  divergingTextColor,
  formatFixed,
  r2,
  sequentialColor,
  sequentialPacked,
  sequentialTextColor,
  uniqueId,
} from '../scales.js';
import { FONT_STACK } from '../export.js';
import { roundRectPath } from './primitives.js';
import { HATCH_BG, HATCH_INK } from './theme.js';
import { NAN_PATTERN, cellMark, linedCell, markInk, nanCell } from './marks.js';

// HATCH_BG (#e5e7eb) as a packed little-endian RGBA pixel
const HATCH_BG_PACKED = ((255 << 24) | (0xeb << 16) | (0xe7 << 8) | 0xe5) >>> 0;

/** The largest |x| of the finite entries (0 if none). */
function maxAbsFinite(s) {
  let m = 0;
  const n = s.rows * s.cols;
  for (let i = 0; i < n; i++) {
    const a = Math.abs(s.data[i]);
    if (a > m && a !== Infinity) m = a;
  }
  return m;
}

/** Colour range: 'unit' fixed [min=0, max=1]; 'diverging' symmetric [-m, m], m = max |finite x|. */
function colorRange(s) {
  if (s.scale === 'diverging') {
    let m = s.maxAbs;
    if (!(m > 0) || !Number.isFinite(m)) {
      m = maxAbsFinite(s);
      if (!(m > 0)) m = 1;
    }
    return [-m, m];
  }
  const lo = Number.isFinite(s.min) ? s.min : 0;
  const hi = Number.isFinite(s.max) && s.max > lo ? s.max : lo + 1;
  return [lo, hi];
}

/** { lo, hi, fill(v), ink(v), packed(v) }: a cell's colour, its number's colour, its pixel. */
export function colorizer(s) {
  const [lo, hi] = colorRange(s);
  if (s.scale === 'diverging') {
    const m = hi;
    return {
      lo,
      hi,
      fill: (v) => divergingColor(v / m),
      ink: (v) => divergingTextColor(v / m),
      packed: (v) => divergingPacked(v / m),
    };
  }
  const span = hi - lo;
  return {
    lo,
    hi,
    fill: (v) => sequentialColor((v - lo) / span),
    ink: (v) => sequentialTextColor((v - lo) / span),
    packed: (v) => sequentialPacked((v - lo) / span),
  };
}

/** <defs> with the hatch pattern of masked cells; its id goes to svg.dataset.hatch. */
export function hatchDefs(svg) {
  const defs = svgEl('defs');
  const id = uniqueId('hm-hatch');
  const pat = svgEl('pattern', {
    id,
    width: 5,
    height: 5,
    patternUnits: 'userSpaceOnUse',
    patternTransform: 'rotate(45)',
  });
  pat.append(svgEl('rect', { width: 5, height: 5, fill: HATCH_BG }));
  pat.append(svgEl('line', { x1: 0, y1: 0, x2: 0, y2: 5, stroke: HATCH_INK, 'stroke-width': 1.5 }));
  defs.append(pat);
  svg.append(defs);
  svg.dataset.hatch = id;
}

/** <g class="cells">: one <rect class="cell"> per cell, row by row (filled by paintCells). */
function cellRects(s, L) {
  const g = svgEl('g', { class: 'cells' });
  if (!L.gap) g.setAttribute('shape-rendering', 'crispEdges');
  const w = r2(L.cell - L.gap);
  const h = r2(L.cellH - L.gap);
  const proto = svgEl('rect', { width: w, height: h, class: 'cell' });
  if (L.rx) proto.setAttribute('rx', L.rx);
  // without gaps, cells overlap by a hair so no seams show when the SVG is scaled
  if (!L.gap) {
    proto.setAttribute('width', r2(w + 0.3));
    proto.setAttribute('height', r2(h + 0.3));
  }
  const rects = [];
  const frag = document.createDocumentFragment();
  for (let r = 0; r < s.rows; r++) {
    const y = r2(L.my + r * L.cellH + L.gap / 2);
    for (let c = 0; c < s.cols; c++) {
      const rect = proto.cloneNode(false);
      rect.setAttribute('x', r2(L.mx + c * L.cell + L.gap / 2));
      rect.setAttribute('y', y);
      frag.append(rect);
      rects.push(rect);
    }
  }
  g.append(frag);
  return { g, rects };
}

/** <g class="cell-numbers">: one centred <text> per cell (filled by paintCells). */
function cellNumbers(s, L) {
  const g = svgEl('g', {
    class: 'cell-numbers',
    'text-anchor': 'middle',
    'font-size': L.numFont,
    'aria-hidden': 'true',
  });
  const texts = [];
  const frag = document.createDocumentFragment();
  for (let r = 0; r < s.rows; r++) {
    const y = r2(L.my + (r + 0.5) * L.cellH + L.numFont * 0.35);
    for (let c = 0; c < s.cols; c++) {
      const t = svgEl('text', { x: r2(L.mx + (c + 0.5) * L.cell), y });
      frag.append(t);
      texts.push(t);
    }
  }
  g.append(frag);
  return { g, texts };
}

/**
 * Many cells: one canvas inside the SVG (it scales with it); labels and overlays stay vector.
 * Thousands of SVG nodes cost tens of ms per style pass; a canvas repaints in ~1 ms. Cells with a
 * mark or a number are drawn with k × ky device pixels each (data-k, data-ky); plain colours with
 * one pixel each, scaled up by the browser (paintCellsFast).
 */
function cellCanvas(s, L) {
  const fo = svgEl('foreignObject', {
    x: L.mx,
    y: L.my,
    width: L.mw,
    height: L.mh,
    class: 'cells-canvas',
  });
  const canvas = document.createElement('canvas');
  const dpr = Math.min(3, Math.max(1, globalThis.devicePixelRatio || 1));
  const k = Math.max(1, Math.round(L.cell * dpr));
  const ky = Math.max(1, Math.round(L.cellH * dpr));
  canvas.style.width = '100%';
  canvas.style.height = '100%';
  canvas.style.display = 'block';
  canvas.setAttribute('aria-hidden', 'true');
  canvas.dataset.k = String(k);
  if (ky !== k) canvas.dataset.ky = String(ky); // rows taller than wide (minRowHeight)
  fo.append(canvas);
  return { fo, canvas };
}

/** Draw the cells (and their numbers) into state.svg: SVG rects, or a canvas for many cells. */
export function drawCells(state) {
  const { s, L, svg } = state;
  state.cellEls = [];
  state.numEls = [];
  state.canvas = null;
  if (s.rows * s.cols > s.svgCellLimit) {
    const { fo, canvas } = cellCanvas(s, L);
    svg.append(fo);
    state.canvas = canvas;
    return;
  }
  const cells = cellRects(s, L);
  svg.append(cells.g);
  state.cellEls = cells.rects;
  if (s.numbersOn) {
    const numbers = cellNumbers(s, L);
    svg.append(numbers.g);
    state.numEls = numbers.texts;
  }
}

/** Colours and numbers of every cell (all an update() of the data alone has to do). */
export function paintCells(state) {
  const { s, L, col, canvas } = state;
  if (canvas) {
    const k = Number(canvas.dataset.k);
    const ky = Number(canvas.dataset.ky ?? k);
    if (!state.smallCanvas) state.smallCanvas = document.createElement('canvas');
    paintCellsFast(canvas, state.smallCanvas, s, col, [k, ky]);
    if (s.numbersOn) {
      const ctx = canvas.getContext('2d');
      ctx.setTransform(k / L.cell, 0, 0, ky / L.cellH, 0, 0);
      paintNumbers(ctx, s, L, col, 0, 0);
    }
    return;
  }
  const n = s.rows * s.cols;
  const marks = {
    hatch: `url(#${state.svg.dataset.hatch})`,
    nan: `url(#${state.svg.dataset.nan})`,
    blank: 'none',
  };
  for (let i = 0; i < n; i++) {
    const v = s.data[i];
    const mark = Number.isFinite(v) && !s.blank ? null : cellMark(s, i);
    state.cellEls[i].setAttribute('fill', mark ? marks[mark] : col.fill(v));
  }
  if (!state.numEls.length) return;
  for (let i = 0; i < n; i++) {
    const v = s.data[i];
    const t = state.numEls[i];
    t.textContent = s.blank?.[i] ? '' : formatFixed(v, s.digits);
    t.setAttribute('fill', Number.isFinite(v) ? col.ink(v) : markInk(s, v));
  }
}

/** A masked cell (w × h, h = w unless given) on a canvas: grey with diagonal lines 5 px apart. */
function hatchCell(ctx, x, y, w, h = w) {
  linedCell(ctx, [x, y, w, h], { bg: HATCH_BG, ink: HATCH_INK, step: 5 });
}

/** Every cell as a (rounded) rectangle on a canvas, the matrix's corner at (ox, oy). */
export function paintCellsCanvas(ctx, s, L, col, ox, oy) {
  const { cell, cellH, gap, rx } = L;
  const w = cell - gap;
  const h = cellH - gap;
  // without gaps, cells overlap by half a pixel so no seams show
  const over = gap ? 0 : 0.5;
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.cols; c++) {
      const v = s.data[r * s.cols + c];
      const x = ox + c * cell + gap / 2;
      const y = oy + r * cellH + gap / 2;
      const mark = Number.isFinite(v) && !s.blank ? null : cellMark(s, r * s.cols + c);
      if (mark === 'hatch') {
        hatchCell(ctx, x, y, w, h);
      } else if (mark === 'nan') {
        nanCell(ctx, x, y, w, h);
      } else if (mark === 'blank') {
        continue;
      } else if (rx) {
        ctx.fillStyle = col.fill(v);
        roundRectPath(ctx, x, y, w, h, rx);
        ctx.fill();
      } else {
        ctx.fillStyle = col.fill(v);
        ctx.fillRect(x, y, w + over, h + over);
      }
    }
  }
}

/** One pixel per cell into `px` (a Uint32Array view of ImageData); returns how many are masked. */
function packPixels(px, s, col) {
  const n = s.rows * s.cols;
  let masked = 0;
  for (let i = 0; i < n; i++) {
    const v = s.data[i];
    if (s.blank && s.blank[i]) {
      px[i] = 0; // transparent: an empty cell
    } else if (Number.isFinite(v)) {
      px[i] = col.packed(v);
    } else {
      px[i] = HATCH_BG_PACKED;
      masked += 1;
    }
  }
  return masked;
}

/** The marked cells of a canvas with k × ky pixels per cell: ±∞ hatched, NaN crossed. */
function paintMarks(ctx, s, k, ky) {
  const n = s.rows * s.cols;
  for (let i = 0; i < n; i++) {
    const mark = Number.isFinite(s.data[i]) ? null : cellMark(s, i);
    const x = (i % s.cols) * k;
    const y = Math.floor(i / s.cols) * ky;
    if (mark === 'hatch') hatchCell(ctx, x, y, k, ky);
    else if (mark === 'nan') nanCell(ctx, x, y, k, ky);
  }
}

/** Hatch the masked cells of a canvas with k pixels per cell. */
function hatchMasked(ctx, s, k) {
  const n = s.rows * s.cols;
  ctx.strokeStyle = HATCH_INK;
  ctx.lineWidth = Math.max(1, k / 8);
  ctx.beginPath();
  const step = Math.max(3, k / 2);
  for (let i = 0; i < n; i++) {
    if (Number.isFinite(s.data[i])) continue;
    const x = (i % s.cols) * k;
    const y = Math.floor(i / s.cols) * k;
    for (let d = step / 2; d < 2 * k; d += step) {
      // segments of the lines x + y = const inside the cell
      const x0 = x + Math.max(0, d - k);
      const x1 = x + Math.min(k, d);
      ctx.moveTo(x0, y + (d - (x0 - x)));
      ctx.lineTo(x1, y + (d - (x1 - x)));
    }
  }
  ctx.stroke();
}

/** Gives a canvas this size in pixels; true when it changed (which also clears the canvas). */
function sizeCanvas(canvas, width, height) {
  if (canvas.width === width && canvas.height === height) return false;
  canvas.width = width;
  canvas.height = height;
  return true;
}

/**
 * The fast path for big matrices: one pixel per cell into ImageData. Plain colours (no mark, no
 * number): that image is the canvas, scaled up by the browser without smoothing (image-rendering:
 * pixelated). Otherwise it goes through a small canvas, scaled up by integer factors [k, ky] with
 * nearest-neighbour sampling onto `canvas`, and the masked cells are hatched after (each on its
 * own when rows are taller than wide or NaN is marked).
 */
function paintCellsFast(canvas, small, s, col, [k, ky]) {
  const { rows, cols } = s;
  const img = new ImageData(cols, rows);
  const masked = packPixels(new Uint32Array(img.data.buffer), s, col);
  if (!masked && !s.numbersOn) {
    sizeCanvas(canvas, cols, rows);
    canvas.style.imageRendering = 'pixelated';
    canvas.getContext('2d').putImageData(img, 0, 0);
    return;
  }
  sizeCanvas(small, cols, rows);
  small.getContext('2d').putImageData(img, 0, 0);
  canvas.style.imageRendering = '';
  const fresh = sizeCanvas(canvas, cols * k, rows * ky);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.imageSmoothingEnabled = false;
  if (!fresh) ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(small, 0, 0, cols * k, rows * ky);
  if (masked && (ky !== k || s.markNonFinite)) paintMarks(ctx, s, k, ky);
  else if (masked) hatchMasked(ctx, s, k);
}

/** The numbers in the cells on a canvas (if s.numbersOn), the matrix's corner at (ox, oy). */
export function paintNumbers(ctx, s, L, col, ox, oy) {
  if (!s.numbersOn) return;
  ctx.save();
  ctx.font = `${L.numFont}px ${FONT_STACK}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'alphabetic';
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.cols; c++) {
      const v = s.data[r * s.cols + c];
      if (s.blank?.[r * s.cols + c]) continue;
      ctx.fillStyle = Number.isFinite(v) ? col.ink(v) : markInk(s, v);
      ctx.fillText(
        formatFixed(v, s.digits),
        ox + (c + 0.5) * L.cell,
        oy + (r + 0.5) * L.cellH + L.numFont * 0.35,
      );
    }
  }
  ctx.restore();
}

/** The NaN pattern's markup when the figure marks NaN (markNonFinite), else ''. */
export const nanPatternMarkup = (s) => (s.markNonFinite ? NAN_PATTERN : '');

const MARKUP_FILLS = { hatch: 'url(#hatch)', nan: 'url(#nan)' };

/** The cells (masked ones filled with url(#hatch), NaN with url(#nan)) and numbers as markup. */
export function cellsMarkup(s, L, col) {
  const w = r2(L.cell - L.gap);
  const h = r2(L.cellH - L.gap);
  const rx = L.rx ? ` rx="${L.rx}"` : '';
  let cells = '';
  let nums = '';
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.cols; c++) {
      const v = s.data[r * s.cols + c];
      const mark = Number.isFinite(v) && !s.blank ? null : cellMark(s, r * s.cols + c);
      if (mark === 'blank') continue;
      const fill = mark ? MARKUP_FILLS[mark] : col.fill(v);
      const x = r2(L.mx + c * L.cell + L.gap / 2);
      const y = r2(L.my + r * L.cellH + L.gap / 2);
      cells += `<rect x="${x}" y="${y}" width="${w}" height="${h}"${rx} fill="${fill}"/>`;
      if (!s.numbersOn) continue;
      const nx = r2(L.mx + (c + 0.5) * L.cell);
      const ny = r2(L.my + (r + 0.5) * L.cellH + L.numFont * 0.35);
      const ink = Number.isFinite(v) ? col.ink(v) : markInk(s, v);
      nums += `<text x="${nx}" y="${ny}" fill="${ink}">${formatFixed(v, s.digits)}</text>`;
    }
  }
  let out = `<g shape-rendering="${L.gap ? 'auto' : 'crispEdges'}">${cells}</g>`;
  if (nums) {
    const attrs = `font-size="${L.numFont}" text-anchor="middle" font-variant-numeric="tabular-nums"`;
    out += `<g ${attrs}>${nums}</g>`;
  }
  return out;
}
