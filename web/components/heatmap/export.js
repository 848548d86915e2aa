// export.js - the heatmap's PNG, SVG, CSV and NPY buttons and what they save: the figure (title,
// shape, plot, legend, key of the outlined rows) at its preferred cell size as SVG markup or on a
// canvas, and the matrix as CSV at full precision or as a NumPy .npy file (float64, shape (rows,
// cols), np.load reads it). The downloads themselves are ../export.js's.

import { el } from '../dom.js';
import {
  FONT_STACK,
  downloadBytes,
  downloadPNG,
  downloadSVG,
  downloadText,
  matrixCSV,
} from '../export.js';
import { writeNpy } from '../../io/npy.js'; // (the codec alone: not the check)
import { axisItems, axisNoun } from './axes.js';
import {
  cellsMarkup,
  colorizer,
  nanPatternMarkup,
  paintCellsCanvas,
  paintNumbers,
} from './cells.js';
import { highlightItems } from './highlight.js';
import { computeLayout, fitted } from './layout.js';
import { exportLegendLayout, highlightKeyText, legendItems } from './legend.js';
import { groupItems, marksKeyLines, ringItems } from './marks.js';
import { escapeXML, itemsMarkup, paintItems, shift } from './primitives.js';
import { HATCH_BG, HATCH_INK, INK, MUTED_INK, WHITE } from './theme.js';

const HATCH_PATTERN =
  '<pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" ' +
  `patternTransform="rotate(45)"><rect width="5" height="5" fill="${HATCH_BG}"/>` +
  `<line x1="0" y1="0" x2="0" y2="5" stroke="${HATCH_INK}" stroke-width="1.5"/></pattern>`;

/**
 * The export menu: <details class="heatmap-export"> whose summary reads "Export", holding
 * <div class="heatmap-export-menu" role="group"> with PNG, SVG, CSV, NPY (one menu a figure:
 * four buttons under every map would crowd the page, a phone's most of all).
 */
export function createExportTools() {
  const buttons = {};
  const menu = el('div', { className: 'heatmap-export-menu', attrs: { role: 'group' } });
  const tools = el(
    'details',
    { className: 'heatmap-export' },
    el('summary', { className: 'btn btn-small', text: 'Export' }),
    menu,
  );
  for (const kind of ['PNG', 'SVG', 'CSV', 'NPY']) {
    buttons[kind] = el('button', {
      className: 'btn btn-small',
      attrs: { type: 'button' },
      dataset: { export: kind.toLowerCase() },
      text: kind,
    });
    menu.append(buttons[kind]);
  }
  return { tools, menu, buttons };
}

/** The buttons' accessible names for a figure called `what`; hidden if exportButtons is false. */
export function labelExportTools(state, what) {
  const { s } = state;
  const { tools, menu, buttons } = state.dom;
  buttons.PNG.setAttribute('aria-label', `PNG: download ${what} as an image`);
  buttons.SVG.setAttribute('aria-label', `SVG: download ${what} as a vector image`);
  buttons.CSV.setAttribute('aria-label', `CSV: download the ${s.rows}×${s.cols} values of ${what}`);
  buttons.NPY.setAttribute(
    'aria-label',
    `NPY: download the ${s.rows}×${s.cols} values of ${what} for np.load (float64)`,
  );
  menu.setAttribute('aria-label', `Export ${what}`);
  tools.hidden = s.exportButtons === false;
}

/** The title and "shape (…)" lines above the plot; y: where the plot starts (0 without them). */
function headItems(s) {
  const head = [];
  let y = 22;
  if (s.title) {
    head.push({ type: 'text', x: 12, y, text: String(s.title), size: 15, weight: 700, fill: INK });
    y += 18;
  }
  if (s.shape) {
    const text = `shape ${s.shape}`;
    head.push({ type: 'text', x: 12, y, text, size: 12, fill: MUTED_INK, mono: true });
    y += 16;
  }
  return { head, oy: s.title || s.shape ? y : 0 };
}

/** The exported figure: head, plot at (0, oy), legend (and key) below; its size W x H. */
function exportScene(s, L, col, measure) {
  const { head, oy } = headItems(s);
  const lay = exportLegendLayout(s, col);
  const lx = Math.max(4, L.mx - lay.bar.x);
  const ly = oy + L.H;
  const legend = legendItems(s, lay, lx, ly);
  let W = Math.max(L.W, lx + lay.width + 8);
  let H = ly + lay.height + 8;
  const keys = [...(s.highlightRows.length ? [highlightKeyText(s)] : []), ...marksKeyLines(s)];
  for (const text of keys) {
    legend.push({ type: 'text', x: lx + 2, y: H + 8, text, size: 12, fill: INK });
    W = Math.max(W, lx + 2 + measure(text, 12) + 12);
    H += 20;
  }
  for (const it of head) {
    const w = measure(it.text, it.size, it.weight ?? 400) * (it.mono ? 1.25 : 1);
    W = Math.max(W, it.x + w + 12);
  }
  return { head, oy, legendItems: legend, W: Math.ceil(W), H: Math.ceil(H) };
}

