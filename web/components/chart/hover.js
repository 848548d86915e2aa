// hover.js - the loss chart under the pointer: a dashed guide and a dot at the nearest step with
// a finite value, and its value in the readout below the chart.

import { svgEl } from '../dom.js';
import { r2 } from '../scales.js';
import { AXIS, POINT, WHITE } from './theme.js';

/** The guide (hidden): a vertical dashed line and a dot, in geometry g (draw.js). */
export function createGuide(g) {
  const guide = svgEl('g', { visibility: 'hidden', 'pointer-events': 'none' });
  guide.append(
    svgEl('line', {
      x1: 0,
      x2: 0,
      y1: g.py1,
      y2: g.py0,
      stroke: AXIS,
      'stroke-width': 1,
      'stroke-dasharray': '3 3',
    }),
  );
  guide.append(
    svgEl('circle', { cx: 0, cy: 0, r: 5, fill: POINT, stroke: WHITE, 'stroke-width': 2 }),
  );
  return guide;
}

/** The index of the finite value whose step is nearest to x (SVG units), or -1. */
function nearest(state, x) {
  const { values, geom } = state;
  const { xStart } = state.opts;
  let best = -1;
  let bestD = Infinity;
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) continue;
    const dx = Math.abs(geom.sx(xStart + i) - x);
    if (dx < bestD) {
      bestD = dx;
      best = i;
    }
  }
  return best;
}

function onMove(state, e) {
  const { svg, readout } = state.dom;
  const { guide, geom, values } = state;
  const { xStart, xLabel, yLabel, digits } = state.opts;
  if (!geom || !guide) return;
  const rect = svg.getBoundingClientRect();
  const best = nearest(state, ((e.clientX - rect.left) * state.W) / rect.width);
  if (best < 0) return;
  const gx = r2(geom.sx(xStart + best));
  const gy = r2(geom.sy(values[best]));
  guide.firstChild.setAttribute('x1', gx);
  guide.firstChild.setAttribute('x2', gx);
  guide.lastChild.setAttribute('cx', gx);
  guide.lastChild.setAttribute('cy', gy);
  guide.setAttribute('visibility', 'visible');
  readout.textContent = `${xLabel} ${xStart + best}: ${yLabel} ${values[best].toFixed(digits)}`;
}

/** The guide follows the pointer over the chart and hides when it leaves. */
export function listenHover(state) {
  const { svg, readout } = state.dom;
  svg.addEventListener('pointermove', (e) => onMove(state, e));
  svg.addEventListener('pointerleave', () => {
    if (state.guide) state.guide.setAttribute('visibility', 'hidden');
    readout.textContent = '';
  });
}
