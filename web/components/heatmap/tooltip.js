// tooltip.js - the tooltip of the current cell: names, the value at full precision, the position;
// placed beside the cell, inside the viewport.

import { el } from '../dom.js';
import { fullValue, nameOf } from './readout.js';

/** The tooltip element (hidden, aria-hidden: the readout says the same) and its three lines. */
export function createTooltip() {
  const head = el('div', { className: 'tt-head' });
  const value = el('div', { className: 'tt-value' });
  const pos = el('div', { className: 'tt-pos' });
  const element = el(
    'div',
    { className: 'heatmap-tooltip', attrs: { 'aria-hidden': 'true' }, hidden: true },
    head,
    value,
    pos,
  );
  return { element, head, value, pos };
}

/**
 * Left edge of the tooltip (px from the plot box): right of the cell if the viewport has room (it
 * may float past the figure), else left of it, always inside the viewport.
 */
function tooltipLeft(prect, cellLeft, cellRight, tw) {
  const room = (document.documentElement.clientWidth || prect.right) - prect.left - 6;
  let left = cellRight + 8;
  if (left + tw > room && cellLeft - 8 - tw >= -prect.left) left = cellLeft - 8 - tw;
  return Math.max(-prect.left + 4, Math.min(left, room - tw));
}

/** Show the tooltip of cell (r, c) holding v, above the cell (below it at the top edge). */
export function showTooltip(state, r, c, v) {
  const { s, L, svg } = state;
  const { plot, tooltip } = state.dom;
  tooltip.head.textContent = `${nameOf(s, 'row', r)} → ${nameOf(s, 'col', c)}`;
  tooltip.value.textContent = s.blank?.[r * s.cols + c] ? '—' : fullValue(v);
  tooltip.pos.textContent = `row ${r}, column ${c}`;
  const box = tooltip.element;
  box.hidden = false;
  const rect = svg.getBoundingClientRect();
  const prect = plot.getBoundingClientRect();
  const k = rect.width / L.W || 1;
  const ox = rect.left - prect.left;
  const oy = rect.top - prect.top;
  const cellRight = ox + (L.mx + (c + 1) * L.cell) * k;
  const cellLeft = ox + (L.mx + c * L.cell) * k;
  const top = oy + (L.my + r * L.cellH) * k;
  const left = tooltipLeft(prect, cellLeft, cellRight, box.offsetWidth);
  let y = top - box.offsetHeight - 6;
  if (y < 0) y = top + L.cellH * k + 6;
  box.style.left = `${Math.round(left)}px`;
  box.style.top = `${Math.round(y)}px`;
}

/** Hide the tooltip. */
export function hideTooltip(state) {
  state.dom.tooltip.element.hidden = true;
}
