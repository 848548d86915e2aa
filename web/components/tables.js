// tables.js - data tables (generic, shapes, gradient checks) and a progress bar.
// Every cell is set with textContent; numeric columns are right-aligned with tabular figures.

import { MINUS, el } from './dom.js';
import { formatSci, formatTick, uniqueId } from './scales.js';
import { ERROR_FORMS } from '../model/gradcheck-report.js';

/** 28160 -> "28,160" (not toLocaleString: its first call initialises ICU, 50-150 ms). */
export function groupThousands(n) {
  const s = String(Math.trunc(Math.abs(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `${MINUS}${s}` : s;
}

/** Python-style shape text: (2, 4, 6, 16); (64,) for one axis; () for a scalar. */
export function formatShape(shape) {
  const dims = Array.from(shape ?? []);
  if (dims.length === 1) return `(${dims[0]},)`;
  return `(${dims.join(', ')})`;
}

/**
 * A number in a table cell: integers as they are, others with 6 significant digits or an exponent
 * (NaN, ∞ and −∞ spelled so).
 */
export function formatCell(v) {
  if (typeof v !== 'number') return String(v ?? '');
  if (Number.isInteger(v)) return String(v).replace('-', MINUS);
  if (!Number.isFinite(v)) return formatSci(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return formatSci(v, 3);
  return formatTick(v, 6);
}

/**
 * A scroll container so wide tables never widen the page on a phone: they scroll sideways inside
 * it (.table-wrap, overflow-x: auto), a region in the tab order named by the caption (else by the
 * column headers) so the keyboard can scroll it too.
 */
function wrap(tableEl, caption, headers) {
  const label = caption || (headers.length ? `table: ${headers.join(', ')}` : 'table');
  return markOverflow(
    el(
      'div',
      { className: 'table-wrap', attrs: { tabindex: 0, role: 'region', 'aria-label': label } },
      tableEl,
    ),
  );
}

/**
 * Keeps `data-overflow` on a .table-wrap exactly while its table is wider than it (style.css
 * draws the scroll shadows only then: a table that fits gets no band at its edges). Returns the
 * wrap.
 */
export function markOverflow(wrapEl) {
  if (typeof ResizeObserver !== 'function') return wrapEl;
  const update = () =>
    wrapEl.toggleAttribute('data-overflow', wrapEl.scrollWidth > wrapEl.clientWidth + 1);
  const watch = new ResizeObserver(update);
  const watchTable = () => {
    if (wrapEl.firstElementChild) watch.observe(wrapEl.firstElementChild);
  };
  watch.observe(wrapEl);
  watchTable();
  // a table put in later (a chart's values, filled as its steps come): watched too
  if (typeof MutationObserver === 'function') {
    new MutationObserver(() => {
      watchTable();
      update();
    }).observe(wrapEl, { childList: true });
  }
  return wrapEl;
}

function isNumericCol(numeric, i) {
  if (Array.isArray(numeric)) {
    if (numeric.length && typeof numeric[0] === 'boolean') return !!numeric[i];
    return numeric.includes(i);
  }
  return false;
}

/**
 * A table. headers: array of strings; rows: arrays of strings/numbers (numbers are formatted, see
 * formatCell); caption: text; numeric: indices (or booleans) of right-aligned numeric columns.
 * Additions: className (extra class of the <table>), rowHeaders (default true: the first cell of
 * each row is a <th scope="row">), stack (on a narrow screen each row is shown as a block, each
 * cell under its column's name: data-label, style.css table.stacks). Returns a scrollable
 * <div class="table-wrap"> holding the <table class="data-table">; the <table> is also at
 * `.table` of the returned element.
 */
export function table({
  headers = [],
  rows = [],
  caption,
  numeric = [],
  className,
  rowHeaders = true,
  stack = false,
} = {}) {
  const t = document.createElement('table');
  t.className = `data-table${className ? ` ${className}` : ''}${stack ? ' stacks' : ''}`;
  if (caption) {
    const cap = document.createElement('caption');
    cap.textContent = caption;
    t.append(cap);
  }
  if (headers.length) {
    const thead = document.createElement('thead');
    const tr = document.createElement('tr');
    headers.forEach((h, i) => {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = h;
      if (isNumericCol(numeric, i)) th.className = 'num';
      tr.append(th);
    });
    thead.append(tr);
    t.append(thead);
  }
  const tbody = document.createElement('tbody');
  const frag = document.createDocumentFragment();
  for (const row of rows) {
    const tr = document.createElement('tr');
    row.forEach((v, i) => {
      const cell = document.createElement(i === 0 && rowHeaders ? 'th' : 'td');
      if (i === 0 && rowHeaders) cell.scope = 'row';
      if (stack && headers[i]) cell.dataset.label = headers[i];
      if (v instanceof Node) cell.append(v);
      else cell.textContent = formatCell(v);
      if (isNumericCol(numeric, i)) cell.classList.add('num');
      tr.append(cell);
    });
    frag.append(tr);
  }
  tbody.append(frag);
  t.append(tbody);
  const w = wrap(t, caption, headers);
  w.table = t;
  return w;
}

/**
 * The shapes of the stages of a computation: stages [{ stage, shape: [..], note }] -> a table
 * "stage | shape | note", shapes as (2, 4, 6, 16).
 */
export function shapeTable(stages, { caption = 'Shapes at every stage' } = {}) {
  const w = table({
    headers: ['stage', 'shape', 'note'],
    rows: stages.map((st) => {
      const code = document.createElement('code');
      code.className = 'shape';
      code.textContent = formatShape(st.shape);
      return [String(st.stage ?? ''), code, String(st.note ?? '')];
    }),
    caption,
    className: 'shape-table',
    stack: true,
  });
  return w;
}

const STATUS_TEXT = { pending: '… pending', pass: '✓ pass', fail: '✗ fail' };

/** 'pending' (nothing checked yet), 'pass' (the row's `field` <= threshold) or 'fail'. */
function checkState(r, threshold, field) {
  if (!(Number(r.checked ?? 0) > 0)) return 'pending';
  return r[field] <= threshold ? 'pass' : 'fail';
}

const FORM_KEYS = Object.keys(ERROR_FORMS); // the table's relative-error columns, in this order

/** The texts of a row's numeric cells: checked (of its size), max abs, the three relative. */
function rowNumbers(r) {
  const checked = Number(r.checked ?? 0);
  const size = Number(r.size ?? (r.shape ? r.shape.reduce((a, b) => a * b, 1) : checked));
  const rel = (f) => (checked > 0 && r[f] !== undefined ? formatSci(r[f], 2) : '—');
  return [
    checked === size ? `all ${size}` : `${checked} of ${size}`,
    checked > 0 ? formatSci(r.maxAbs, 2) : '—',
    ...FORM_KEYS.map((k) => rel(ERROR_FORMS[k].field)),
  ];
}

/**
 * A row's ⋯ button (shown on a phone only, style.css): pressed, its row gets data-open, which
 * shows the cells a phone hides. Its ⋯ is drawn by style.css: the cell's text stays the row's name.
 */
export function rowMore(label) {
  const more = el('button', {
    className: 'row-more',
    attrs: { type: 'button', 'aria-expanded': 'false', 'aria-label': label },
  });
  more.addEventListener('click', () => {
    const tr = more.closest('tr');
    const open = !tr.hasAttribute('data-open');
    tr.toggleAttribute('data-open', open);
    more.setAttribute('aria-expanded', String(open));
  });
  return more;
}

/** The cells of one tensor's row: tensor, shape, checked, max abs, the three relative, status. */
function gradcheckRow(r, state) {
  const status = el('span', { text: STATUS_TEXT[state] });
  status.className = `status status-${state}`;
  const shape = el('code', { className: 'shape', text: formatShape(r.shape) });
  // on a phone a row shows the tensor, its pass-line error and the result; ⋯ shows the rest
  const more = rowMore(`${r.tensor}: its shape, the entries checked and every error`);
  return [
    el('span', {}, el('span', { className: 'tensor-name', text: String(r.tensor) }), more),
    shape,
    ...rowNumbers(r),
    status,
  ];
}

/** How many rows pass, fail, are pending, and the worst error (row[field]) of those checked. */
function tally(list, states, field) {
  const n = { pass: 0, fail: 0, pending: 0, worst: 0 };
  list.forEach((r, i) => {
    n[states[i]] += 1;
    if (states[i] === 'pending') return;
    if (!Number.isFinite(r[field])) n.worst = Infinity;
    else if (r[field] > n.worst) n.worst = r[field];
  });
  return n;
}

/** The summary line under the table, with its class ('is-pass', 'is-fail' or none). */
function gradcheckSummary(total, n, threshold, what) {
  const thr = formatSci(threshold, 0);
  const worst = formatSci(n.worst, 2);
  if (total === 0) return { text: 'No gradient check yet.' };
  if (n.pending === total) return { text: 'Gradient check pending…' };
  if (n.fail === 0 && n.pending === 0) {
    const text = `✓ All ${n.pass} tensors pass: ${what} ${worst} ≤ ${thr}.`;
    return { text, cls: 'is-pass' };
  }
  if (n.fail === 0) {
    const so = `${n.pass} of ${total} tensors checked so far`;
    return { text: `${so}, all pass (${what} ${worst} ≤ ${thr}).` };
  }
  const text = `✗ ${n.fail} of ${total} tensors fail: ${what} ${worst} > ${thr}.`;
  return { text, cls: 'is-fail' };
}

/** "sampled: N entries per tensor …" (N: `sampled` if a number, else the most checked). */
function sampledNote(sampled, list) {
  let n = typeof sampled === 'number' ? sampled : 0;
  if (!n) for (const r of list) n = Math.max(n, Number(r.checked ?? 0));
  const text = `sampled: ${n} entries per tensor (tensors with fewer entries are checked in full).`;
  return el('p', { className: 'note gradcheck-sampled', text });
}

/**
 * The result of layer.gradcheck(): one row per tensor with its shape, how many entries were
 * checked (of its size), the max absolute error, the three relative errors of ERROR_FORMS (per
 * entry, cs231n's form, norm-wise) and "✓ pass" / "✗ fail": pass when the error of `form` (the
 * column marked "pass line") is <= threshold. Rows with nothing checked yet show "pending". When
 * `sampled` (true or the number N), a note "sampled: N entries per tensor" is shown. A summary
 * line says how many tensors pass. Returns <div class="gradcheck">.
 */
export function gradcheckTable(
  rows,
  { threshold = 1e-7, sampled = false, caption, form = 'entry' } = {},
) {
  const { field } = ERROR_FORMS[form];
  const list = Array.from(rows ?? []);
  const states = list.map((r) => checkState(r, threshold, field));
  const w = table({
    headers: [
      'tensor',
      'shape',
      'checked',
      'max abs error',
      ...FORM_KEYS.map((k) => ERROR_FORMS[k].column + (k === form ? ' (pass line)' : '')),
      'result',
    ],
    rows: list.map((r, i) => gradcheckRow(r, states[i])),
    caption,
    numeric: [2, 3, 4, 5, 6],
    className: 'gradcheck-table',
    stack: true,
  });
  // the pass line's column: the one a phone shows beside the tensor and the result
  const passCol = 4 + FORM_KEYS.indexOf(form);
  for (const tr of w.table.rows) tr.cells[passCol]?.classList.add('pass-col');
  // each row's tensor and state, for styling, tests and refreshGradcheckTable
  const trs = w.table.tBodies[0].rows;
  list.forEach((r, i) => (trs[i].dataset.tensor = String(r.tensor)));
  const phone = el('p', {
    className: 'note gradcheck-phone-note',
    text: `Each row: the tensor, its ${ERROR_FORMS[form].column} (the pass line) and the result; ⋯ shows the rest.`,
  });
  const summary = el('p', { className: 'gradcheck-summary' });
  const root = el('div', { className: 'gradcheck' }, phone, w, summary);
  root.dataset.form = form;
  showStates(root, list, states, { threshold, sampled, form });
  return root;
}

/** A table's rows' states, its summary line, its pass / fail counts and its sampled note. */
function showStates(root, list, states, { threshold, sampled, form }) {
  const trs = root.querySelector('table').tBodies[0].rows;
  states.forEach((st, i) => (trs[i].dataset.status = st));
  const n = tally(list, states, ERROR_FORMS[form].field);
  const sum = gradcheckSummary(list.length, n, threshold, ERROR_FORMS[form].column);
  const summary = root.querySelector('.gradcheck-summary');
  summary.textContent = sum.text;
  for (const cls of ['is-pass', 'is-fail']) summary.classList.toggle(cls, sum.cls === cls);
  root.dataset.pass = String(n.pass);
  root.dataset.fail = String(n.fail);
  root.querySelector('.gradcheck-sampled')?.remove();
  if (sampled) root.append(sampledNote(sampled, list));
}

/**
 * A table of gradcheckTable brought to `rows` in place (the same options but threshold and
 * sampled): its numbers, results and summary, each row's ⋯ left as the reader set it. False,
 * changing nothing, when the rows are other tensors or the caption or the pass line's form
 * differs: then make a new table.
 */
export function refreshGradcheckTable(
  root,
  rows,
  { threshold = 1e-7, sampled = false, caption, form = 'entry' } = {},
) {
  const list = Array.from(rows ?? []);
  const shown = root.querySelector('table');
  const trs = shown?.tBodies[0]?.rows;
  if (root.dataset.form !== form || !trs || trs.length !== list.length) return false;
  if ((shown.caption?.textContent ?? undefined) !== caption) return false;
  if (list.some((r, i) => trs[i].dataset.tensor !== String(r.tensor))) return false;
  const states = list.map((r) => checkState(r, threshold, ERROR_FORMS[form].field));
  list.forEach((r, i) => {
    const cells = trs[i].cells;
    rowNumbers(r).forEach((text, k) => {
      if (cells[2 + k].textContent !== text) cells[2 + k].textContent = text;
    });
    const status = cells[cells.length - 1].firstElementChild;
    status.textContent = STATUS_TEXT[states[i]];
    status.className = `status status-${states[i]}`;
  });
  showStates(root, list, states, { threshold, sampled, form });
  return true;
}

/**
 * A progress bar: <progress> plus a text "done / total (p %)". set(done, total) updates it;
 * finish(text) fills it and shows `text`. Returns { element, set, finish }.
 */
export function progressBar({ label = 'Progress' } = {}) {
  const element = document.createElement('div');
  element.className = 'progress';
  const id = uniqueId('progress');
  const lab = document.createElement('label');
  lab.className = 'progress-label';
  lab.htmlFor = id;
  lab.textContent = label;
  const bar = document.createElement('progress');
  bar.id = id;
  bar.max = 1;
  bar.value = 0;
  const text = document.createElement('span');
  text.className = 'progress-text';
  text.textContent = 'waiting…';
  const status = document.createElement('span');
  status.className = 'visually-hidden';
  status.setAttribute('role', 'status');
  element.append(lab, bar, text, status);
  let lastPct = -1;
  return {
    element,
    set(done, total) {
      const t = total > 0 ? total : 1;
      const d = Math.max(0, Math.min(done, t));
      bar.max = t;
      bar.value = d;
      const pct = Math.floor((100 * d) / t);
      if (pct !== lastPct || d === t) {
        text.textContent = `${groupThousands(d)} / ${groupThousands(t)} (${pct} %)`;
        lastPct = pct;
      }
      element.classList.remove('is-done');
    },
    finish(message) {
      bar.value = bar.max;
      text.textContent = message ?? 'done';
      status.textContent = `${label}: ${message ?? 'done'}`;
      element.classList.add('is-done');
    },
  };
}
