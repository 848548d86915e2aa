// notebook-table.js - the result of the notebook check on screen: the table in the course's order
// (your shape vs expected, status as symbol + words + colour, max abs / rel error, the norm-wise
// relative error, the tolerance, the first differing entry, the diagnosis) and, for every tensor
// that differs, a heatmap of yours − expected (diverging scale, symmetric limits) with a batch /
// head picker for 3-D and 4-D tensors. Every text is set with textContent.

import { el } from './dom.js';
import { table, formatShape } from './tables.js';
import { field, indexSelect } from './controls.js';
import { heatmap } from './heatmap.js';
import {
  followsOn,
  STATUS_TEXT,
  difference,
  firstDifferenceText,
  matrixView,
} from '../model/notebook-check.js';
import { fmt } from '../model/format.js';

const HEADERS = [
  'tensor',
  'status',
  'your shape',
  'expected shape',
  'max abs error',
  'max rel error',
  'norm rel error',
  'tolerance',
];

const num3 = (v) => (v === null || v === undefined ? '—' : fmt(v, 3));
const shapeCode = (s) => (s ? el('code', { className: 'shape', text: formatShape(s) }) : '—');

function rowCells(r) {
  return [
    r.name,
    el('span', { className: `status status-${r.status}`, text: STATUS_TEXT[r.status] }),
    shapeCode(r.shape),
    shapeCode(r.expectedShape),
    num3(r.maxAbs),
    num3(r.maxRel),
    num3(r.normRel),
    r.compared ? num3(r.tolerance?.abs) : '—',
  ];
}

/**
 * The row under a tensor's row that says what is wrong: its first differing entry, the diagnosis
 * and the row's note (null when there is nothing to say).
 */
function detailRow(r) {
  const box = el('div', { className: 'detail' });
  if (r.first) {
    box.append(
      el(
        'p',
        {},
        el('span', { className: 'label', text: 'first differing entry: ' }),
        el('code', { text: firstDifferenceText(r) }),
      ),
    );
  }
  if (r.diagnosis) {
    box.append(
      el('p', {}, el('span', { className: 'label', text: 'diagnosis: ' }), r.diagnosis.message),
    );
  }
  if (r.note) box.append(el('p', { className: 'note', text: r.note }));
  if (!box.childNodes.length) return null;
  const td = el('td', { attrs: { colspan: HEADERS.length } }, box);
  return el(
    'tr',
    {
      className: `detail-row${followsOn(r) ? ' follows-on' : ''}`,
      dataset: { detailFor: r.name, status: r.status },
    },
    td,
  );
}

/**
 * The tolerance line: the rules of the rows' tolerances (their texts without the numbers, which
 * the tolerance column gives), each once.
 */
export function toleranceLine(result) {
  const rules = new Set();
  for (const r of result.rows) {
    const t = r.compared ? String(r.tolerance?.text ?? '') : '';
    if (t) rules.add(t.replace(/\s*=\s*[^=]*$/, ''));
  }
  if (!rules.size) return '';
  return `Tolerance (an entry matches when |yours − expected| ≤ it; the tolerance column): ${[...rules].join('; ')}.`;
}

/**
 * The result's table: one row per course tensor, in the course's order (tr[data-tensor]
 * [data-status]), each followed by its detail row when it has something to say.
 */
export function checkTable(result) {
  const w = table({
    headers: HEADERS,
    rows: result.rows.map(rowCells),
    caption: `Your arrays against the layer recomputed from your X and weights (${result.causal ? 'causal mask on' : 'no causal mask'})`,
    numeric: [4, 5, 6, 7],
    className: 'notebook-table',
  });
  const trs = [...w.table.tBodies[0].rows];
  result.rows.forEach((r, i) => {
    trs[i].dataset.status = r.status;
    trs[i].dataset.tensor = r.name;
    const detail = detailRow(r);
    if (detail) trs[i].after(detail);
  });
  return w;
}

/**
 * One batch / head picker for every figure (the differing tensors share B and h): its selects,
 * or null when no figure has three axes or more. onChange({ b, h }).
 */
function viewPicker(shapes, onChange) {
  const B = Math.max(1, ...shapes.filter((s) => s.length >= 3).map((s) => s[0]));
  const H = Math.max(1, ...shapes.filter((s) => s.length >= 4).map((s) => s[1]));
  const sel = { b: 0, h: 0 };
  const fields = [];
  const pick = (id, n, word, key, label) => {
    const select = indexSelect(id, n, word);
    select.addEventListener('change', () => {
      sel[key] = Number(select.value);
      onChange(sel);
    });
    fields.push(field(label, select));
  };
  if (B > 1) pick('nb-diff-batch', B, 'batch', 'b', 'batch item (3-D and 4-D tensors)');
  if (H > 1) pick('nb-diff-head', H, 'head', 'h', 'head (4-D tensors)');
  return fields.length ? el('div', { className: 'controls' }, ...fields) : null;
}

/** The heatmap of yours − expected of one differing row: { element, show({ b, h }) }. */
function diffFigure(r) {
  const d = difference(r);
  const shape = r.expectedShape;
  const title = `${r.name}: yours − expected`;
  const v0 = matrixView(d.data, shape, 0, 0);
  const m = fmt(d.maxAbs, 3);
  const hm = heatmap({
    data: v0.data,
    rows: v0.rows,
    cols: v0.cols,
    rowAxis: 'axis −2 (row)',
    colAxis: 'axis −1 (column)',
    title: `${title}${v0.where}`,
    shape: `of ${formatShape(shape)}`,
    caption: `max |yours − expected| = ${m}; colours symmetric, −${m} to +${m}`,
    scale: 'diverging',
    maxAbs: d.maxAbs > 0 ? d.maxAbs : undefined,
    numbers: v0.rows * v0.cols <= 64 ? 'auto' : false,
    legendLabel: 'yours − expected',
    exportName: `notebook-diff-${r.name}`,
  });
  hm.element.dataset.tensor = r.name;
  const show = ({ b, h }) => {
    const v = matrixView(d.data, shape, b, h);
    hm.update(v.data, { title: `${title}${v.where}` });
  };
  return { element: hm.element, show };
}

/**
 * The heatmaps of yours − expected of every differing row, with one batch / head picker:
 * { controls (or null), figures: [elements], own: [elements of the rows with a mistake of their
 * own], follow: [elements of the rows that follow from an earlier one] } (no differing row: none).
 */
export function diffFigures(result) {
  const rows = result.rows.filter((r) => r.status === 'differs' && r.yours && r.expected);
  const figs = rows.map(diffFigure);
  const controls = figs.length
    ? viewPicker(
        rows.map((r) => r.expectedShape),
        (sel) => figs.forEach((f) => f.show(sel)),
      )
    : null;
  const pick = (keep) => figs.filter((f, i) => keep(followsOn(rows[i]))).map((f) => f.element);
  return {
    controls,
    figures: figs.map((f) => f.element),
    own: pick((follows) => !follows),
    follow: pick((follows) => follows),
  };
}
