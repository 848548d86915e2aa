// scales.js - colour scales and legends of the companion page, and the number formatting shared
// by the figures.
//
// Both scales are colour-blind safe and readable in greyscale:
//   sequentialColor(t)  t in [0, 1]  -> viridis (dark purple -> yellow); attention weights,
//                                       probabilities
//   divergingColor(t)   t in [-1, 1] -> PuOr (orange for negative, near-white at 0, purple for
//                                       positive; the orientation of matplotlib's 'PuOr'); signed
//                                       values, gradients
// Colours come from d3-scale-chromatic (bundled) through 256-entry lookup tables, so colouring a
// 64x64 matrix costs a few array reads. createLegend() draws a labelled gradient bar with ticks.
import { MINUS, svgEl } from './dom.js';

// d3-scale-chromatic builds all of its ~40 schemes when it is evaluated (5-30 ms on a busy
// machine), so it is loaded on first use: esbuild turns this require() into a lazy initialiser of
// the bundled module. The page's first render draws no heatmap, so that happens after mha:ready.
// (web/components/* is only ever used through the bundle.)
let chromatic = null;
function d3Chromatic() {
  if (!chromatic) chromatic = require('d3-scale-chromatic');
  return chromatic;
}

// entries of a colour table (make bundle samples the two ramps at as many points)
export const LUT_SIZE = 256;

function parseColor(c) {
  // d3 returns '#rrggbb' or 'rgb(r, g, b)'
  if (c[0] === '#') return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  return c
    .match(/\d+(\.\d+)?/g)
    .slice(0, 3)
    .map(Number);
}

