// line.js - the loss curve: one path through the finite values (gaps at the others), a point per
// step (up to 60 steps), and the last value written beside its point, above or below it, where
// no other point is.

import { svgEl } from '../dom.js';
import { formatTick, r2 } from '../scales.js';
import { INK, LINE, POINT, WHITE } from './theme.js';

/** The path's d: M at the first finite value after a gap, L to the next ones. */
function pathData(values, g, xStart) {
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (Number.isFinite(v)) {
      d += `${pen ? 'L' : 'M'}${r2(g.sx(xStart + i))},${r2(g.sy(v))}`;
      pen = true;
    } else {
      pen = false;
    }
  });
  return d;
}

function points(frag, values, g, xStart) {
  const n = values.length;
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) return;
    frag.append(
      svgEl('circle', {
        cx: r2(g.sx(xStart + i)),
        cy: r2(g.sy(v)),
        r: n <= 20 ? 3.5 : 2.5,
        fill: WHITE,
        stroke: POINT,
        'stroke-width': 2,
      }),
    );
  });
}

const LABEL_SIZE = 12; // px
const CHAR_WIDTH = 0.62 * LABEL_SIZE; // a generous width of one digit of the chart's font
const POINT_REACH = 5; // a point's radius with its stroke, and a pixel to spare

/**
 * The baseline of the last value's label: 11 px above its point, or below it when another point
 * lies in the box the label would cover above (a falling curve's earlier points sit up and to the
 * left of the last one), whichever covers fewer points; kept inside the plot.
 */
export function labelBaseline(values, g, xStart, text) {
  const li = values.length - 1;
  const lx = Math.min(g.sx(xStart + li), g.px1 - 2);
  const ly = g.sy(values[li]);
  const left = lx - text.length * CHAR_WIDTH - POINT_REACH;
  const covered = (base) =>
    values.filter((v, i) => {
      if (i === li || !Number.isFinite(v)) return false;
      const [px, py] = [g.sx(xStart + i), g.sy(v)];
      const top = base - LABEL_SIZE - POINT_REACH;
      return px >= left && px <= lx + POINT_REACH && py >= top && py <= base + POINT_REACH;
    }).length;
  const above = Math.max(ly - 11, g.py1 + LABEL_SIZE);
  // (below may reach into the margin down to the x ticks' top: room for a last point on the axis)
  const below = Math.min(ly + LABEL_SIZE + 9, g.py0 + 4);
  return covered(below) < covered(above) ? below : above;
}

/** The last value (5 significant digits) beside its point (labelBaseline), if it is finite. */
function lastValue(frag, values, g, xStart) {
  const li = values.length - 1;
  if (!Number.isFinite(values[li])) return;
  const lx = g.sx(xStart + li);
  const text = formatTick(values[li], 5);
  const t = svgEl('text', {
    x: r2(Math.min(lx, g.px1 - 2)),
    y: r2(labelBaseline(values, g, xStart, text)),
    'text-anchor': 'end',
    'font-size': LABEL_SIZE,
    fill: INK,
    'font-weight': 600,
    stroke: WHITE,
    'stroke-width': 4,
    'stroke-linejoin': 'round',
    'paint-order': 'stroke',
    class: 'last-value',
  });
  t.textContent = text;
  frag.append(t);
}

/** The curve, its points and its last value, in geometry g (draw.js). */
export function drawLine(frag, values, g, xStart) {
  frag.append(
    svgEl('path', {
      d: pathData(values, g, xStart),
      fill: 'none',
      stroke: LINE,
      'stroke-width': 2.25,
      'stroke-linejoin': 'round',
      'stroke-linecap': 'round',
    }),
  );
  if (values.length <= 60) points(frag, values, g, xStart);
  lastValue(frag, values, g, xStart);
}
