// heatmap.js - an accessible, fast heatmap of a row-major matrix (attention weights, scores, grads).
//
//   const h = heatmap({ data, rows, cols, rowLabels, colLabels, title, shape, scale: 'unit' });
//   container.append(h.element);  h.update(newData);  h.highlight(row, col);
//
// Drawing: one SVG, one <rect class="cell"> per cell (up to 64x64 = 4096 cells); above 4096 cells
// the cells go on a <canvas> inside the SVG (labels, highlights stay SVG). Interaction: a single
// set of listeners on the <figure> (event delegation by coordinates, not one listener per cell).
// Text from data (token labels) is only ever set with textContent or escaped by escapeXML().

import { MINUS, svgEl } from './dom.js';
import {
  sequentialColor,
  divergingColor,
  sequentialTextColor,
  divergingTextColor,
  sequentialPacked,
  divergingPacked,
  createLegend,
  legendLayout,
  gradientStops,
  describeScale,
  formatFixed,
  formatTick,
  uniqueId,
} from './scales.js';
import {
  downloadSVG,
  downloadPNG,
  downloadText,
  matrixCSV,
  safeFilename,
  FONT_STACK,
} from './export.js';

const MONO_STACK =
  'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", monospace';
// Cells drawn as SVG <rect>s up to this many (every lesson figure); a canvas above (fast at 64x64).
const SVG_CELL_LIMIT = 256;
const AUTO_NUMBERS_LIMIT = 100;
const LABEL_MAX_CHARS = 14;
const COS45 = Math.SQRT1_2;
const INK = '#111827';
const LABEL_INK = '#374151';
const MUTED_INK = '#6b7280';
const HIGHLIGHT_INK = '#111111';

// ------------------------------------------------------------------------------------------------
// small helpers

/** An HTML element with a class and attributes */
function htmlEl(tag, className, attrs) {
  const el = document.createElement(tag);
  el.className = className;
  if (attrs) for (const k in attrs) el.setAttribute(k, attrs[k]);
  return el;
}

