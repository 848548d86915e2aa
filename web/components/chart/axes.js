// axes.js - the loss chart's frame: horizontal grid lines with the y ticks, the x ticks, the two
// axes and their titles (SVG elements appended to a fragment).

import { svgEl } from '../dom.js';
import { formatTick, r2 } from '../scales.js';
import { AXIS, GRID, INK } from './theme.js';

function tickLabel(attrs, text) {
  const t = svgEl('text', { ...attrs, 'font-size': 11.5, fill: AXIS, class: 'tick' });
  t.textContent = text;
  return t;
}

function line(x1, x2, y1, y2, stroke) {
  return svgEl('line', { x1, x2, y1, y2, stroke, 'stroke-width': 1 });
}

/** A grid line and a label (4 significant digits) at every y tick. */
function yTicks(frag, g) {
  for (const v of g.y.ticks) {
    const yy = r2(g.sy(v));
    frag.append(line(g.px0, g.px1, yy, yy, GRID));
    frag.append(tickLabel({ x: g.px0 - 8, y: r2(yy + 4), 'text-anchor': 'end' }, formatTick(v, 4)));
  }
}

/** A tick mark and the step below the x axis at every x tick. */
function xTicks(frag, g) {
  for (const v of g.xTicks) {
    const xx = r2(g.sx(v));
    frag.append(line(xx, xx, g.py0, g.py0 + 5, AXIS));
    frag.append(tickLabel({ x: xx, y: g.py0 + 18, 'text-anchor': 'middle' }, String(v)));
  }
}

function axisTitle(attrs, text) {
  const t = svgEl('text', {
    ...attrs,
    'text-anchor': 'middle',
    'font-size': 12.5,
    fill: INK,
    'font-weight': 600,
    class: 'axis-title',
  });
  t.textContent = text;
  return t;
}

/** Grid, ticks, axes and titles of a chart H px high with geometry g (draw.js). */
export function drawAxes(frag, g, { xLabel, yLabel }, H) {
  yTicks(frag, g);
  xTicks(frag, g);
  frag.append(line(g.px0, g.px1, g.py0, g.py0, AXIS));
  frag.append(line(g.px0, g.px0, g.py1, g.py0, AXIS));
  const xl = axisTitle({ x: (g.px0 + g.px1) / 2, y: H - 6 }, xLabel);
  const transform = `translate(16,${(g.py0 + g.py1) / 2}) rotate(-90)`;
  const yl = axisTitle({ x: 0, y: 0, transform }, yLabel);
  frag.append(xl, yl);
}
