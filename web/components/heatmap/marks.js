// marks.js - the heatmap's optional marks, each off unless its option is given (every other
// figure is drawn as before):
//   markNonFinite  NaN cells cross-hatched on dark grey, apart from the ±∞ ones (light grey,
//                  hatched one way); the readout says NaN, ∞ or −∞ (never "masked")
//   blank          a 0/1 flag per cell: cells drawn empty ("—"), said as blankText
//   colGroups      a line between blocks of that many columns (the head blocks of a (T, C) matrix)
//   markCells      [[row, col], …]: each cell ringed (white halo, black ring: no colour needed),
//                  said as markLabel in the key and, cell by cell, in the accessible name
// The key of the marks goes beside the legend, and their counts into the figure's accessible name.

import { el, svgEl } from '../dom.js';
import { uniqueId } from '../scales.js';
import { INK } from './theme.js';

// NaN: light lines both ways on dark grey (the ±∞ hatch is dark lines one way on light grey); its
// number in white (NAN_INK)
export const NAN_BG = '#4b5563';
export const NAN_LINE = '#9ca3af';
export const NAN_INK = '#ffffff';

/** The kind of mark of cell i: 'blank', 'nan' (markNonFinite), 'hatch' (±∞; any non-finite
 * value without markNonFinite), or null (a colour). */
export function cellMark(s, i) {
  if (s.blank && s.blank[i]) return 'blank';
  const v = s.data[i];
  if (Number.isFinite(v)) return null;
  return s.markNonFinite && Number.isNaN(v) ? 'nan' : 'hatch';
}

/** The ink of a number in a non-finite cell: light on the dark NaN mark, else INK. */
export const markInk = (s, v) => (s.markNonFinite && Number.isNaN(v) ? NAN_INK : INK);

/** How many cells of the matrix are NaN, +∞, −∞ and blank. */
export function markCounts(s) {
  const n = { nan: 0, posInf: 0, negInf: 0, blank: 0 };
  const size = s.rows * s.cols;
  for (let i = 0; i < size; i++) {
    const kind = cellMark(s, i);
    if (kind === 'blank') n.blank += 1;
    else if (Number.isNaN(s.data[i])) n.nan += 1;
    else if (kind === 'hatch') n[s.data[i] > 0 ? 'posInf' : 'negInf'] += 1;
  }
  return n;
}

const cells = (k) => `${k} ${k === 1 ? 'cell' : 'cells'}`;

/** The ringed cells of s (markCells) that are in the matrix: [[row, col], …]. */
export function ringedCells(s) {
  const ok = (v, n) => Number.isInteger(v) && v >= 0 && v < n;
  return Array.from(s.markCells ?? []).filter((rc) => ok(rc?.[0], s.rows) && ok(rc?.[1], s.cols));
}

/** "row 0 ‘The’ → column 3 ‘cat’" for a ringed cell. */
function ringedText(s, [r, c]) {
  const label = (labels, i) => (labels?.[i] != null ? ` ‘${labels[i]}’` : '');
  return `row ${r}${label(s.rowLabels, r)} → column ${c}${label(s.colLabels, c)}`;
}

/** The key's entry for the ringed cells, or null (no markCells). */
function ringEntry(s) {
  const rings = ringedCells(s);
  if (!rings.length) return null;
  const what = s.markLabel ?? 'marked cells';
  return { kind: 'ring', text: `ringed: ${what}`, cells: rings.map((rc) => ringedText(s, rc)) };
}

/** The key's entries for the marks present: [{ kind, text }] (none without marks asked for). */
function keyEntries(s) {
  const ring = ringEntry(s);
  if (!s.markNonFinite) return ring ? [ring] : [];
  const n = markCounts(s);
  const out = ring ? [ring] : [];
  if (n.nan) out.push({ kind: 'nan', text: `NaN: ${cells(n.nan)}` });
  const inf = [];
  if (n.posInf) inf.push(`∞: ${cells(n.posInf)}`);
  if (n.negInf) inf.push(`−∞: ${cells(n.negInf)}`);
  if (inf.length) out.push({ kind: 'inf', text: inf.join(', ') });
  if (n.blank) out.push({ kind: 'blank', text: `— ${s.blankText ?? 'empty'}: ${cells(n.blank)}` });
  return out;
}

/**
 * "; marked: NaN: 2 cells; ∞: 1 cell" for the accessible name ('' without marks); ringed cells
 * are listed: "; marked: ringed: argmax of each row (row 0 ‘The’ → column 3 ‘cat’, …)".
 */
export function marksLabel(s) {
  const entries = keyEntries(s);
  const text = (e) => (e.cells ? `${e.text} (${e.cells.join(', ')})` : e.text);
  return entries.length ? `; marked: ${entries.map(text).join('; ')}` : '';
}

/** The key's lines as text (the exports print them under the legend). */
export function marksKeyLines(s) {
  const name = { nan: 'cross-hatched dark', inf: 'hatched light', blank: 'empty', ring: '○' };
  return keyEntries(s).map((e) => `${name[e.kind]}: ${e.text}`);
}

