// legend.js - the heatmap's legend (the colour scale with a marker at the hovered value) and the
// key of the outlined rows, beside the plot on the page and below it in the exports.

import { createLegend, gradientStops, legendLayout } from '../scales.js';
import { INK, LABEL_INK } from './theme.js';
import { el } from '../dom.js';

/** The scale's title: the legendLabel option, else 'attention weight' / 'value'. */
export function legendText(s) {
  return s.legendLabel ?? (s.scale === 'diverging' ? 'value' : 'attention weight');
}

/**
 * What the colour bar's limits are, under the bar: attention's fixed 0 … 1, or ± the largest
 * |value| of this map (or, with the maxAbs option, of every map that shares its scale).
 */
export function legendNote(s, col) {
  if (s.scale !== 'diverging') {
    return col.lo === 0 && col.hi === 1
      ? 'limits: fixed at 0 and 1'
      : `limits: fixed at ${col.lo} and ${col.hi}`;
  }
  return s.maxAbs > 0 && Number.isFinite(s.maxAbs)
    ? 'limits: ± the largest |value| of the maps that share this scale'
    : 'limits: ± the largest |value| in this map';
}

/** "◀ dashed outline: <highlightLabel> (rows 2 ‘cat’, 4)". */
export function highlightKeyText(s) {
  const rows = s.highlightRows
    .map((r) => (s.rowLabels[r] !== null ? `${r} ‘${s.rowLabels[r]}’` : String(r)))
    .join(', ');
  const what = s.highlightLabel ?? 'highlighted rows';
  return `◀ dashed outline: ${what} (${s.highlightRows.length === 1 ? 'row' : 'rows'} ${rows})`;
}

/**
 * The legend and the key beside the plot (state.dom.side): the legend is rebuilt only when its
 * scale, range or title change; the key shows while rows are outlined.
 */
export function updateSide(state) {
  const { s, col } = state;
  const { side, keyEl } = state.dom;
  const kind = s.scale === 'diverging' ? 'diverging' : 'unit';
  const note = legendNote(s, col);
  const key = `${kind}|${col.lo}|${col.hi}|${legendText(s)}|${note}`;
  if (!state.legend || state.legend.key !== key) {
    const lg = createLegend({ kind, min: col.lo, max: col.hi, label: legendText(s) });
    lg.element.append(el('p', { className: 'legend-note', text: note }));
    lg.key = key;
    if (state.legend) state.legend.element.replaceWith(lg.element);
    else side.append(lg.element);
    state.legend = lg;
  }
  if (s.highlightRows.length) {
    keyEl.textContent = highlightKeyText(s);
    if (!keyEl.isConnected) side.append(keyEl);
  } else if (keyEl.isConnected) {
    keyEl.remove();
  }
}

/** The legend's tick marks and values as primitives, the legend's corner at (lx, ly). */
function tickItems(lay, lx, ly) {
  const items = [];
  const barBottom = ly + lay.bar.y + lay.bar.h;
  for (const t of lay.ticks) {
    items.push({
      type: 'line',
      x1: lx + t.x,
      x2: lx + t.x,
      y1: barBottom,
      y2: barBottom + 4,
      stroke: '#4b5563',
    });
    items.push({
      type: 'text',
      x: lx + t.x,
      y: ly + lay.tickY,
      text: t.text,
      size: 11,
      anchor: 'middle',
      fill: LABEL_INK,
    });
  }
  return items;
}

/**
 * The legend as primitives for the exports, its corner at (lx, ly) (lay: legendLayout of the
 * scale): title, gradient bar, ticks.
 */
export function legendItems(s, lay, lx, ly) {
  const kind = s.scale === 'diverging' ? 'diverging' : 'unit';
  const title = {
    type: 'text',
    x: lx + lay.label.x,
    y: ly + lay.label.y,
    text: legendText(s),
    size: 12,
    weight: 600,
    fill: INK,
  };
  const bar = {
    type: 'gradient',
    x: lx + lay.bar.x,
    y: ly + lay.bar.y,
    w: lay.bar.w,
    h: lay.bar.h,
    stops: gradientStops(kind),
  };
  return [title, bar, ...tickItems(lay, lx, ly)];
}

/** legendLayout() of the scale of s over its colour range. */
export function exportLegendLayout(s, col) {
  return legendLayout(s.scale === 'diverging' ? 'diverging' : 'unit', col.lo, col.hi);
}
