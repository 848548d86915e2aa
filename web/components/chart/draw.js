// draw.js - the loss chart drawn for its values at width state.W: the scales (geometry), then
// axes, curve and hover guide, and the summary in the caption and the <svg>'s name.

import { svgEl } from '../dom.js';
import { formatTick } from '../scales.js';
import { drawAxes } from './axes.js';
import { createGuide } from './hover.js';
import { drawLine } from './line.js';
import { niceTicks } from './ticks.js';
import { AXIS } from './theme.js';

export const H = 250;
const M = { left: 64, right: 24, top: 18, bottom: 44 };
const EMPTY_H = 60;

/** The plot area, the ticks and the scales sx(step), sy(loss) of `finite` values. */
function geometry(state, finite) {
  const { W, values } = state;
  const { xStart } = state.opts;
  const n = values.length;
  const px0 = M.left;
  const px1 = W - M.right;
  const py0 = H - M.bottom;
  const py1 = M.top;
  const y = niceTicks(Math.min(...finite), Math.max(...finite), W < 400 ? 4 : 5);
  const xMax = xStart + Math.max(1, n - 1);
  const xCount = Math.min(Math.max(2, Math.floor((px1 - px0) / 48)), Math.max(1, n - 1));
  const xStep = Math.max(1, Math.round(niceTicks(xStart, xMax, xCount).step));
  const xTicks = [];
  for (let v = xStart; v <= xMax; v += xStep) xTicks.push(v);
  const sx = (i) => px0 + ((i - xStart) / (xMax - xStart)) * (px1 - px0);
  const sy = (v) => py0 - ((v - y.lo) / (y.hi - y.lo)) * (py0 - py1);
  return { sx, sy, px0, px1, py0, py1, y, xTicks };
}

function setSize(svg, W, height) {
  svg.setAttribute('viewBox', `0 0 ${W} ${height}`);
  svg.setAttribute('width', W);
  svg.setAttribute('height', height);
}

/** No finite value yet: a short box saying so. */
function drawEmpty(state) {
  const { svg, capSummary } = state.dom;
  svg.setAttribute('aria-label', `${state.opts.title}: no steps yet`);
  capSummary.textContent = 'no steps yet';
  setSize(svg, state.W, EMPTY_H);
  const t = svgEl('text', {
    x: state.W / 2,
    y: 36,
    'text-anchor': 'middle',
    fill: AXIS,
    'font-size': 14,
  });
  t.textContent = 'No steps yet.';
  svg.append(t);
  state.geom = null;
}

/** "10 values, from 1.2345 at step 0 to 0.5 at step 9 (−59.5 %)", or the one value. */
function summaryText(values, xStart, finite) {
  const n = values.length;
  const first = finite[0];
  const last = finite[finite.length - 1];
  if (n === 1) return `step ${xStart}: ${formatTick(first, 5)}`;
  const change =
    Number.isFinite(first) && first !== 0
      ? ` (${formatTick(((last - first) / Math.abs(first)) * 100, 3)} %)`
      : '';
  const from = `from ${formatTick(first, 5)} at step ${xStart}`;
  return `${n} values, ${from} to ${formatTick(last, 5)} at step ${xStart + n - 1}${change}`;
}

/** Redraw the chart for state.values at width state.W. */
export function draw(state) {
  const { svg, capSummary } = state.dom;
  const { values, opts } = state;
  svg.replaceChildren();
  const finite = values.filter(Number.isFinite);
  if (values.length === 0 || finite.length === 0) {
    drawEmpty(state);
    return;
  }
  setSize(svg, state.W, H);
  const g = geometry(state, finite);
  state.geom = g;
  const frag = document.createDocumentFragment();
  drawAxes(frag, g, opts, H);
  drawLine(frag, values, g, opts.xStart);
  state.guide = createGuide(g);
  frag.append(state.guide);
  svg.append(frag);
  const summary = summaryText(values, opts.xStart, finite);
  capSummary.textContent = summary;
  svg.setAttribute(
    'aria-label',
    `Line chart of ${opts.title}: ${summary}. The values are in the table below.`,
  );
}