/** The key beside the legend: a list with a swatch per mark present (state.dom.side). */
export function updateMarksKey(state) {
  const entries = keyEntries(state.s);
  const key = JSON.stringify(entries);
  if (state.marksKey?.key === key) return;
  state.marksKey?.element.remove();
  state.marksKey = null;
  if (!entries.length) return;
  const items = entries.map((e) =>
    el(
      'li',
      { dataset: { mark: e.kind } },
      el('span', { className: `mark-swatch mark-${e.kind}`, attrs: { 'aria-hidden': 'true' } }),
      el('span', { text: e.text }),
    ),
  );
  const element = el('ul', { className: 'heatmap-marks', attrs: { 'aria-label': 'marked cells' } });
  element.append(...items);
  state.dom.side.append(element);
  state.marksKey = { key, element };
}

/** The NaN pattern's markup (id 'nan'), for the SVG export. */
export const NAN_PATTERN =
  '<pattern id="nan" width="6" height="6" patternUnits="userSpaceOnUse">' +
  `<rect width="6" height="6" fill="${NAN_BG}"/>` +
  `<path d="M0 0L6 6M6 0L0 6" stroke="${NAN_LINE}" stroke-width="1"/></pattern>`;

/**
 * Add the NaN pattern to the <svg>'s <defs> (markNonFinite only: no id is drawn otherwise, so the
 * page's other ids stay as they were); its id to svg.dataset.nan.
 */
export function nanDefs(svg, s) {
  if (!s.markNonFinite) return;
  const id = uniqueId('hm-nan');
  const pat = svgEl('pattern', { id, width: 6, height: 6, patternUnits: 'userSpaceOnUse' });
  pat.append(svgEl('rect', { width: 6, height: 6, fill: NAN_BG }));
  pat.append(svgEl('path', { d: 'M0 0L6 6M6 0L0 6', stroke: NAN_LINE, 'stroke-width': 1 }));
  svg.querySelector('defs').append(pat);
  svg.dataset.nan = id;
}

/**
 * A cell (x, y, w × h) on a canvas: `bg`, crossed by 1 px lines of `ink` `step` px apart, rising
 * to the right (and falling too when `both`): the ±∞ hatch and the NaN cross-hatch.
 */
export function linedCell(ctx, [x, y, w, h], { bg, ink, step, both = false }) {
  ctx.fillStyle = bg;
  ctx.fillRect(x, y, w, h);
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  ctx.strokeStyle = ink;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let d = -h; d < w + (both ? h : 0); d += step) {
    ctx.moveTo(x + d, y + h);
    ctx.lineTo(x + d + h, y);
    if (both) {
      ctx.moveTo(x + d, y);
      ctx.lineTo(x + d + h, y + h);
    }
  }
  ctx.stroke();
  ctx.restore();
}

/** A NaN cell on a canvas: dark grey crossed both ways by light lines. */
export function nanCell(ctx, x, y, w, h) {
  linedCell(ctx, [x, y, w, h], { bg: NAN_BG, ink: NAN_LINE, step: 6, both: true });
}

/**
 * The lines between column groups (colGroups columns each) as primitives: thin dark bars across
 * the matrix, 4 px past its top and bottom edges (visible over dark cells too).
 */
export function groupItems(s, L) {
  const g = s.colGroups;
  if (!(Number.isInteger(g) && g > 0 && g < s.cols)) return [];
  const items = [];
  for (let c = g; c < s.cols; c += g) {
    const x = L.mx + c * L.cell - 0.75;
    const bar = { type: 'rect', x, y: L.my - 4, w: 1.5, h: L.mh + 8, fill: INK };
    items.push({ ...bar, cls: 'col-group-line' });
  }
  return items;
}

/** " in blocks of 16 columns (4 heads)" for the accessible name ('' without colGroups). */
export function groupsLabel(s) {
  const g = s.colGroups;
  if (!(Number.isInteger(g) && g > 0 && g < s.cols)) return '';
  const what = s.colGroupLabel ?? 'group';
  const n = Math.ceil(s.cols / g);
  return `, lines between ${n} blocks of ${g} columns (one ${what} each)`;
}

/**
 * The ringed cells (markCells) as primitives: a white halo and a black ring inside each cell's
 * edge, so the mark shows on light and dark cells alike and needs no colour.
 */
export function ringItems(s, L) {
  const items = [];
  for (const [r, c] of ringedCells(s)) {
    const x = L.mx + c * L.cell + 2;
    const y = L.my + r * L.cellH + 2;
    const box = { type: 'rect', x, y, w: L.cell - 4, h: L.cellH - 4, fill: 'none' };
    items.push({ ...box, stroke: '#ffffff', sw: 3.5, cls: 'ring-halo' });
    items.push({ ...box, stroke: INK, sw: 1.75, cls: 'ring-cell' });
  }
  return items;
}
