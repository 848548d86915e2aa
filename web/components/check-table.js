// check-table.js - the result of the notebook check on screen: the table in the course's order
// (your shape vs expected, status as symbol + words + colour, max abs / rel error, the norm-wise
// relative error, the tolerance's number (its rule said once, by toleranceLine), the first
// differing entry, the diagnosis in words) and, for every tensor that differs, its maps side by
// side: yours, expected (one shared scale), yours − expected (diverging, symmetric limits) and,
// when the diagnosis is a constant factor, yours / expected; head blocks ruled on (B, T, C) maps,
// NaN and ±∞ marked, rows at least MIN_ROW_PX tall; one batch / head picker for them all. Every
// text is set with textContent.

import { el } from './dom.js';
import { table, formatShape, rowMore } from './tables.js';
import { field, indexSelect } from './controls.js';
import { heatmap } from './heatmap.js';
import {
  followsOn,
  STATUS_TEXT,
  diagnosisText,
  diffHeader,
  factorNumber,
  firstDifferenceText,
  headBlockWidth,
  matrixView,
  rowMaps,
  toleranceRules,
} from '../model/custom-arrays.js';
import { fmt } from '../model/format.js';
import { headColumnLabels } from '../model/labels.js';

/** The least height of a map's row (px): a 6 × 64 (T, C) map is then 72 px tall, not 30. */
export const MIN_ROW_PX = 12;

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

/** A row's tolerance: its number, and which rule when there are several (toleranceLine's). */
function toleranceCell(r, rules) {
  if (!r.compared) return '—';
  const at = rules.ruleOf.get(r.name);
  return rules.rules.length > 1 && at !== undefined
    ? `${num3(r.tolerance?.abs)} (${at + 1})`
    : num3(r.tolerance?.abs);
}

function rowCells(r, rules) {
  // on a phone a row shows the tensor and its status (its detail row under it); ⋯ the rest
  const more = rowMore(`${r.name}: its shapes, errors and tolerance`);
  return [
    el('span', {}, el('span', { className: 'tensor-name', text: r.name }), more),
    el('span', { className: `status status-${r.status}`, text: STATUS_TEXT[r.status] }),
    shapeCode(r.shape),
    shapeCode(r.expectedShape),
    num3(r.maxAbs),
    num3(r.maxRel),
    num3(r.normRel),
    toleranceCell(r, rules),
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
      el(
        'p',
        {},
        el('span', { className: 'label', text: 'diagnosis: ' }),
        diagnosisText(r.diagnosis),
      ),
    );
  }
  if (r.note) box.append(el('p', { className: 'note', text: r.note }));
  if (!box.childNodes.length) return null;
  const td = el('td', { attrs: { colspan: HEADERS.length } }, box);
  return el(
    'tr',
    {
      className: `detail-row${followsOn(r) ? ' follows-on' : ''}`,
      // the diagnosis id stays data, never text
      dataset: { detailFor: r.name, status: r.status, diagnosis: r.diagnosis?.id ?? '' },
    },
    td,
  );
}

/**
 * The tolerance line, said once above the table: the rules of the rows' tolerances (their texts
 * without the numbers, which the tolerance column gives), each once; numbered when there are
 * several (the column then says which).
 */
export function toleranceLine(result) {
  const { rules } = toleranceRules(result.rows);
  if (!rules.length) return '';
  const head = 'an entry matches when |yours − expected| ≤ the tolerance in its row';
  if (rules.length === 1) return `Tolerance (${head}): ${rules[0]}.`;
  const list = rules.map((t, i) => `(${i + 1}) ${t}`).join('; ');
  return `Tolerances (${head}; the number in brackets after it says which rule): ${list}.`;
}

/**
 * The result's table: one row per course tensor, in the course's order (tr[data-tensor]
 * [data-status]), each followed by its detail row when it has something to say.
 */
