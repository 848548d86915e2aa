// axes.js - the axis titles and the row / column labels of the heatmap, as drawing primitives
// (primitives.js) keyed 'title-col', 'title-row', 'row-<r>', 'col-<c>' so a hover can mark them.

import { INK, LABEL_INK, MUTED_INK } from './theme.js';

/** 'query (row)' -> 'query': the noun used in readouts and in the CSV's corner cell. */
export function axisNoun(axis) {
  const s = String(axis ?? '')
    .replace(/\(.*?\)/g, '')
    .trim();
  return s || String(axis ?? '');
}

/** "key (column) →" above the matrix, "← query (row)" rotated along its left edge. */
function titleItems(L) {
  const title = { type: 'text', size: L.axisFont, weight: 600, fill: INK, cls: 'axis-title' };
  return [
    { ...title, key: 'title-col', x: L.mx, y: L.titleY, text: L.topTitle },
    {
      ...title,
      key: 'title-row',
      x: L.sideTitleX,
      y: L.my + L.mh / 2,
      text: L.sideTitle,
      anchor: 'middle',
      rotate: -90,
    },
  ];
}

/** Every L.rowStep-th row label, right-aligned left of the matrix (an index in grey). */
function rowLabelItems(s, L) {
  const items = [];
  for (let r = 0; r < s.rows; r += L.rowStep) {
    items.push({
      type: 'text',
      key: `row-${r}`,
      x: L.mx - 6,
      y: L.my + (r + 0.5) * L.cellH + L.rowFont * 0.35,
      text: L.rowText[r],
      size: L.rowFont,
      anchor: 'end',
      fill: s.rowLabels[r] === null ? MUTED_INK : LABEL_INK,
      cls: 'row-label',
    });
  }
  return items;
}

/** Every L.colStep-th column label, rotated -45° above the matrix (an index in grey). */
function colLabelItems(s, L) {
  const items = [];
  for (let c = 0; c < s.cols; c += L.colStep) {
    items.push({
      type: 'text',
      key: `col-${c}`,
      x: L.mx + (c + 0.5) * L.cell - L.colFont * 0.25,
      y: L.colLabelY,
      text: L.colText[c],
      size: L.colFont,
      rotate: -45,
      fill: s.colLabels[c] === null ? MUTED_INK : LABEL_INK,
      cls: 'col-label',
    });
  }
  return items;
}

/** The axes of the plot as primitives: titles, then row labels, then column labels. */
export function axisItems(s, L) {
  return [...titleItems(L), ...rowLabelItems(s, L), ...colLabelItems(s, L)];
}
