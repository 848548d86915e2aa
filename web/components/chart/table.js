// table.js - the loss chart's values as a table (step | loss) in a <details> below the chart:
// the text alternative of the line.

import { el } from '../dom.js';

// numeric header cells (scope before class: the attribute order of the page)
const numTh = (scope, text) => el('th', { attrs: { scope, class: 'num' }, text });

/** Fill state.dom.tableWrap with a table of every value (`digits` decimals) and title it. */
export function fillTable(state) {
  const { values, opts } = state;
  const { title, xLabel, yLabel, xStart, digits } = opts;
  const tbody = el('tbody');
  values.forEach((v, i) => {
    const th = numTh('row', String(xStart + i));
    const td = el('td', { className: 'num', text: Number.isFinite(v) ? v.toFixed(digits) : v });
    tbody.append(el('tr', {}, th, td));
  });
  const head = el('thead', {}, el('tr', {}, numTh('col', xLabel), numTh('col', yLabel)));
  const t = el('table', { className: 'data-table values-table' }, head, tbody);
  state.dom.tableWrap.replaceChildren(t);
  // n values at x = xStart ... xStart + n - 1: "11 values (steps 0–10)", "1 value (step 0)"
  const n = values.length;
  const at = n === 1 ? `${xLabel} ${xStart}` : `${xLabel}s ${xStart}–${xStart + n - 1}`;
  state.dom.summary.textContent = `${title}: ${n} ${n === 1 ? 'value' : 'values'} (${at})`;
}