/** A standalone SVG file of the figure (s fitted at its preferred cell size). */
export function exportSVGMarkup(s, measure) {
  const L = computeLayout(s, measure);
  const col = colorizer(s);
  const sc = exportScene(s, L, col, measure);
  const defs = [HATCH_PATTERN + nanPatternMarkup(s)];
  let body = itemsMarkup(sc.head, defs);
  body += `<g transform="translate(0,${sc.oy})">`;
  body += itemsMarkup(axisItems(s, L), defs);
  body += cellsMarkup(s, L, col);
  body += itemsMarkup(groupItems(s, L), defs);
  body += itemsMarkup(highlightItems(s, L), defs);
  body += itemsMarkup(ringItems(s, L), defs);
  body += '</g>';
  body += itemsMarkup(sc.legendItems, defs);
  const label = escapeXML(`${s.title ? `${s.title}: ` : ''}heatmap, ${s.rows} x ${s.cols}`);
  const size = `width="${sc.W}" height="${sc.H}" viewBox="0 0 ${sc.W} ${sc.H}"`;
  const svgAttrs = `${size} font-family="${escapeXML(FONT_STACK)}" role="img" aria-label="${label}"`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<svg xmlns="http://www.w3.org/2000/svg" ${svgAttrs}><title>${label}</title>` +
    `<defs>${defs.join('')}</defs><rect width="100%" height="100%" fill="${WHITE}"/>` +
    `${body}</svg>\n`
  );
}

/** The figure drawn on a new canvas at `scale` x (s fitted at its preferred cell size). */
export function exportCanvas(s, measure, scale = 2) {
  const L = computeLayout(s, measure);
  const col = colorizer(s);
  const sc = exportScene(s, L, col, measure);
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(sc.W * scale);
  canvas.height = Math.ceil(sc.H * scale);
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  ctx.fillStyle = WHITE;
  ctx.fillRect(0, 0, sc.W, sc.H);
  paintItems(ctx, sc.head);
  paintItems(ctx, shift(axisItems(s, L), 0, sc.oy));
  paintCellsCanvas(ctx, s, L, col, L.mx, L.my + sc.oy);
  paintNumbers(ctx, s, L, col, L.mx, L.my + sc.oy);
  paintItems(ctx, shift(groupItems(s, L), 0, sc.oy));
  paintItems(ctx, shift(highlightItems(s, L), 0, sc.oy));
  paintItems(ctx, shift(ringItems(s, L), 0, sc.oy));
  paintItems(ctx, sc.legendItems);
  return canvas;
}

const labelsOrIndex = (labels) => labels.map((l, i) => (l === null ? String(i) : l));

/** The matrix as CSV: labels (or indices) as header row and first column, values in full. */
export function csvText(s) {
  const corner = `${axisNoun(s.rowAxis)} \\ ${axisNoun(s.colAxis)}`;
  const rowLabels = labelsOrIndex(s.rowLabels);
  return matrixCSV(s.data, s.rows, s.cols, rowLabels, labelsOrIndex(s.colLabels), corner);
}

/** The matrix shown as the bytes of a .npy file: float64, shape (rows, cols), C order. */
export function npyBytes(s) {
  // the values the CSV and the cells show: the first rows*cols of data, row-major
  return writeNpy(Float64Array.from(s.data).subarray(0, s.rows * s.cols), [s.rows, s.cols]);
}

/** Save the figure as 'png', 'svg', 'csv' or 'npy' under the figure's export name. */
function runExport(state, kind) {
  const { figure, readout } = state.dom;
  const base = figure.dataset.exportName || 'heatmap';
  const preferred = () => fitted(state.s, Infinity, state.measure);
  if (kind === 'csv') {
    downloadText(`${base}.csv`, csvText(state.s), 'text/csv;charset=utf-8');
  } else if (kind === 'npy') {
    downloadBytes(`${base}.npy`, npyBytes(state.s));
  } else if (kind === 'svg') {
    downloadSVG(`${base}.svg`, exportSVGMarkup(preferred(), state.measure));
  } else if (kind === 'png') {
    downloadPNG(`${base}.png`, exportCanvas(preferred(), state.measure)).catch((err) => {
      readout.textContent = `PNG export failed: ${err.message}`;
    });
  }
}

/** The buttons save the figure (one listener on the figure). */
export function listenExport(state) {
  state.dom.figure.addEventListener('click', (e) => {
    const b = e.target.closest?.('button[data-export]');
    if (b) runExport(state, b.dataset.export);
  });
}
