// eps-chart.js - lesson 4's log-log figure of one entry's finite-difference error against the
// step ε, one line per stencil (epsilon-sweep.js computes it), with its values in a table.
// Colour-blind safe: the two lines differ in colour (Okabe-Ito blue and vermilion), marker
// (circle, square) and dash, and each is named at its lowest point.

import { el, svgEl } from './dom.js';
import { FONT_STACK } from './export.js';
import { formatSci, uniqueId } from './scales.js';
import { table } from './tables.js';

const W = 560;
const H = 300;
const M = { left: 62, right: 16, top: 14, bottom: 44 };
const FLOOR = 1e-17; // an error of exactly 0 is drawn here (below float64's resolution)
const STYLE = {
  'two-point': { color: '#0072B2', dash: '', marker: 'circle' },
  'five-point': { color: '#D55E00', dash: '6 3', marker: 'square' },
};

const SUP = {
  '-': '⁻',
  0: '⁰',
  1: '¹',
  2: '²',
  3: '³',
  4: '⁴',
  5: '⁵',
  6: '⁶',
  7: '⁷',
  8: '⁸',
  9: '⁹',
};
/** 10 to the power p as text: "10⁻⁵". */
const pow10 = (p) => `10${String(p).replace(/./g, (c) => SUP[c] ?? c)}`;

/** Log-scale mapping of [10^lo, 10^hi] onto [a, b]. */
function logScale(lo, hi, a, b) {
  return (v) => a + ((Math.log10(Math.max(v, FLOOR)) - lo) / (hi - lo)) * (b - a);
}

function axes(g, x, y, { xLo, xHi, yLo, yHi }) {
  for (let p = xLo; p <= xHi; p++) {
    const px = x(10 ** p);
    g.append(svgEl('line', { x1: px, x2: px, y1: M.top, y2: H - M.bottom, class: 'grid' }));
    const t = svgEl('text', { x: px, y: H - M.bottom + 16, 'text-anchor': 'middle' });
    t.textContent = pow10(p);
    g.append(t);
  }
  const step = Math.max(1, Math.ceil((yHi - yLo) / 8));
  for (let p = yLo; p <= yHi; p += step) {
    const py = y(10 ** p);
    g.append(svgEl('line', { x1: M.left, x2: W - M.right, y1: py, y2: py, class: 'grid' }));
    const t = svgEl('text', { x: M.left - 6, y: py + 4, 'text-anchor': 'end' });
    t.textContent = pow10(p);
    g.append(t);
  }
  const xt = svgEl('text', { x: (M.left + W - M.right) / 2, y: H - 6, 'text-anchor': 'middle' });
  xt.textContent = 'step ε (log scale)';
  const yt = svgEl('text', {
    x: 14,
    y: (M.top + H - M.bottom) / 2,
    'text-anchor': 'middle',
    transform: `rotate(-90 14 ${(M.top + H - M.bottom) / 2})`,
  });
  yt.textContent = 'relative error (log scale)';
  g.append(xt, yt);
}

function marker(kind, cx, cy, color) {
  if (kind === 'circle') return svgEl('circle', { cx, cy, r: 3.5, fill: color });
  return svgEl('rect', { x: cx - 3.5, y: cy - 3.5, width: 7, height: 7, fill: color });
}

function line(g, sweep, s, x, y) {
  const st = STYLE[s.stencil];
  const pts = sweep.eps.map((e, i) => [x(e), y(s.errors[i])]);
  const d = pts.map(([px, py], i) => `${i ? 'L' : 'M'}${px.toFixed(1)},${py.toFixed(1)}`);
  g.append(
    svgEl('path', {
      d: d.join(''),
      fill: 'none',
      stroke: st.color,
      'stroke-width': 2,
      'stroke-dasharray': st.dash,
    }),
  );
  for (const [px, py] of pts) g.append(marker(st.marker, px, py, st.color));
  const label = svgEl('text', {
    x: x(s.best.eps),
    y: y(s.best.error) + 18,
    'text-anchor': 'middle',
    fill: st.color,
    'font-weight': 'bold',
  });
  label.textContent = s.stencil;
  g.append(label);
}

const LINEAR = `L = sum(dY ⊙ Y) is linear in this entry (Y = att (X Wv) Wo), so a difference has no truncation error at any ε: only rounding is left, growing as ε shrinks`;

/** The y range in whole decades, the zero errors at FLOOR. */
function yRange(sweep) {
  const all = sweep.series.flatMap((s) => s.errors).map((e) => Math.max(e, FLOOR));
  return {
    yLo: Math.floor(Math.log10(Math.min(...all))),
    yHi: Math.ceil(Math.log10(Math.max(...all))),
  };
}

/** "two-point is lowest at ε = 3.2e-5 (5.1e-12), five-point at ε = 3.2e-3 (5.4e-13)". */
export function sweepSummary(sweep) {
  return sweep.series
    .map((s, i) => {
      const at = `ε = ${formatSci(s.best.eps, 1)} (${formatSci(s.best.error, 1)})`;
      return i ? `${s.stencil} at ${at}` : `${s.stencil} is lowest at ${at}`;
    })
    .join(', ');
}

function valuesTable(sweep) {
  return table({
    headers: ['ε', ...sweep.series.map((s) => `${s.stencil} relative error`)],
    rows: sweep.eps.map((e, i) => [
      formatSci(e, 1),
      ...sweep.series.map((s) => formatSci(s.errors[i], 2)),
    ]),
    caption: `Relative error of ${sweep.label}'s numeric gradient at each ε`,
    numeric: [0, 1, 2],
    stack: true, // (a phone: each ε a block)
  });
}

/** The figure for sweep (epsilonSweep's): <figure> with the SVG, a caption and a values table. */
export function epsChart(sweep) {
  const xLo = Math.round(Math.log10(Math.min(...sweep.eps)));
  const xHi = Math.round(Math.log10(Math.max(...sweep.eps)));
  const { yLo, yHi } = yRange(sweep);
  const x = logScale(xLo, xHi, M.left, W - M.right);
  const y = logScale(yLo, yHi, H - M.bottom, M.top);
  const capId = uniqueId('eps-cap');
  const svg = svgEl('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'eps-chart-svg',
    role: 'img',
    'aria-labelledby': capId,
    'font-family': FONT_STACK,
    'font-size': 12,
  });
  const g = svgEl('g');
  axes(g, x, y, { xLo, xHi, yLo, yHi });
  for (const s of sweep.series) line(g, sweep, s, x, y);
  svg.append(g);
  const summary = sweepSummary(sweep);
  const caption = el('figcaption', {
    id: capId,
    text: `Relative error of ${sweep.label}'s numeric gradient against ε, log–log (analytic ${sweep.analytic.toPrecision(6)}): ${sweep.linear ? LINEAR : summary}.`,
  });
  const details = el('details', { className: 'chart-values' }, el('summary', { text: 'Values' }));
  details.append(valuesTable(sweep));
  return el('figure', { className: 'chart eps-chart' }, caption, svg, details);
}