export function checkTable(result) {
  const rules = toleranceRules(result.rows);
  const w = table({
    headers: HEADERS,
    rows: result.rows.map((r) => rowCells(r, rules)),
    caption: `Your arrays against the layer recomputed from your X and weights (${result.causal ? 'causal mask on' : 'no causal mask'})`,
    numeric: [4, 5, 6, 7],
    className: 'notebook-table',
    stack: true, // (on a phone: style.css)
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

/** The options every map of a row shares: size, axes, head blocks, marks, row height. */
function commonOptions(r, sizes, v0) {
  const hb = headBlockWidth(r, sizes);
  return {
    rows: v0.rows,
    cols: v0.cols,
    rowAxis: 'axis −2 (row)',
    colAxis: 'axis −1 (column)',
    colLabels: hb ? headColumnLabels(v0.cols, hb) : undefined,
    colGroups: hb || undefined,
    colGroupLabel: 'head',
    shape: `of ${formatShape(r.expectedShape)}`,
    numbers: v0.rows * v0.cols <= 64 ? 'auto' : false,
    minRowHeight: MIN_ROW_PX,
    markNonFinite: true,
  };
}

/** The specs of a row's maps: [{ kind, what, data, blank?, options }] (ratio with a factor). */
function mapSpecs(r, maps) {
  const m = fmt(maps.scale, 3);
  const shared = {
    scale: 'diverging',
    maxAbs: maps.scale > 0 ? maps.scale : undefined,
    legendLabel: 'yours and expected',
    caption: `yours and expected share one scale, −${m} to +${m}`,
  };
  const specs = [
    { kind: 'yours', what: 'yours', data: r.yours, options: shared },
    { kind: 'expected', what: 'expected', data: r.expected, options: shared },
    {
      kind: 'diff',
      what: 'yours − expected',
      data: maps.diff,
      blank: maps.blank,
      options: {
        scale: 'diverging',
        maxAbs: maps.diffMax > 0 ? maps.diffMax : undefined,
        legendLabel: 'yours − expected',
        caption: diffHeader(r, maps.diffMax),
        blankText: 'masked score, not compared',
      },
    },
  ];
  if (maps.ratio) specs.push(ratioSpec(maps.ratio));
  return specs;
}

/** yours / expected: a sequential scale from 0 to 2k (k mid-way); empty where expected is 0. */
function ratioSpec({ data, blank, factor }) {
  const k = factorNumber(factor);
  return {
    kind: 'ratio',
    what: 'yours / expected',
    data,
    blank,
    options: {
      scale: 'unit',
      min: Math.min(0, 2 * factor),
      max: Math.max(0, 2 * factor),
      legendLabel: 'yours / expected',
      caption: `yours = k × expected, k = ${k}; empty (—) where expected is 0`,
      blankText: 'expected is 0',
    },
  };
}

/** One map of a row: { element, show({ b, h }) }. */
function rowMap(r, common, spec) {
  const shape = r.expectedShape;
  const title = `${r.name}: ${spec.what}`;
  const view = (b, h) => matrixView(spec.data, shape, b, h);
  const v0 = view(0, 0);
  const blankAt = (b, h) => (spec.blank ? matrixView(spec.blank, shape, b, h).data : undefined);
  const hm = heatmap({
    ...common,
    ...spec.options,
    data: v0.data,
    blank: blankAt(0, 0),
    title: `${title}${v0.where}`,
    exportName: `notebook-${spec.kind}-${r.name}`,
  });
  hm.element.dataset.tensor = r.name;
  hm.element.dataset.map = spec.kind;
  const show = ({ b, h }) => {
    const v = view(b, h);
    hm.update(v.data, { title: `${title}${v.where}`, blank: blankAt(b, h) });
  };
  return { element: hm.element, show };
}

/**
 * The maps of one differing row side by side, in a group named by a heading: yours, expected,
 * yours − expected and, with a factor, yours / expected. { element, show({ b, h }) }.
 */
function diffSet(r, sizes) {
  const maps = rowMaps(r);
  const v0 = matrixView(r.yours, r.expectedShape, 0, 0);
  const common = commonOptions(r, sizes, v0);
  const figs = mapSpecs(r, maps).map((spec) => rowMap(r, common, spec));
  const id = `nb-maps-${r.name}`;
  const names =
    figs.length === 4
      ? 'yours, expected, yours − expected, yours / expected'
      : 'yours, expected, yours − expected';
  const heading = el('h5', { id, className: 'diff-set-title', text: `${r.name}: ${names}` });
  const parts = [heading];
  const hb = headBlockWidth(r, sizes);
  if (hb) {
    const text = `Dark lines between columns mark the ${sizes.heads} head blocks (hs = ${hb} columns each; columns labelled head:column).`;
    parts.push(el('p', { className: 'note diff-heads', text }));
  }
  const grid = el(
    'div',
    { className: `diff-maps maps-${figs.length}` },
    ...figs.map((f) => f.element),
  );
  const element = el(
    'div',
    {
      className: 'diff-set',
      dataset: { tensor: r.name },
      attrs: { role: 'group', 'aria-labelledby': id },
    },
    ...parts,
    grid,
  );
  return { element, show: (sel) => figs.forEach((f) => f.show(sel)) };
}

/**
 * The maps of every differing row (see diffSet), with one batch / head picker: { controls (or
 * null), figures: [set elements], own: [sets of the rows with a mistake of their own], follow:
 * [sets of the rows that follow from an earlier one] } (no differing row: none).
 */
export function diffFigures(result) {
  const rows = result.rows.filter((r) => r.status === 'differs' && r.yours && r.expected);
  const sets = rows.map((r) => diffSet(r, result.sizes));
  const controls = sets.length
    ? viewPicker(
        rows.map((r) => r.expectedShape),
        (sel) => sets.forEach((f) => f.show(sel)),
      )
    : null;
  const pick = (keep) => sets.filter((f, i) => keep(followsOn(rows[i]))).map((f) => f.element);
  return {
    controls,
    figures: sets.map((f) => f.element),
    own: pick((follows) => !follows),
    follow: pick((follows) => follows),
  };
}