function hex(rgb) {
  return `#${rgb.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG relative luminance of an [r, g, b] triple (0..255). */
function luminance([r, g, b]) {
  const lin = (v) => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

function contrast(l1, l2) {
  const [a, b] = l1 > l2 ? [l1, l2] : [l2, l1];
  return (a + 0.05) / (b + 0.05);
}

const INK = '#111111';
const PAPER = '#ffffff';
const INK_L = luminance([17, 17, 17]);

function buildLut(interp, reverse) {
  const colors = new Array(LUT_SIZE);
  const text = new Array(LUT_SIZE);
  const packed = new Uint32Array(LUT_SIZE);
  for (let i = 0; i < LUT_SIZE; i++) {
    const u = i / (LUT_SIZE - 1);
    const rgb = parseColor(interp(reverse ? 1 - u : u));
    colors[i] = hex(rgb);
    // RGBA bytes in memory order of a little-endian Uint32 view of ImageData
    packed[i] =
      ((255 << 24) |
        (Math.round(rgb[2]) << 16) |
        (Math.round(rgb[1]) << 8) |
        Math.round(rgb[0])) >>>
      0;
    const l = luminance(rgb);
    // whichever of near-black / white has the better contrast against this cell
    text[i] = contrast(l, INK_L) >= contrast(l, 1) ? INK : PAPER;
  }
  return { colors, text, packed };
}

// A ramp of d3-scale-chromatic as a function of u in [0, 1], read at u = i / (LUT_SIZE - 1). make
// bundle samples both ramps there, in Node, into the bundle's first lines (MHA_COLOUR_RAMPS: the
// strings d3 returns), so the browser builds none of d3's ~40 schemes; without them, d3 itself.
const D3_RAMPS = { viridis: 'interpolateViridis', puor: 'interpolatePuOr' };
function ramp(name) {
  const sampled = globalThis.MHA_COLOUR_RAMPS?.[name];
  if (sampled?.length === LUT_SIZE) return (u) => sampled[Math.round(u * (LUT_SIZE - 1))];
  return d3Chromatic()[D3_RAMPS[name]];
}

// Built on first use (not at load): the page's first render draws no heatmap, so the 2 x 256
// colour parses happen only when the first figure is drawn.
let VIRIDIS = null;
let PUOR = null;
function viridis() {
  if (!VIRIDIS) VIRIDIS = buildLut(ramp('viridis'), false);
  return VIRIDIS;
}
// d3's interpolatePuOr runs purple (0) -> orange (1); reversed so that -1 is orange, +1 is purple.
function puor() {
  if (!PUOR) PUOR = buildLut(ramp('puor'), true);
  return PUOR;
}

function unitIndex(t) {
  if (!(t > 0)) return 0; // also NaN
  if (t >= 1) return LUT_SIZE - 1;
  return Math.round(t * (LUT_SIZE - 1));
}

function signedIndex(t) {
  if (Number.isNaN(t)) return (LUT_SIZE - 1) >> 1;
  return unitIndex((t + 1) / 2);
}

/** t in [0, 1] -> CSS colour '#rrggbb' (viridis). Values outside are clamped. */
export function sequentialColor(t) {
  return (VIRIDIS ?? viridis()).colors[unitIndex(t)];
}

/** t in [-1, 1] -> CSS colour '#rrggbb' (PuOr: orange < 0, near-white at 0, purple > 0); clamped */
export function divergingColor(t) {
  return (PUOR ?? puor()).colors[signedIndex(t)];
}

/** The text colour ('#111111' or '#ffffff') with the better contrast on sequentialColor(t). */
export function sequentialTextColor(t) {
  return (VIRIDIS ?? viridis()).text[unitIndex(t)];
}

/** The text colour ('#111111' or '#ffffff') with the better contrast on divergingColor(t). */
export function divergingTextColor(t) {
  return (PUOR ?? puor()).text[signedIndex(t)];
}

/** sequentialColor(t) as a packed RGBA pixel for a Uint32Array view of ImageData (little-endian) */
export function sequentialPacked(t) {
  return (VIRIDIS ?? viridis()).packed[unitIndex(t)];
}

/** divergingColor(t) as a packed RGBA pixel for a Uint32Array view of ImageData (little-endian) */
export function divergingPacked(t) {
  return (PUOR ?? puor()).packed[signedIndex(t)];
}

/** Colour stops [[offset 0..1, colour], ...] of a scale kind, for gradients (SVG or canvas). */
export function gradientStops(kind, n = 17) {
  const stops = [];
  for (let i = 0; i < n; i++) {
    const u = i / (n - 1);
    stops.push([u, kind === 'diverging' ? divergingColor(2 * u - 1) : sequentialColor(u)]);
  }
  return stops;
}

// ------------------------------------------------------------------------------------------------
// number formatting shared by the renderers

/** v rounded to 2 decimals: coordinates and sizes written into SVG. */
export function r2(v) {
  return Math.round(v * 100) / 100;
}

/** A number for display: fixed decimals, a real minus sign, no '-0.00'. */
export function formatFixed(v, digits = 2) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '∞';
  if (v === -Infinity) return `${MINUS}∞`;
  let s = v.toFixed(digits);
  if (/^-0\.?0*$/.test(s)) s = s.slice(1);
  return s.replace('-', MINUS);
}

/** A tick / readout label: short, exponent for very small or large magnitudes. */
export function formatTick(v, precision = 3) {
  if (!Number.isFinite(v)) return formatFixed(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  let s;
  if (a >= 1e-3 && a < 1e5) {
    s = String(Number(v.toPrecision(precision)));
  } else {
    s = v
      .toExponential(Math.max(0, precision - 1))
      .replace(/\.?0+e/, 'e')
      .replace('e+', 'e');
  }
  return s.replace('-', MINUS);
}

/** Scientific notation for error columns: 1.23e-10 (real minus sign). */
export function formatSci(v, digits = 2) {
  if (!Number.isFinite(v)) return formatFixed(v);
  if (v === 0) return '0';
  return v.toExponential(digits).replace('e+', 'e').replace(/-/g, MINUS);
}

// ------------------------------------------------------------------------------------------------
// legend

let uid = 0;
/** A document-unique id (for SVG gradients, aria references). */
export function uniqueId(prefix = 'mha') {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** The tick values of a legend. */
export function legendTicks(kind, min, max) {
  if (kind === 'diverging') {
    const m = Math.max(Math.abs(min), Math.abs(max));
    return [-m, 0, m];
  }
  return [0, 0.25, 0.5, 0.75, 1].map((u) => min + u * (max - min));
}

/** The default range of a legend kind. */
export function legendRange(kind, min, max) {
  if (kind === 'diverging') {
    let m = Math.max(Math.abs(min ?? 1), Math.abs(max ?? 1));
    if (!(m > 0) || !Number.isFinite(m)) m = 1;
    return [-m, m];
  }
  const lo = Number.isFinite(min) ? min : 0;
  const hi = Number.isFinite(max) && max > lo ? max : lo + 1;
  return [lo, hi];
}

/** Describe a scale in words (for aria-labels: colour is never the only carrier). */
export function describeScale(kind, min, max, label) {
  const name = label ? `${label}: ` : '';
  if (kind === 'diverging') {
    return `${name}colour scale from ${formatTick(min)} (dark orange) through 0 (near white) to ${formatTick(max)} (dark purple)`;
  }
  return `${name}colour scale from ${formatTick(min)} (dark purple) through blue and green to ${formatTick(max)} (yellow)`;
}

export const LEGEND_WIDTH = 236;
const LEGEND_BAR_X = 24;
const LEGEND_BAR_W = LEGEND_WIDTH - 2 * LEGEND_BAR_X;

/**
 * Legend geometry shared by the SVG legend and the PNG export:
 * { width, height, bar: {x, y, w, h}, label: {x, y}, ticks: [{x, text}], tickY, markerY }.
 */
export function legendLayout(kind, min, max) {
  const [lo, hi] = legendRange(kind, min, max);
  const bar = { x: LEGEND_BAR_X, y: 20, w: LEGEND_BAR_W, h: 10 };
  const ticks = legendTicks(kind, lo, hi).map((v) => ({
    x: bar.x + ((v - lo) / (hi - lo)) * bar.w,
    text: formatTick(v),
    value: v,
  }));
  return { width: LEGEND_WIDTH, height: 50, lo, hi, bar, label: { x: 2, y: 12 }, ticks, tickY: 45 };
}

/**
 * The id of the page's <linearGradient> of `kind`, made on first use: one per kind, in one hidden
 * <svg> every legend refers to (a gradient of its own per legend cost each ~20 elements for the
 * page to lay out and style).
 */
function sharedGradient(kind) {
  const id = `mha-grad-${kind}`;
  if (document.getElementById(id)) return id;
  let holder = document.getElementById('mha-legend-gradients');
  if (!holder) {
    // not display: none (a gradient there is not drawn by every browser): a 0 x 0 box out of flow
    holder = svgEl('svg', {
      id: 'mha-legend-gradients',
      width: 0,
      height: 0,
      'aria-hidden': 'true',
    });
    holder.style.position = 'absolute';
    holder.append(svgEl('defs'));
    document.body.append(holder);
  }
  const grad = svgEl('linearGradient', { id, x1: '0', x2: '1', y1: '0', y2: '0' });
  for (const [off, col] of gradientStops(kind)) {
    grad.append(svgEl('stop', { offset: off.toFixed(4), 'stop-color': col }));
  }
  holder.firstChild.append(grad);
  return id;
}

/** The gradient bar of a legend (filled with the page's gradient of its kind). */
function legendBar(kind, bar) {
  const gid = sharedGradient(kind);
  return svgEl('rect', {
    x: bar.x,
    y: bar.y,
    width: bar.w,
    height: bar.h,
    fill: `url(#${gid})`,
    stroke: '#6b7280',
    'stroke-width': '0.5',
  });
}

