// frame.js - the heatmap's HTML around the plot:
//   <figure class="heatmap" tabindex="0"> caption, help text (for the keys), sizer, the plot box
//   (the <svg> and the tooltip), side (legend, key), footer
//   (live readout, export buttons).

import { el } from '../dom.js';
import { safeFilename } from '../export.js';
import { uniqueId } from '../scales.js';
import { createExportTools, labelExportTools } from './export.js';
import { createTooltip } from './tooltip.js';

const HELP =
  'Use the arrow keys to move between cells (Home and End: first and last column; Page Up and ' +
  'Page Down: first and last row; Escape: clear). The value of the active cell is read out below ' +
  'the figure.';

function createCaption(id) {
  const title = el('span', { className: 'heatmap-title' });
  const shape = el('span', { className: 'heatmap-shape' });
  const axes = el('span', { className: 'heatmap-axes' });
  const note = el('span', { className: 'heatmap-note' });
  const caption = el('figcaption', { className: 'heatmap-caption', id }, title, shape, axes, note);
  return { caption, title, shape, axes, note };
}

/** The figure's elements, by name (state.dom). */
export function createFrame() {
  const captionId = uniqueId('hm-cap');
  const helpId = uniqueId('hm-help');
  const figure = el('figure', {
    className: 'heatmap',
    attrs: { tabindex: 0, 'aria-labelledby': captionId, 'aria-describedby': helpId },
  });
  const cap = createCaption(captionId);
  const help = el('span', { className: 'visually-hidden', id: helpId, text: HELP });
  // the plot box: the plot is fitted to its width (style.css), so it never scrolls and needs no
  // tab stop of its own; the figure is the one focusable element (arrow keys move the cursor)
  const plot = el('div', { className: 'heatmap-plot' });
  // a zero-height box as wide as the plot may be: observed for fitting the cells (its height never
  // changes, so re-rendering inside the observer cannot loop)
  const sizer = el('div', { className: 'heatmap-sizer', attrs: { 'aria-hidden': 'true' } });
  const tooltip = createTooltip();
  const side = el('div', { className: 'heatmap-side' });
  const keyEl = el('p', { className: 'heatmap-key' });
  const readout = el('p', { className: 'heatmap-readout', attrs: { 'aria-live': 'polite' } });
  const { tools, menu, buttons } = createExportTools();
  const footer = el('div', { className: 'heatmap-footer' }, readout, tools);
  figure.append(cap.caption, help, sizer, plot, side, footer);
  return { figure, ...cap, plot, sizer, tooltip, side, keyEl, readout, tools, menu, buttons };
}

/** Caption, region and button names, and the export file name from the options. */
export function updateCaption(state) {
  const { s, dom } = state;
  dom.title.textContent = s.title ? String(s.title) : '';
  dom.title.hidden = !s.title;
  dom.shape.textContent = s.shape ? String(s.shape) : `(${s.rows}, ${s.cols})`;
  dom.axes.textContent = `${s.rowAxis} → ${s.colAxis}`;
  dom.note.textContent = s.caption ? String(s.caption) : '';
  dom.note.hidden = !s.caption;
  const what = s.title ? String(s.title) : 'heatmap';
  const base = safeFilename(s.exportName ?? s.title ?? 'heatmap', 'heatmap');
  labelExportTools(state, what);
  dom.figure.dataset.exportName = base;
}