/** Escape text for SVG/XML markup (token labels are user text). */
export function escapeXML(s) {
  return String(s).replace(
    /[&<>"']/g,
    (ch) =>
      ({
        '&': '&amp;',
        '<': '&lt;',
        '>': '&gt;',
        '"': '&quot;',
        "'": '&#39;',
      })[ch],
  );
}

let measureCtx = null;
const widthCache = new Map();
function textWidth(text, size, weight = 400) {
  const key = `${weight}|${size}|${text}`;
  let w = widthCache.get(key);
  if (w !== undefined) return w;
  if (!measureCtx) {
    const c = document.createElement('canvas');
    measureCtx = c.getContext('2d');
  }
  if (measureCtx) {
    measureCtx.font = `${weight} ${size}px ${FONT_STACK}`;
    w = measureCtx.measureText(text).width;
  } else {
    w = text.length * size * 0.6;
  }
  if (widthCache.size > 5000) widthCache.clear();
  widthCache.set(key, w);
  return w;
}

function truncate(label) {
  const chars = Array.from(label);
  return chars.length > LABEL_MAX_CHARS
    ? `${chars.slice(0, LABEL_MAX_CHARS - 1).join('')}…`
    : label;
}

/** 'query (row)' -> 'query': the noun used in readouts. */
function axisNoun(axis) {
  const s = String(axis ?? '')
    .replace(/\(.*?\)/g, '')
    .trim();
  return s || String(axis ?? '');
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

function r2(v) {
  return Math.round(v * 100) / 100;
}

// ------------------------------------------------------------------------------------------------
// the model: options -> normalised state; layout; colours

function normalise(o) {
  const rows = o.rows;
  const cols = o.cols;
  if (!Number.isInteger(rows) || rows < 1 || !Number.isInteger(cols) || cols < 1) {
    throw new Error(`heatmap: rows and cols must be positive integers, got ${rows} x ${cols}`);
  }
  const data = o.data;
  if (!data || typeof data.length !== 'number' || data.length < rows * cols) {
    throw new Error(
      `heatmap: data must hold rows*cols = ${rows * cols} numbers, got ${data ? data.length : data}`,
    );
  }
  const labelsOf = (labels, n) => {
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = labels && labels[i] !== undefined && labels[i] !== null ? String(labels[i]) : null;
    }
    return out;
  };
  const scale = o.scale === 'diverging' ? 'diverging' : 'unit';
  return {
    ...o,
    rows,
    cols,
    data,
    scale,
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

/**
 * The cell size and number display for an available width (px; Infinity: the preferred size).
 * Cells shrink so the plot fits its container with labels at their full size; numbers are shown
 * ('auto') for at most 100 cells while cells stay >= 26 px. A given cellSize is the preferred
 * size: a figure with numbers in its cells keeps it and scales as a whole (numbers and labels
 * together); one without numbers shrinks its cells instead, so its labels stay readable.
 */
function fitted(s, avail) {
  let cell = s.cellPref;
  const wantsNumbers =
    s.numbers === true || (s.numbers !== false && s.rows * s.cols <= AUTO_NUMBERS_LIMIT);
  if ((!s.fixedCell || !wantsNumbers) && Number.isFinite(avail) && avail > 0) {
    const min = s.rows * s.cols <= AUTO_NUMBERS_LIMIT && s.numbers !== false ? 20 : 3;
    let L = computeLayout({ ...s, cell, numbersOn: false });
    if (L.W > avail) {
      const fixed = L.W - L.mw;
      cell = Math.max(min, Math.min(cell, Math.floor((avail - fixed) / s.cols)));
      for (let i = 0; i < 6 && cell > min; i++) {
        L = computeLayout({ ...s, cell, numbersOn: false });
        if (L.W <= avail) break;
        cell -= Math.max(1, Math.ceil((L.W - avail) / s.cols));
        cell = Math.max(min, cell);
      }
    }
  }
  const numbersOn =
    s.numbers === true ||
    (s.numbers !== false && s.rows * s.cols <= AUTO_NUMBERS_LIMIT && cell >= 26);
  return { ...s, cell, numbersOn };
}

/** Colour range: 'unit' fixed [min=0, max=1]; 'diverging' symmetric [-m, m], m = max |finite x|. */
function colorRange(s) {
  if (s.scale === 'diverging') {
    let m = s.maxAbs;
    if (!(m > 0) || !Number.isFinite(m)) {
      m = 0;
      const n = s.rows * s.cols;
      for (let i = 0; i < n; i++) {
        const a = Math.abs(s.data[i]);
        if (a > m && a !== Infinity) m = a;
      }
      if (!(m > 0)) m = 1;
    }
    return [-m, m];
  }
  const lo = Number.isFinite(s.min) ? s.min : 0;
  const hi = Number.isFinite(s.max) && s.max > lo ? s.max : lo + 1;
  return [lo, hi];
}

function colorizer(s) {
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

/** Geometry of the plot (SVG user units = CSS px at natural size). */
function computeLayout(s) {
  const { rows, cols, cell } = s;
  const pad = 10;
  const axisFont = 12;
  // Labels keep a readable size however small the cells get; dense axes label every 2nd, 4th,
  // 8th ... index instead (hover readouts always name the exact row and column).
  const rowFont = r2(Math.min(13, Math.max(9, cell * 0.9)));
  const colFont = r2(Math.min(13, Math.max(10, cell * 0.8)));
  const labelFont = colFont;
  // rows: consecutive baselines at least a font size apart; rotated columns (-45°): the
  // perpendicular gap between neighbours is step * cell * sin 45° >= 0.81 font + 1.4 px
  const rowStep = labelStep(rowFont / cell, rows, s.rowLabels);
  const colStep = labelStep((colFont * 1.15 + 2) / cell, cols, s.colLabels);
  const gap = cell >= 24 ? 2 : cell >= 12 ? 1 : 0;
  const rx = cell >= 30 ? 3 : cell >= 16 ? 1.5 : 0;

  const rowText = s.rowLabels.map((l, i) => truncate(l ?? String(i)));
  const colText = s.colLabels.map((l, i) => truncate(l ?? String(i)));
  const rowW = rowText.map((t) => textWidth(t, rowFont));
  const colW = colText.map((t) => textWidth(t, colFont));
  const maxRowW = Math.max(0, ...rowW.filter((_, i) => i % rowStep === 0));
  const maxColW = Math.max(0, ...colW.filter((_, i) => i % colStep === 0));

  const topTitle = `${s.colAxis} →`;
  // drawn rotated along the left edge, reading upwards: the arrow points down the rows
  const sideTitle = `← ${s.rowAxis}`;
  const topTitleW = textWidth(topTitle, axisFont, 600);
  const sideTitleW = textWidth(sideTitle, axisFont, 600);

  const leftW = Math.ceil(axisFont + 8 + maxRowW + 8);
  const mx = pad + leftW;
  const labelsH = Math.ceil(maxColW * COS45 + colFont * 0.8 + 6);
  const titleY = pad + axisFont;
  const my = titleY + 8 + labelsH;
  const mw = cols * cell;
  const mh = rows * cell;

  let overhang = 0;
  for (let c = 0; c < cols; c += colStep) {
    overhang = Math.max(overhang, (c + 0.5) * cell + colW[c] * COS45 + colFont * 0.5 - mw);
  }
  const markerW = s.highlightRows.length ? rowFont + 8 : 0;
  const W = Math.ceil(Math.max(mx + mw + Math.max(overhang, markerW) + pad, mx + topTitleW + pad));
  const H = Math.ceil(Math.max(my + mh + pad, my + mh / 2 + sideTitleW / 2 + pad));

  let numFont = 0;
  if (s.numbersOn) {
    let maxChars = 1;
    const n = rows * cols;
    for (let i = 0; i < n; i++) {
      const len = formatFixed(s.data[i], s.digits).length;
      if (len > maxChars) maxChars = len;
    }
    numFont = r2(Math.max(6, Math.min(13, cell * 0.36, (cell - gap - 3) / (maxChars * 0.58))));
  }
  return {
    W,
    H,
    pad,
    mx,
    my,
    mw,
    mh,
    cell,
    gap,
    rx,
    axisFont,
    labelFont,
    rowFont,
    colFont,
    numFont,
    rowStep,
    colStep,
    rowText,
    colText,
    colW,
    topTitle,
    sideTitle,
    titleY,
    sideTitleX: pad + axisFont * 0.85,
    colLabelY: my - 5,
    markerX: mx + mw + 4,
  };
}

/**
 * The static decorations (axis titles, labels, highlight-row outlines and markers) as primitives,
 * drawn by the SVG DOM builder, the SVG string builder (export) and the canvas painter (PNG).
 */
function decorations(s, L) {
  const items = [];
  items.push({
    type: 'text',
    key: 'title-col',
    x: L.mx,
    y: L.titleY,
    text: L.topTitle,
    size: L.axisFont,
    weight: 600,
    fill: INK,
    cls: 'axis-title',
  });
  items.push({
    type: 'text',
    key: 'title-row',
    x: L.sideTitleX,
    y: L.my + L.mh / 2,
    text: L.sideTitle,
    size: L.axisFont,
    weight: 600,
    fill: INK,
    anchor: 'middle',
    rotate: -90,
    cls: 'axis-title',
  });
  const muted = (labels, i) => labels[i] === null;
  for (let r = 0; r < s.rows; r += L.rowStep) {
    items.push({
      type: 'text',
      key: `row-${r}`,
      x: L.mx - 6,
      y: L.my + (r + 0.5) * L.cell + L.rowFont * 0.35,
      text: L.rowText[r],
      size: L.rowFont,
      anchor: 'end',
      fill: muted(s.rowLabels, r) ? MUTED_INK : LABEL_INK,
      cls: 'row-label',
    });
  }
  for (let c = 0; c < s.cols; c += L.colStep) {
    items.push({
      type: 'text',
      key: `col-${c}`,
      x: L.mx + (c + 0.5) * L.cell - L.colFont * 0.25,
      y: L.colLabelY,
      text: L.colText[c],
      size: L.colFont,
      rotate: -45,
      fill: muted(s.colLabels, c) ? MUTED_INK : LABEL_INK,
      cls: 'col-label',
    });
  }
  return items;
}

function highlightItems(s, L) {
  const items = [];
  for (const r of s.highlightRows) {
    const y = L.my + r * L.cell;
    items.push({
      type: 'rect',
      x: L.mx - 1,
      y: y - 1,
      w: L.mw + 2,
      h: L.cell + 2,
      fill: 'none',
      stroke: '#ffffff',
      sw: 4,
      cls: 'hl-row-halo',
    });
    items.push({
      type: 'rect',
      x: L.mx - 1,
      y: y - 1,
      w: L.mw + 2,
      h: L.cell + 2,
      fill: 'none',
      stroke: HIGHLIGHT_INK,
      sw: 2,
      dash: '5 3',
      cls: 'hl-row',
    });
    items.push({
      type: 'text',
      x: L.markerX,
      y: y + L.cell / 2 + L.rowFont * 0.35,
      text: '◀',
      size: L.rowFont,
      fill: HIGHLIGHT_INK,
      cls: 'hl-marker',
    });
  }
  return items;
}

// ------------------------------------------------------------------------------------------------
// renderers of primitives: SVG DOM, SVG markup, canvas

function textAttrs(it) {
  const a = { x: r2(it.x), y: r2(it.y), 'font-size': it.size };
  if (it.rotate) {
    a.x = 0;
    a.y = 0;
    a.transform = `translate(${r2(it.x)},${r2(it.y)}) rotate(${it.rotate})`;
  }
  if (it.anchor) a['text-anchor'] = it.anchor;
  if (it.weight) a['font-weight'] = it.weight;
  if (it.fill) a.fill = it.fill;
  if (it.mono) a['font-family'] = MONO_STACK;
  return a;
}

function rectAttrs(it) {
  const a = {
    x: r2(it.x),
    y: r2(it.y),
    width: r2(it.w),
    height: r2(it.h),
    fill: it.fill ?? 'none',
  };
  if (it.stroke) {
    a.stroke = it.stroke;
    a['stroke-width'] = it.sw ?? 1;
  }
  if (it.dash) a['stroke-dasharray'] = it.dash;
  if (it.rx) a.rx = it.rx;
  return a;
}

function drawItemsDOM(items, parent) {
  const keyed = new Map();
  const frag = document.createDocumentFragment();
  for (const it of items) {
    let el;
    if (it.type === 'text') {
      el = svgEl('text', textAttrs(it));
      el.textContent = it.text;
    } else if (it.type === 'rect') {
      el = svgEl('rect', rectAttrs(it));
    } else {
      continue;
    }
    if (it.cls) el.setAttribute('class', it.cls);
    if (it.key) keyed.set(it.key, el);
    frag.append(el);
  }
  parent.append(frag);
  return keyed;
}

function attrString(a) {
  let s = '';
  for (const k in a) s += ` ${k}="${escapeXML(a[k])}"`;
  return s;
}

function itemsMarkup(items, defs) {
  let out = '';
  for (const it of items) {
    if (it.type === 'text') {
      out += `<text${attrString(textAttrs(it))}>${escapeXML(it.text)}</text>`;
    } else if (it.type === 'rect') {
      out += `<rect${attrString(rectAttrs(it))}/>`;
    } else if (it.type === 'gradient') {
      const id = `g${defs.length}`;
      defs.push(
        `<linearGradient id="${id}" x1="0" x2="1" y1="0" y2="0">${it.stops
          .map(([o, c]) => `<stop offset="${o.toFixed(4)}" stop-color="${c}"/>`)
          .join('')}</linearGradient>`,
      );
      out += `<rect${attrString({ x: r2(it.x), y: r2(it.y), width: r2(it.w), height: r2(it.h), fill: `url(#${id})`, stroke: '#6b7280', 'stroke-width': 0.5 })}/>`;
    } else if (it.type === 'line') {
      out += `<line${attrString({ x1: r2(it.x1), y1: r2(it.y1), x2: r2(it.x2), y2: r2(it.y2), stroke: it.stroke, 'stroke-width': it.sw ?? 1 })}/>`;
    }
  }
  return out;
}

function roundRectPath(ctx, x, y, w, h, rx) {
  ctx.beginPath();
  if (rx > 0 && ctx.roundRect) ctx.roundRect(x, y, w, h, rx);
  else ctx.rect(x, y, w, h);
}

function paintItems(ctx, items) {
  for (const it of items) {
    ctx.save();
    if (it.type === 'text') {
      ctx.font = `${it.weight ?? 400} ${it.size}px ${it.mono ? MONO_STACK : FONT_STACK}`;
      ctx.fillStyle = it.fill ?? INK;
      ctx.textAlign = it.anchor === 'end' ? 'right' : it.anchor === 'middle' ? 'center' : 'left';
      ctx.textBaseline = 'alphabetic';
      ctx.translate(it.x, it.y);
      if (it.rotate) ctx.rotate((it.rotate * Math.PI) / 180);
      ctx.fillText(it.text, 0, 0);
    } else if (it.type === 'rect') {
      roundRectPath(ctx, it.x, it.y, it.w, it.h, it.rx ?? 0);
      if (it.fill && it.fill !== 'none') {
        ctx.fillStyle = it.fill;
        ctx.fill();
      }
      if (it.stroke) {
        ctx.strokeStyle = it.stroke;
        ctx.lineWidth = it.sw ?? 1;
        if (it.dash) ctx.setLineDash(it.dash.split(' ').map(Number));
        ctx.stroke();
      }
    } else if (it.type === 'gradient') {
      const g = ctx.createLinearGradient(it.x, 0, it.x + it.w, 0);
      for (const [o, c] of it.stops) g.addColorStop(o, c);
      ctx.fillStyle = g;
      ctx.fillRect(it.x, it.y, it.w, it.h);
      ctx.strokeStyle = '#6b7280';
      ctx.lineWidth = 0.5;
      ctx.strokeRect(it.x, it.y, it.w, it.h);
    } else if (it.type === 'line') {
      ctx.strokeStyle = it.stroke;
      ctx.lineWidth = it.sw ?? 1;
      ctx.beginPath();
      ctx.moveTo(it.x1, it.y1);
      ctx.lineTo(it.x2, it.y2);
      ctx.stroke();
    }
    ctx.restore();
  }
}

const HATCH_BG = '#e5e7eb';
const HATCH_INK = '#9ca3af';

function paintCells(ctx, s, L, col, ox, oy) {
  const { rows, cols, data } = s;
  const { cell, gap, rx } = L;
  const w = cell - gap;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      const x = ox + c * cell + gap / 2;
      const y = oy + r * cell + gap / 2;
      if (Number.isFinite(v)) {
        ctx.fillStyle = col.fill(v);
        if (rx) {
          roundRectPath(ctx, x, y, w, w, rx);
          ctx.fill();
        } else {
          ctx.fillRect(x, y, w + (gap ? 0 : 0.5), w + (gap ? 0 : 0.5));
        }
      } else {
        ctx.fillStyle = HATCH_BG;
        ctx.fillRect(x, y, w, w);
        ctx.save();
        ctx.beginPath();
        ctx.rect(x, y, w, w);
        ctx.clip();
        ctx.strokeStyle = HATCH_INK;
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (let d = -w; d < w; d += 5) {
          ctx.moveTo(x + d, y + w);
          ctx.lineTo(x + d + w, y);
        }
        ctx.stroke();
        ctx.restore();
      }
    }
  }
}

// #e5e7eb as a packed little-endian RGBA pixel
const HATCH_BG_PACKED = ((255 << 24) | (0xeb << 16) | (0xe7 << 8) | 0xe5) >>> 0;

/**
 * The fast path for big matrices: one pixel per cell into ImageData (a small canvas), scaled up by
 * an integer factor k with nearest-neighbour sampling onto `canvas`; masked cells hatched after.
 */
function paintCellsFast(canvas, small, s, L, col, k) {
  const { rows, cols, data } = s;
  if (small.width !== cols || small.height !== rows) {
    small.width = cols;
    small.height = rows;
  }
  const sctx = small.getContext('2d');
  const img = sctx.createImageData(cols, rows);
  const px = new Uint32Array(img.data.buffer);
  const n = rows * cols;
  let masked = 0;
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (Number.isFinite(v)) {
      px[i] = col.packed(v);
    } else {
      px[i] = HATCH_BG_PACKED;
      masked += 1;
    }
  }
  sctx.putImageData(img, 0, 0);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(small, 0, 0, cols * k, rows * k);
  if (masked) {
    ctx.strokeStyle = HATCH_INK;
    ctx.lineWidth = Math.max(1, k / 8);
    ctx.beginPath();
    const step = Math.max(3, k / 2);
    for (let i = 0; i < n; i++) {
      if (Number.isFinite(data[i])) continue;
      const x = (i % cols) * k;
      const y = Math.floor(i / cols) * k;
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
}

function paintNumbers(ctx, s, L, col, ox, oy) {
  if (!s.numbersOn) return;
  ctx.save();
  ctx.font = `${L.numFont}px ${FONT_STACK}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'alphabetic';
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.cols; c++) {
      const v = s.data[r * s.cols + c];
      ctx.fillStyle = Number.isFinite(v) ? col.ink(v) : INK;
      ctx.fillText(
        formatFixed(v, s.digits),
        ox + (c + 0.5) * L.cell,
        oy + (r + 0.5) * L.cell + L.numFont * 0.35,
      );
    }
  }
  ctx.restore();
}

// ------------------------------------------------------------------------------------------------
// export figure (title + plot + legend) as SVG markup or a canvas

function exportScene(s, L, col) {
  const head = [];
  let y = 22;
  if (s.title) {
    head.push({ type: 'text', x: 12, y, text: String(s.title), size: 15, weight: 700, fill: INK });
    y += 18;
  }
  if (s.shape) {
    head.push({
      type: 'text',
      x: 12,
      y,
      text: `shape ${s.shape}`,
      size: 12,
      fill: MUTED_INK,
      mono: true,
    });
    y += 16;
  }
  const oy = s.title || s.shape ? y : 0;
  const lay = legendLayout(s.scale === 'diverging' ? 'diverging' : 'unit', col.lo, col.hi);
  const lx = Math.max(4, L.mx - lay.bar.x);
  const ly = oy + L.H;
  const legendItems = [
    {
      type: 'text',
      x: lx + lay.label.x,
      y: ly + lay.label.y,
      text: legendText(s),
      size: 12,
      weight: 600,
      fill: INK,
    },
    {
      type: 'gradient',
      x: lx + lay.bar.x,
      y: ly + lay.bar.y,
      w: lay.bar.w,
      h: lay.bar.h,
      stops: gradientStops(s.scale === 'diverging' ? 'diverging' : 'unit'),
    },
  ];
  for (const t of lay.ticks) {
    legendItems.push({
      type: 'line',
      x1: lx + t.x,
      x2: lx + t.x,
      y1: ly + lay.bar.y + lay.bar.h,
      y2: ly + lay.bar.y + lay.bar.h + 4,
      stroke: '#4b5563',
    });
    legendItems.push({
      type: 'text',
      x: lx + t.x,
      y: ly + lay.tickY,
      text: t.text,
      size: 11,
      anchor: 'middle',
      fill: LABEL_INK,
    });
  }
  let W = Math.max(L.W, lx + lay.width + 8);
  let H = ly + lay.height + 8;
  if (s.highlightRows.length) {
    const text = highlightKeyText(s);
    legendItems.push({ type: 'text', x: lx + 2, y: H + 8, text, size: 12, fill: INK });
    W = Math.max(W, lx + 2 + textWidth(text, 12) + 12);
    H += 20;
  }
  for (const it of head) {
    W = Math.max(
      W,
      it.x + textWidth(it.text, it.size, it.weight ?? 400) * (it.mono ? 1.25 : 1) + 12,
    );
  }
  return { head, oy, legendItems, W: Math.ceil(W), H: Math.ceil(H) };
}

function highlightKeyText(s) {
  const rows = s.highlightRows
    .map((r) => (s.rowLabels[r] !== null ? `${r} ‘${s.rowLabels[r]}’` : String(r)))
    .join(', ');
  return `◀ dashed outline: ${s.highlightLabel ?? 'highlighted rows'} (${s.highlightRows.length === 1 ? 'row' : 'rows'} ${rows})`;
}

function legendText(s) {
  return s.legendLabel ?? (s.scale === 'diverging' ? 'value' : 'attention weight');
}

function shift(items, dx, dy) {
  return items.map((it) => {
    const o = { ...it };
    if ('x' in o) o.x += dx;
    if ('y' in o) o.y += dy;
    if ('x1' in o) {
      o.x1 += dx;
      o.x2 += dx;
      o.y1 += dy;
      o.y2 += dy;
    }
    return o;
  });
}

function exportSVGMarkup(s) {
  const L = computeLayout(s);
  const col = colorizer(s);
  const sc = exportScene(s, L, col);
  const defs = [
    '<pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="5" height="5" fill="#e5e7eb"/><line x1="0" y1="0" x2="0" y2="5" stroke="#9ca3af" stroke-width="1.5"/></pattern>',
  ];
  let body = itemsMarkup(sc.head, defs);
  body += `<g transform="translate(0,${sc.oy})">`;
  body += itemsMarkup(decorations(s, L), defs);
  const w = r2(L.cell - L.gap);
  let cells = '';
  let nums = '';
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < s.cols; c++) {
      const v = s.data[r * s.cols + c];
      const fill = Number.isFinite(v) ? col.fill(v) : 'url(#hatch)';
      cells += `<rect x="${r2(L.mx + c * L.cell + L.gap / 2)}" y="${r2(L.my + r * L.cell + L.gap / 2)}" width="${w}" height="${w}"${L.rx ? ` rx="${L.rx}"` : ''} fill="${fill}"/>`;
      if (s.numbersOn) {
        nums += `<text x="${r2(L.mx + (c + 0.5) * L.cell)}" y="${r2(L.my + (r + 0.5) * L.cell + L.numFont * 0.35)}" fill="${Number.isFinite(v) ? col.ink(v) : INK}">${formatFixed(v, s.digits)}</text>`;
      }
    }
  }
  body += `<g shape-rendering="${L.gap ? 'auto' : 'crispEdges'}">${cells}</g>`;
  if (nums) {
    body += `<g font-size="${L.numFont}" text-anchor="middle" font-variant-numeric="tabular-nums">${nums}</g>`;
  }
  body += itemsMarkup(highlightItems(s, L), defs);
  body += '</g>';
  body += itemsMarkup(sc.legendItems, defs);
  const label = escapeXML(`${s.title ? `${s.title}: ` : ''}heatmap, ${s.rows} x ${s.cols}`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${sc.W}" height="${sc.H}" viewBox="0 0 ${sc.W} ${sc.H}" font-family="${escapeXML(FONT_STACK)}" role="img" aria-label="${label}"><title>${label}</title><defs>${defs.join('')}</defs><rect width="100%" height="100%" fill="#ffffff"/>${body}</svg>\n`;
}

function exportCanvas(s, scale = 2) {
  const L = computeLayout(s);
  const col = colorizer(s);
  const sc = exportScene(s, L, col);
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(sc.W * scale);
  canvas.height = Math.ceil(sc.H * scale);
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, sc.W, sc.H);
  paintItems(ctx, sc.head);
  paintItems(ctx, shift(decorations(s, L), 0, sc.oy));
  paintCells(ctx, s, L, col, L.mx, L.my + sc.oy);
  paintNumbers(ctx, s, L, col, L.mx, L.my + sc.oy);
  paintItems(ctx, shift(highlightItems(s, L), 0, sc.oy));
  paintItems(ctx, sc.legendItems);
  return canvas;
}

// ------------------------------------------------------------------------------------------------
// the component

/**
 * A heatmap figure. Options (see the contract): data, rows, cols, rowLabels, colLabels, rowAxis,
 * colAxis, title, shape, scale ('unit' | 'diverging'), numbers ('auto' | true | false), digits,
 * highlightRows, exportName, cellSize. Additions: highlightLabel (text of the key for outlined
 * rows), legendLabel, maxAbs (fixed diverging range), min/max (range of a 'unit' scale, default
 * 0..1), caption (an extra sentence under the title), exportButtons (default true).
 * Returns { element, update(newData, opts?), highlight(row, col), exportSVG(), exportCanvas(), csv() }.
 */
export function heatmap(options) {
  let s = normalise({ ...options });

  const figure = htmlEl('figure', 'heatmap');
  figure.tabIndex = 0;
  const captionId = uniqueId('hm-cap');
  const helpId = uniqueId('hm-help');
  figure.setAttribute('aria-labelledby', captionId);
  figure.setAttribute('aria-describedby', helpId);

  const caption = htmlEl('figcaption', 'heatmap-caption', { id: captionId });
  const titleEl = htmlEl('span', 'heatmap-title');
  const shapeEl = htmlEl('span', 'heatmap-shape');
  const axesEl = htmlEl('span', 'heatmap-axes');
  const noteEl = htmlEl('span', 'heatmap-note');
  caption.append(titleEl, shapeEl, axesEl, noteEl);

  const help = htmlEl('span', 'visually-hidden', { id: helpId });
  help.textContent =
    'Use the arrow keys to move between cells (Home and End: first and last column; Page Up and Page Down: first and last row; Escape: clear). The value of the active cell is read out below the figure.';

  const plot = htmlEl('div', 'heatmap-plot');
  // a zero-height box as wide as the plot may be: observed for fitting the cells (its height never
  // changes, so re-rendering inside the observer cannot loop)
  const sizer = htmlEl('div', 'heatmap-sizer', { 'aria-hidden': 'true' });
  const tooltip = htmlEl('div', 'heatmap-tooltip', { 'aria-hidden': 'true' });
  tooltip.hidden = true;
  const ttHead = htmlEl('div', 'tt-head');
  const ttValue = htmlEl('div', 'tt-value');
  const ttPos = htmlEl('div', 'tt-pos');
  tooltip.append(ttHead, ttValue, ttPos);

  const side = htmlEl('div', 'heatmap-side');
  const keyEl = htmlEl('p', 'heatmap-key');

  const footer = htmlEl('div', 'heatmap-footer');
  const readout = htmlEl('p', 'heatmap-readout', { 'aria-live': 'polite' });
  const tools = htmlEl('div', 'heatmap-export', { role: 'group' });
  const buttons = {};
  for (const kind of ['PNG', 'SVG', 'CSV']) {
    const b = htmlEl('button', 'btn btn-small', { type: 'button' });
    b.dataset.export = kind.toLowerCase();
    b.textContent = kind;
    buttons[kind] = b;
    tools.append(b);
  }
  footer.append(readout, tools);
  figure.append(caption, help, sizer, plot, side, footer);

  // live SVG state
  let svg = null;
  let L = null;
  let col = null;
  let cellEls = [];
  let numEls = [];
  let canvas = null;
  let smallCanvas = null;
  let keyed = new Map();
  let overlay = null;
  let legendObj = null;
  let structureKey = '';

  let avail = Infinity; // the width of the plot box, once it is in the document
  let hover = null; // { r, c } with r or c = -1 for a whole column / row
  let active = null; // keyboard / programmatic cell
  let focused = false;

  function noun(which) {
    return axisNoun(which === 'row' ? s.rowAxis : s.colAxis);
  }
  function nameOf(which, i) {
    const labels = which === 'row' ? s.rowLabels : s.colLabels;
    return labels[i] !== null ? `${noun(which)} ‘${labels[i]}’` : `${noun(which)} ${i}`;
  }
  function readoutValue(v) {
    if (!Number.isFinite(v)) return v === -Infinity ? `${MINUS}∞ (masked)` : formatFixed(v);
    if (s.scale === 'unit') return formatFixed(v, Math.max(4, s.digits));
    const a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e5)
      ? formatTick(v, 4)
      : formatFixed(v, Math.max(4, s.digits));
  }
  function fullValue(v) {
    if (!Number.isFinite(v)) return formatFixed(v);
    return String(v).replace('-', MINUS);
  }

  function updateCaption() {
    titleEl.textContent = s.title ? String(s.title) : '';
    titleEl.hidden = !s.title;
    shapeEl.textContent = s.shape ? String(s.shape) : `(${s.rows}, ${s.cols})`;
    axesEl.textContent = `${s.rowAxis} → ${s.colAxis}`;
    noteEl.textContent = s.caption ? String(s.caption) : '';
    noteEl.hidden = !s.caption;
    const base = safeFilename(s.exportName ?? s.title ?? 'heatmap', 'heatmap');
    const what = s.title ? String(s.title) : 'heatmap';
    buttons.PNG.setAttribute('aria-label', `PNG: download ${what} as an image`);
    buttons.SVG.setAttribute('aria-label', `SVG: download ${what} as a vector image`);
    buttons.CSV.setAttribute(
      'aria-label',
      `CSV: download the ${s.rows}×${s.cols} values of ${what}`,
    );
    tools.setAttribute('aria-label', `Export ${what}`);
    tools.hidden = s.exportButtons === false;
    figure.dataset.exportName = base;
  }

  function svgLabel() {
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
    return `Heatmap of ${s.rows} rows (${s.rowAxis}) by ${s.cols} columns (${s.colAxis})${range}`;
  }

  function buildSVG() {
    L = computeLayout(s);
    col = colorizer(s);
    // the plot box asks for the preferred size (so the figure's width never depends on how much
    // the cells were shrunk) and shrinks with its container; cells are then fitted to it
    const Lp = s.cell === s.cellPref ? L : computeLayout({ ...s, cell: s.cellPref });
    plot.style.width = `${Lp.W}px`;
    plot.style.maxWidth = '100%';
    sizer.style.width = `${Lp.W}px`;
    sizer.style.maxWidth = '100%';
    const el = svgEl('svg', {
      class: 'heatmap-svg',
      viewBox: `0 0 ${L.W} ${L.H}`,
      width: L.W,
      height: L.H,
      role: 'img',
      'font-family': FONT_STACK,
    });
    el.setAttribute('aria-label', svgLabel());
    const defs = svgEl('defs');
    const hatchId = uniqueId('hm-hatch');
    const pat = svgEl('pattern', {
      id: hatchId,
      width: 5,
      height: 5,
      patternUnits: 'userSpaceOnUse',
      patternTransform: 'rotate(45)',
    });
    pat.append(svgEl('rect', { width: 5, height: 5, fill: HATCH_BG }));
    pat.append(
      svgEl('line', { x1: 0, y1: 0, x2: 0, y2: 5, stroke: HATCH_INK, 'stroke-width': 1.5 }),
    );
    defs.append(pat);
    el.append(defs);
    el.dataset.hatch = hatchId;

    keyed = drawItemsDOM(decorations(s, L), el);

    const n = s.rows * s.cols;
    cellEls = [];
    numEls = [];
    canvas = null;
    if (n <= s.svgCellLimit) {
      const g = svgEl('g', { class: 'cells' });
      if (!L.gap) g.setAttribute('shape-rendering', 'crispEdges');
      const w = r2(L.cell - L.gap);
      const proto = svgEl('rect', { width: w, height: w, class: 'cell' });
      if (L.rx) proto.setAttribute('rx', L.rx);
      const frag = document.createDocumentFragment();
      // without gaps, cells overlap by a hair so no seams show when the SVG is scaled
      const over = L.gap ? 0 : 0.3;
      if (over) {
        proto.setAttribute('width', r2(w + over));
        proto.setAttribute('height', r2(w + over));
      }
      for (let r = 0; r < s.rows; r++) {
        const y = r2(L.my + r * L.cell + L.gap / 2);
        for (let c = 0; c < s.cols; c++) {
          const rect = proto.cloneNode(false);
          rect.setAttribute('x', r2(L.mx + c * L.cell + L.gap / 2));
          rect.setAttribute('y', y);
          frag.append(rect);
          cellEls.push(rect);
        }
      }
      g.append(frag);
      el.append(g);
      if (s.numbersOn) {
        const ng = svgEl('g', {
          class: 'cell-numbers',
          'text-anchor': 'middle',
          'font-size': L.numFont,
          'aria-hidden': 'true',
        });
        const nfrag = document.createDocumentFragment();
        for (let r = 0; r < s.rows; r++) {
          const y = r2(L.my + (r + 0.5) * L.cell + L.numFont * 0.35);
          for (let c = 0; c < s.cols; c++) {
            const t = svgEl('text', { x: r2(L.mx + (c + 0.5) * L.cell), y });
            nfrag.append(t);
            numEls.push(t);
          }
        }
        ng.append(nfrag);
        el.append(ng);
      }
    } else {
      // many cells: one canvas inside the SVG (scales with it); labels and overlays stay vector.
      // Thousands of SVG nodes cost tens of ms per style pass; a canvas repaints in ~1 ms.
      const fo = svgEl('foreignObject', {
        x: L.mx,
        y: L.my,
        width: L.mw,
        height: L.mh,
        class: 'cells-canvas',
      });
      canvas = document.createElement('canvas');
      const dpr = Math.min(3, Math.max(1, globalThis.devicePixelRatio || 1));
      const k = Math.max(1, Math.round(L.cell * dpr));
      canvas.width = s.cols * k;
      canvas.height = s.rows * k;
      canvas.style.width = '100%';
      canvas.style.height = '100%';
      canvas.style.display = 'block';
      canvas.setAttribute('aria-hidden', 'true');
      canvas.dataset.k = String(k);
      fo.append(canvas);
      el.append(fo);
    }
    figure.dataset.renderer = canvas ? 'canvas' : 'svg';

    drawItemsDOM(highlightItems(s, L), el);

    // hover overlay: dims the complement of the active row+column, then outlines
    overlay = svgEl('g', {
      class: 'hover-overlay',
      'pointer-events': 'none',
      visibility: 'hidden',
    });
    const dims = [];
    for (let i = 0; i < 4; i++) {
      const d = svgEl('rect', {
        fill: '#ffffff',
        'fill-opacity': '0.55',
        x: 0,
        y: 0,
        width: 0,
        height: 0,
      });
      dims.push(d);
      overlay.append(d);
    }
    const band = svgEl('rect', {
      fill: 'none',
      stroke: INK,
      'stroke-width': 1,
      'stroke-opacity': 0.55,
      x: 0,
      y: 0,
      width: 0,
      height: 0,
    });
    const halo = svgEl('rect', {
      fill: 'none',
      stroke: '#ffffff',
      'stroke-width': 4.5,
      x: 0,
      y: 0,
      width: 0,
      height: 0,
    });
    const ring = svgEl('rect', {
      fill: 'none',
      stroke: '#111111',
      'stroke-width': 2,
      x: 0,
      y: 0,
      width: 0,
      height: 0,
    });
    overlay.append(band, halo, ring);
    el.append(overlay);
    overlay.parts = { dims, band, halo, ring };

    if (svg) svg.replaceWith(el);
    else plot.append(el, tooltip);
    svg = el;
    paint();
  }

  /** Colours and numbers of every cell (the fast path of update()). */
  function paint() {
    const n = s.rows * s.cols;
    const data = s.data;
    if (canvas) {
      const k = Number(canvas.dataset.k);
      if (!smallCanvas) smallCanvas = document.createElement('canvas');
      paintCellsFast(canvas, smallCanvas, s, L, col, k);
      if (s.numbersOn) {
        const ctx = canvas.getContext('2d');
        ctx.setTransform(k / L.cell, 0, 0, k / L.cell, 0, 0);
        paintNumbers(ctx, s, L, col, 0, 0);
      }
      return;
    }
    const hatch = `url(#${svg.dataset.hatch})`;
    for (let i = 0; i < n; i++) {
      const v = data[i];
      cellEls[i].setAttribute('fill', Number.isFinite(v) ? col.fill(v) : hatch);
    }
    if (numEls.length) {
      for (let i = 0; i < n; i++) {
        const v = data[i];
        const t = numEls[i];
        t.textContent = formatFixed(v, s.digits);
        t.setAttribute('fill', Number.isFinite(v) ? col.ink(v) : INK);
      }
    }
  }

  function updateSide() {
    const k = s.scale === 'diverging' ? 'diverging' : 'unit';
    const [lo, hi] = [col.lo, col.hi];
    const key = `${k}|${lo}|${hi}|${legendText(s)}`;
    if (!legendObj || legendObj.key !== key) {
      const lg = createLegend({ kind: k, min: lo, max: hi, label: legendText(s) });
      lg.key = key;
      if (legendObj) legendObj.element.replaceWith(lg.element);
      else side.append(lg.element);
      legendObj = lg;
    }
    if (s.highlightRows.length) {
      keyEl.textContent = highlightKeyText(s);
      if (!keyEl.isConnected) side.append(keyEl);
    } else if (keyEl.isConnected) {
      keyEl.remove();
    }
  }

  function structure() {
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
    ]);
  }

  function render(full) {
    s = fitted(s, avail);
    updateCaption();
    const key = structure();
    if (full || key !== structureKey || !svg) {
      buildSVG();
      structureKey = key;
    } else {
      col = colorizer(s);
      // the width of the numbers may change (e.g. a minus sign appears)
      if (numEls.length) {
        const L2 = computeLayout(s);
        if (L2.numFont !== L.numFont) {
          buildSVG();
        } else {
          paint();
        }
      } else {
        paint();
      }
      svg.setAttribute('aria-label', svgLabel());
    }
    updateSide();
    if (hover && (hover.r >= s.rows || hover.c >= s.cols)) hover = null;
    if (active && (active.r >= s.rows || active.c >= s.cols)) active = null;
    show();
  }

  // ---------------------------------------------------------------------------------------------
  // highlight display

  function setRect(el, x, y, w, h) {
    el.setAttribute('x', r2(x));
    el.setAttribute('y', r2(y));
    el.setAttribute('width', r2(Math.max(0, w)));
    el.setAttribute('height', r2(Math.max(0, h)));
  }

  let shownLabels = [];
  function setLabelActive(keys) {
    for (const el of shownLabels) el.classList.remove('is-active');
    shownLabels = [];
    for (const k of keys) {
      const el = keyed.get(k);
      if (el) {
        el.classList.add('is-active');
        shownLabels.push(el);
      }
    }
  }

  function idleText() {
    return 'Hover a cell, or focus the figure and use the arrow keys.';
  }

  function current() {
    if (hover) return hover;
    if (active && (focused || active.pinned)) return active;
    return null;
  }

  function show() {
    if (!overlay) return;
    const cur = current();
    const { dims, band, halo, ring } = overlay.parts;
    if (!cur) {
      overlay.setAttribute('visibility', 'hidden');
      svg.classList.remove('is-hovering');
      setLabelActive([]);
      tooltip.hidden = true;
      if (legendObj) legendObj.mark(null);
      readout.textContent = idleText();
      readout.classList.remove('is-active');
      return;
    }
    const { r, c } = cur;
    const { mx, my, mw, mh, cell } = L;
    const y0 = my + r * cell;
    const x0 = mx + c * cell;
    overlay.setAttribute('visibility', 'visible');
    svg.classList.add('is-hovering');
    if (r >= 0 && c >= 0) {
      // a cell: dim the four corners outside its row and column
      setRect(dims[0], mx, my, c * cell, r * cell);
      setRect(dims[1], x0 + cell, my, mw - (c + 1) * cell, r * cell);
      setRect(dims[2], mx, y0 + cell, c * cell, mh - (r + 1) * cell);
      setRect(dims[3], x0 + cell, y0 + cell, mw - (c + 1) * cell, mh - (r + 1) * cell);
      setRect(band, mx, y0, mw, cell);
      setRect(halo, x0, y0, cell, cell);
      setRect(ring, x0, y0, cell, cell);
      band.setAttribute('visibility', 'visible');
      halo.setAttribute('visibility', 'visible');
      ring.setAttribute('visibility', 'visible');
      setLabelActive([`row-${r}`, `col-${c}`]);
      const v = s.data[r * s.cols + c];
      readout.textContent = `${nameOf('row', r)} → ${nameOf('col', c)}: ${readoutValue(v)}`;
      readout.classList.add('is-active');
      if (legendObj) legendObj.mark(Number.isFinite(v) ? v : null);
      showTooltip(r, c, v);
    } else if (r >= 0) {
      setRect(dims[0], mx, my, mw, r * cell);
      setRect(dims[1], mx, y0 + cell, mw, mh - (r + 1) * cell);
      setRect(dims[2], 0, 0, 0, 0);
      setRect(dims[3], 0, 0, 0, 0);
      setRect(ring, mx, y0, mw, cell);
      setRect(halo, mx, y0, mw, cell);
      band.setAttribute('visibility', 'hidden');
      setLabelActive([`row-${r}`]);
      readout.textContent = `${nameOf('row', r)} (row ${r}): ${summary(r, -1)}`;
      readout.classList.add('is-active');
      if (legendObj) legendObj.mark(null);
      tooltip.hidden = true;
    } else {
      setRect(dims[0], mx, my, c * cell, mh);
      setRect(dims[1], x0 + cell, my, mw - (c + 1) * cell, mh);
      setRect(dims[2], 0, 0, 0, 0);
      setRect(dims[3], 0, 0, 0, 0);
      setRect(ring, x0, my, cell, mh);
      setRect(halo, x0, my, cell, mh);
      band.setAttribute('visibility', 'hidden');
      setLabelActive([`col-${c}`]);
      readout.textContent = `${nameOf('col', c)} (column ${c}): ${summary(-1, c)}`;
      readout.classList.add('is-active');
      if (legendObj) legendObj.mark(null);
      tooltip.hidden = true;
    }
  }

  function summary(r, c) {
    const vals = [];
    if (r >= 0) for (let j = 0; j < s.cols; j++) vals.push(s.data[r * s.cols + j]);
    else for (let i = 0; i < s.rows; i++) vals.push(s.data[i * s.cols + c]);
    let sum = 0;
    let best = -1;
    for (let i = 0; i < vals.length; i++) {
      if (Number.isFinite(vals[i])) {
        sum += vals[i];
        if (best < 0 || vals[i] > vals[best]) best = i;
      }
    }
    if (best < 0) return 'no finite values';
    const where = r >= 0 ? nameOf('col', best) : nameOf('row', best);
    return `sum ${readoutValue(sum)}, largest ${readoutValue(vals[best])} at ${where}`;
  }

  function showTooltip(r, c, v) {
    ttHead.textContent = `${nameOf('row', r)} → ${nameOf('col', c)}`;
    ttValue.textContent = fullValue(v);
    ttPos.textContent = `row ${r}, column ${c}`;
    tooltip.hidden = false;
    const rect = svg.getBoundingClientRect();
    const prect = plot.getBoundingClientRect();
    const k = rect.width / L.W || 1;
    const ox = rect.left - prect.left;
    const oy = rect.top - prect.top;
    const cellRight = ox + (L.mx + (c + 1) * L.cell) * k;
    const cellLeft = ox + (L.mx + c * L.cell) * k;
    const top = oy + (L.my + r * L.cell) * k;
    const tw = tooltip.offsetWidth;
    const th = tooltip.offsetHeight;
    // right of the cell if the viewport has room (it may float past the figure), else left of it
    const room = (document.documentElement.clientWidth || prect.right) - prect.left - 6;
    let left = cellRight + 8;
    if (left + tw > room && cellLeft - 8 - tw >= -prect.left) left = cellLeft - 8 - tw;
    left = Math.max(-prect.left + 4, Math.min(left, room - tw));
    let y = top - th - 6;
    if (y < 0) y = top + L.cell * k + 6;
    tooltip.style.left = `${Math.round(left)}px`;
    tooltip.style.top = `${Math.round(y)}px`;
  }

  // ---------------------------------------------------------------------------------------------
  // events (delegated: a few listeners on the figure for every cell, label and button)

  function hitTest(clientX, clientY) {
    if (!svg) return null;
    const rect = svg.getBoundingClientRect();
    if (!rect.width) return null;
    const k = L.W / rect.width;
    const x = (clientX - rect.left) * k;
    const y = (clientY - rect.top) * k;
    const { mx, my, mw, mh, cell } = L;
    if (x >= mx && x < mx + mw && y >= my && y < my + mh) {
      return { r: Math.floor((y - my) / cell), c: Math.floor((x - mx) / cell) };
    }
    if (x < mx && x >= L.pad && y >= my && y < my + mh) {
      return { r: Math.floor((y - my) / cell), c: -1 };
    }
    if (y < my && y > L.titleY + 4) {
      const rise = L.colLabelY - y;
      const c = Math.floor((x - rise - mx + L.colFont * 0.25) / cell);
      if (c >= 0 && c < s.cols && rise <= (L.colW[c] ?? 0) * COS45 + L.colFont) return { r: -1, c };
    }
    return null;
  }

  function same(a, b) {
    return a === b || (a && b && a.r === b.r && a.c === b.c);
  }

  figure.addEventListener('pointermove', (e) => {
    if (e.target.closest && e.target.closest('.heatmap-export, .heatmap-side, .heatmap-footer')) {
      if (hover) {
        hover = null;
        show();
      }
      return;
    }
    const h = hitTest(e.clientX, e.clientY);
    if (!same(h, hover)) {
      hover = h;
      show();
    }
  });
  figure.addEventListener('pointerleave', () => {
    if (hover) {
      hover = null;
      show();
    }
  });
  figure.addEventListener('click', (e) => {
    const b = e.target.closest && e.target.closest('button[data-export]');
    if (b) {
      doExport(b.dataset.export);
      return;
    }
    const h = hitTest(e.clientX, e.clientY);
    if (h && h.r >= 0 && h.c >= 0) {
      active = { r: h.r, c: h.c };
      show();
    }
  });
  figure.addEventListener('focus', (e) => {
    if (e.target !== figure) return;
    focused = true;
    if (!active) active = { r: 0, c: 0 };
    show();
  });
  figure.addEventListener('blur', (e) => {
    if (e.target !== figure) return;
    focused = false;
    if (active) active.pinned = false;
    show();
  });
  figure.addEventListener('keydown', (e) => {
    if (e.target !== figure || e.altKey || e.metaKey) return;
    const a = active ?? { r: 0, c: 0 };
    let { r, c } = a;
    const rowMode = r >= 0 && c < 0;
    if (r < 0) r = 0;
    if (c < 0) c = 0;
    switch (e.key) {
      case 'ArrowUp':
        r -= 1;
        break;
      case 'ArrowDown':
        r += 1;
        break;
      case 'ArrowLeft':
        c -= 1;
        break;
      case 'ArrowRight':
        c += 1;
        break;
      case 'Home':
        c = 0;
        if (e.ctrlKey) r = 0;
        break;
      case 'End':
        c = s.cols - 1;
        if (e.ctrlKey) r = s.rows - 1;
        break;
      case 'PageUp':
        r = 0;
        break;
      case 'PageDown':
        r = s.rows - 1;
        break;
      case 'Escape':
        if (active) {
          active = null;
          hover = null;
          show();
          e.preventDefault();
        }
        return;
      default:
        return;
    }
    e.preventDefault();
    void rowMode;
    active = { r: Math.max(0, Math.min(s.rows - 1, r)), c: Math.max(0, Math.min(s.cols - 1, c)) };
    hover = null; // the keyboard takes over from a stale mouse position
    show();
  });

  // fit the cells to the width available (one observer per heatmap)
  if (typeof ResizeObserver === 'function') {
    const ro = new ResizeObserver((entries) => {
      const w = entries[entries.length - 1].contentRect.width;
      if (!(w > 0) || Math.abs(w - avail) < 0.5) return;
      avail = w;
      const f = fitted(s, avail);
      if (f.cell !== s.cell || f.numbersOn !== s.numbersOn) render(false);
    });
    ro.observe(sizer);
  }

  function doExport(kind) {
    const base = figure.dataset.exportName || 'heatmap';
    if (kind === 'csv') {
      const corner = `${axisNoun(s.rowAxis)} \\ ${axisNoun(s.colAxis)}`;
      downloadText(
        `${base}.csv`,
        matrixCSV(
          s.data,
          s.rows,
          s.cols,
          labelsOrIndex(s.rowLabels),
          labelsOrIndex(s.colLabels),
          corner,
        ),
        'text/csv;charset=utf-8',
      );
    } else if (kind === 'svg') {
      downloadSVG(`${base}.svg`, exportSVGMarkup(fitted(s, Infinity)));
    } else if (kind === 'png') {
      downloadPNG(`${base}.png`, exportCanvas(fitted(s, Infinity))).catch((err) => {
        readout.textContent = `PNG export failed: ${err.message}`;
      });
    }
  }

  function labelsOrIndex(labels) {
    return labels.map((l, i) => (l === null ? String(i) : l));
  }

  render(true);

  return {
    element: figure,
    /** Re-render with new data (same or different size); opts may change any option. */
    update(newData, opts = {}) {
      const next = { ...s, ...opts };
      if (newData !== undefined && newData !== null) next.data = newData;
      if (opts.rows !== undefined || opts.cols !== undefined) {
        // a new size: labels of the old size would not fit
        if (opts.rowLabels === undefined && next.rows !== s.rows) next.rowLabels = undefined;
        if (opts.colLabels === undefined && next.cols !== s.cols) next.colLabels = undefined;
        if (opts.highlightRows === undefined) {
          next.highlightRows = s.highlightRows.filter((r) => r < next.rows);
        }
        if (opts.shape === undefined && (next.rows !== s.rows || next.cols !== s.cols)) {
          next.shape = undefined;
        }
      }
      if (opts.numbers === undefined) next.numbers = options.numbers ?? s.numbers;
      if (opts.cellSize === undefined && (next.rows !== s.rows || next.cols !== s.cols)) {
        next.cellSize = options.cellSize;
      }
      s = normalise(next);
      render(false);
    },
    /** Highlight cell (row, col); row only (col = null/-1): the row; col only: the column; none: clear. */
    highlight(row, column) {
      const r = Number.isInteger(row) && row >= 0 && row < s.rows ? row : -1;
      const c = Number.isInteger(column) && column >= 0 && column < s.cols ? column : -1;
      active = r < 0 && c < 0 ? null : { r, c, pinned: true };
      show();
    },
    /** Standalone SVG markup of the figure (title, matrix, legend), as the SVG button saves it. */
    exportSVG() {
      return exportSVGMarkup(fitted(s, Infinity));
    },
    /** A canvas with the figure drawn at `scale` x (what the PNG button saves). */
    exportCanvas(scale = 2) {
      return exportCanvas(fitted(s, Infinity), scale);
    },
    /** The CSV text the CSV button saves. */
    csv() {
      return matrixCSV(
        s.data,
        s.rows,
        s.cols,
        labelsOrIndex(s.rowLabels),
        labelsOrIndex(s.colLabels),
        `${axisNoun(s.rowAxis)} \\ ${axisNoun(s.colAxis)}`,
      );
    },
  };
}