/** A tick mark below the bar and its value, for each of lay.ticks. */
function legendTickMarks(svg, lay) {
  const { bar } = lay;
  for (const t of lay.ticks) {
    svg.append(
      svgEl('line', {
        x1: t.x,
        x2: t.x,
        y1: bar.y + bar.h,
        y2: bar.y + bar.h + 4,
        stroke: '#4b5563',
        'stroke-width': '1',
      }),
    );
    const tx = svgEl('text', {
      x: t.x,
      y: lay.tickY,
      'text-anchor': 'middle',
      class: 'legend-tick',
    });
    tx.textContent = t.text;
    svg.append(tx);
  }
}

/** The hover marker (hidden, at x = 0): a small triangle above the bar and a line through it. */
function legendMarker(bar) {
  const marker = svgEl('g', { class: 'legend-marker', visibility: 'hidden' });
  const line = (stroke, width, y1, y2) =>
    svgEl('line', { x1: 0, x2: 0, y1, y2, stroke, 'stroke-width': width });
  marker.append(
    svgEl('path', { d: `M-4,${bar.y - 6} L4,${bar.y - 6} L0,${bar.y - 1} Z`, fill: '#111' }),
    line('#111', '2', bar.y - 1, bar.y + bar.h + 1),
    line('#fff', '0.75', bar.y, bar.y + bar.h),
  );
  return marker;
}

/**
 * A labelled gradient bar with ticks, and a marker that can point at a value (the hovered cell).
 * kind 'unit': viridis over [min=0, max=1]; 'diverging': PuOr over the symmetric range [-m, m],
 * m = max(|min|, |max|) (default 1). Returns { element: <div class="legend">, mark(value | null) }.
 */
export function createLegend({ kind = 'unit', min, max, label } = {}) {
  const k = kind === 'diverging' ? 'diverging' : 'unit';
  const lay = legendLayout(k, min, max);
  const text = label ?? (k === 'unit' ? 'attention weight' : 'value');
  const svg = svgEl('svg', {
    viewBox: `0 0 ${lay.width} ${lay.height}`,
    width: lay.width,
    height: lay.height,
    role: 'img',
    class: 'legend-svg',
  });
  svg.setAttribute('aria-label', describeScale(k, lay.lo, lay.hi, text));
  const bar = legendBar(k, lay.bar);
  const title = svgEl('text', { x: lay.label.x, y: lay.label.y, class: 'legend-label' });
  title.textContent = text;
  svg.append(title, bar);
  legendTickMarks(svg, lay);
  const marker = legendMarker(lay.bar);
  svg.append(marker);
  const element = document.createElement('div');
  element.className = `legend legend-${k}`;
  element.append(svg);

  function mark(value) {
    if (value === null || value === undefined || Number.isNaN(value)) {
      marker.setAttribute('visibility', 'hidden');
      return;
    }
    const u = Math.min(1, Math.max(0, (value - lay.lo) / (lay.hi - lay.lo)));
    marker.setAttribute('transform', `translate(${(lay.bar.x + u * lay.bar.w).toFixed(2)},0)`);
    marker.setAttribute('visibility', 'visible');
  }
  return { element, mark };
}
