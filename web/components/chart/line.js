// line.js - the loss curve: one path through the finite values (gaps at the others), a point per
// step (up to 60 steps), and the last value written above its point.

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

/** The last value (5 significant digits) above its point, if it is finite. */
function lastValue(frag, values, g, xStart) {
  const li = values.length - 1;
  if (!Number.isFinite(values[li])) return;
  const lx = g.sx(xStart + li);
  const ly = g.sy(values[li]);
  const t = svgEl('text', {
    x: r2(Math.min(lx, g.px1 - 2)),
    y: r2(ly - 11),
    'text-anchor': 'end',
    'font-size': 12,
    fill: INK,
    'font-weight': 600,
    stroke: WHITE,
    'stroke-width': 4,
    'stroke-linejoin': 'round',
    'paint-order': 'stroke',
    class: 'last-value',
  });
  t.textContent = formatTick(values[li], 5);
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
