// common.js - helpers shared by the lessons: elements, numbers with a precision toggle, the
// figures list, "Copy as NumPy", token chips, controls with an error line, and the gradient-check
// panel (progress bar + table, run in chunks by the page's Scheduler).
// User text only ever goes through textContent / createTextNode.

import { el, setChildren, MINUS } from '../components/dom.js';
import { copyButton } from '../components/export.js';
import { heatmap } from '../components/heatmap.js';
import { gradcheckTable, progressBar, groupThousands } from '../components/tables.js';
import { reportRows, summarize } from '../model.js';

// ------------------------------------------------------------------------------------------------
// numbers

let fullPrecision = false;

/** Short display of a number: integers as is, tiny/huge in e-notation, else `digits` significant. */
export function fmt(x, digits = 6) {
  if (typeof x !== 'number') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : `${MINUS}∞`;
  if (x === 0) return '0';
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x).replace('-', MINUS);
  const a = Math.abs(x);
  let s;
  if (a < 1e-3 || a >= 1e6) {
    s = x
      .toExponential(Math.max(0, Math.min(digits, 6) - 1))
      .replace(/\.?0+e/, 'e')
      .replace('e+', 'e');
  } else s = String(Number(x.toPrecision(digits)));
  return s.replace(/-/g, MINUS);
}

/** An integer with thousands separators, 28160 -> "28,160" (toLocaleString's first call costs 50-150 ms). */
export const thousands = groupThousands;

/** Full precision: the shortest text that reads back as the same float64 (like Python's repr). */
export function full(x) {
  if (typeof x !== 'number') return String(x);
  return String(x);
}

/** A number shown short, with its full value on hover (title) and under the precision toggle. */
export function num(x, digits = 6) {
  const s = el('span', { className: 'fig-num', dataset: { full: full(x), short: fmt(x, digits) } });
  s.title = `full precision: ${full(x)}`;
  s.textContent = fullPrecision ? full(x) : fmt(x, digits);
  return s;
}

/** A list of numbers, e.g. [1.02, 0, 0, 0] -> "[1.02169, 0, 0, 0]" with each entry a num(). */
export function numList(xs, digits = 6) {
  const out = [document.createTextNode('[')];
  xs.forEach((x, i) => {
    if (i) out.push(document.createTextNode(', '));
    out.push(num(x, digits));
  });
  out.push(document.createTextNode(']'));
  return out;
}

export function isFullPrecision() {
  return fullPrecision;
}

/** Switch every number on the page between short and full precision. */
export function setFullPrecision(on) {
  fullPrecision = !!on;
  for (const s of document.querySelectorAll('span.fig-num')) {
    s.textContent = fullPrecision ? s.dataset.full : s.dataset.short;
  }
}

/** Python-style shape: (2, 4, 6, 16). */
export function shapeText(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

// ------------------------------------------------------------------------------------------------
// blocks

/**
 * The "figures" list a student compares with the notebook (a <dl class="stats">): items
 * [{ key, label, value, note }], value a number (-> num()), a string, a Node or an array of those.
 * Returns { element, set(items) }.
 */
export function figuresList(title = 'Numbers to compare with your notebook') {
  const dl = el('dl', { className: 'stats figures-list' });
  const box = el(
    'div',
    { className: 'figures', attrs: { role: 'group', 'aria-label': title } },
    el('h3', { className: 'figures-title', text: title }),
    dl,
  );
  return {
    element: box,
    set(items) {
      dl.replaceChildren();
      for (const it of items) {
        const v = typeof it.value === 'number' ? num(it.value, it.digits ?? 6) : it.value;
        const dd = el('dd', { dataset: it.key ? { figure: it.key } : undefined }, v);
        const stat = el('div', { className: 'stat' }, el('dt', { text: it.label }), dd);
        if (it.note) stat.append(el('dd', { className: 'note figure-note', text: it.note }));
        dl.append(stat);
      }
    },
  };
}

/** "Copy as NumPy" button plus a collapsible view of the same script. */
export function numpyBlock(getScript, { what = 'this lesson' } = {}) {
  const code = el('code', { className: 'language-python' });
  const pre = el('pre', { className: 'numpy' }, code);
  const details = el(
    'details',
    { className: 'numpy-script' },
    el('summary', { text: 'Show the NumPy script' }),
    pre,
  );
  const fill = () => {
    code.textContent = getScript();
  };
  details.addEventListener('toggle', () => {
    if (details.open) fill();
  });
  const btn = copyButton('Copy as NumPy', () => getScript());
  btn.classList.add('copy-numpy');
  btn.setAttribute(
    'aria-label',
    `Copy as NumPy: a runnable script that prints the numbers of ${what}`,
  );
  const note = el('span', {
    className: 'note',
    text: 'a complete script for python3 + numpy that prints the numbers shown here',
  });
  const box = el(
    'div',
    { className: 'numpy-block' },
    el('div', { className: 'actions' }, btn, note),
    details,
  );
  return {
    element: box,
    refresh() {
      if (details.open) fill();
    },
  };
}

/** A <details> with a code block (static or refreshed with set()). */
export function codeDetails(summary, text, { open = false, className = '' } = {}) {
  const code = el('code');
  code.textContent = text;
  const d = el(
    'details',
    { className: `code-details ${className}`.trim(), open },
    el('summary', { text: summary }),
    el('pre', { className: 'numpy' }, code),
  );
  return {
    element: d,
    set(t) {
      code.textContent = t;
    },
  };
}

/**
 * Token chips (<ol class="token-chips">, the index comes from the list counter): each token with
 * its embedding row; hovering or focusing one calls onHover(t) (onHover(null) on leave), so the
 * lesson can highlight its row and column.
 */
export function tokenChips(tokens, ids, onHover) {
  const list = el('ol', {
    className: 'token-chips',
    attrs: { 'aria-label': 'tokens in order; hover or focus one to highlight its row and column' },
  });
  tokens.forEach((tok, t) => {
    const chip = el(
      'li',
      { className: 'token-chip', tabIndex: 0, dataset: { t } },
      el('span', { className: 'token-text', text: tok }),
      ids ? el('span', { className: 'note token-row', text: `row ${ids[t]}` }) : null,
    );
    chip.title = `token ${t}: “${tok}”${ids ? `, row ${ids[t]} of E` : ''}`;
    const on = () => {
      chip.classList.add('is-active');
      onHover?.(t);
    };
    const off = () => {
      chip.classList.remove('is-active');
      onHover?.(null);
    };
    chip.addEventListener('mouseenter', on);
    chip.addEventListener('focus', on);
    chip.addEventListener('mouseleave', off);
    chip.addEventListener('blur', off);
    list.append(chip);
  });
  return list;
}

/**
 * A labelled control for a .controls row: <label>text <input></label> (checkbox: box first, then
 * text, on one line). With a hint: [label, <span class="note">hint</span>] (el() and the
 * .controls row take arrays).
 */
export function field(labelText, control, hint) {
  const isBox = control.type === 'checkbox';
  const text = el('span', { className: 'label-text', text: labelText });
  const lab = el(
    'label',
    { attrs: { for: control.id } },
    isBox ? [control, text] : [text, control],
  );
  if (isBox) lab.classList.add('control-inline');
  if (control.type === 'text') lab.classList.add('grow');
  if (!hint) return lab;
  return [lab, el('span', { className: 'note hint', text: hint })];
}

/** An error line (class "error", role="alert", hidden while empty) next to controls. */
export function errorLine(id) {
  const p = el('p', { id, className: 'error', attrs: { role: 'alert' } });
  return {
    element: p,
    set(msg) {
      const lines = Array.isArray(msg) ? msg : [msg];
      p.replaceChildren();
      lines.forEach((m, i) => {
        if (i) p.append(' ', el('br'));
        p.append(document.createTextNode(m));
      });
    },
    clear() {
      p.replaceChildren();
    },
    get text() {
      return p.textContent;
    },
  };
}

/** Debounce f by ms. */
export function debounce(f, ms) {
  let timer = 0;
  const g = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => f(...args), ms);
  };
  g.flush = (...args) => {
    clearTimeout(timer);
    f(...args);
  };
  return g;
}

/** Token labels for heatmap axes: duplicates are fine (the index is in the readout). */
export function tokenLabels(tokens) {
  return tokens.map((t) => String(t));
}

/** A row of figures that wraps. */
export function figureRow(...children) {
  return el('div', { className: 'figure-row' }, ...children);
}

// ------------------------------------------------------------------------------------------------
// gradient check panel

/**
 * A gradient-check panel: <div id=id> holding a progress bar, the table and a summary. Runs jobs
 * on the page's scheduler; run() cancels a check in progress and starts over (restart-safe).
 * The container gets data-done="1" when a full (not sampled) check for the current settings has
 * finished, and data-state = running | done | sampled | cancelled | error.
 */
export class GradcheckPanel {
  constructor({ id, scheduler, threshold, caption, label = 'Gradient check' }) {
    this.scheduler = scheduler;
    this.threshold = threshold;
    this.caption = caption;
    this.label = label;
    this.job = null;
    this.rows = null; // JSON-able rows of the last finished check (null until then)
    this.sampled = false;
    this.report = null;
    this.element = el('div', {
      id,
      className: 'gradcheck-panel',
      attrs: { 'aria-live': 'polite' },
    });
    this.progressSlot = el('div', { className: 'progress-slot' });
    this.tableSlot = el('div', { className: 'table-slot' });
    this.status = el('p', { className: 'gradcheck-status note' });
    this.element.append(this.progressSlot, this.tableSlot, this.status);
    this.listeners = [];
  }

  onChange(f) {
    this.listeners.push(f);
  }

  cancel() {
    if (this.job) {
      this.job.cancel();
      this.job = null;
    }
  }

  /** Show a table of pending rows (see pendingReport) and a status line, without running anything. */
  showPending(text, rows) {
    this.status.textContent = text;
    if (rows) {
      this.tableSlot.replaceChildren(
        gradcheckTable(rows, { threshold: this.threshold, caption: this.caption }),
      );
    }
  }

  /**
   * Run a check: start is a Scheduler start function (see gradcheckJob); samples: 0 = every entry.
   * opts: { samples, priority, total, onDone(rows), sliceMs (the scheduler's default if unset) }.
   */
  run(start, { samples = 0, priority = 1, total, onDone, sliceMs } = {}) {
    this.cancel();
    const sampled = samples > 0;
    delete this.element.dataset.done;
    this.element.dataset.state = 'running';
    this.element.dataset.kind = sampled ? 'sampled' : 'full';
    const bar = progressBar({
      label: sampled
        ? `${this.label} (sampled, ${samples} entries per tensor)`
        : `${this.label} (every entry)`,
    });
    if (total) bar.set(0, total);
    this.progressSlot.replaceChildren(bar.element);
    this.status.textContent = sampled
      ? 'Running a sampled check…'
      : 'Running the full check in small chunks; the page stays usable meanwhile.';
    const t0 = performance.now();
    let lastTable = 0;
    const job = this.scheduler.submit({
      start,
      priority,
      sliceMs,
      name: this.element.id,
      onProgress: (p) => {
        bar.set(p.done, p.total);
        const now = performance.now();
        if (now - lastTable < 250) return; // the table at most 4 times a second
        lastTable = now;
        this.tableSlot.replaceChildren(
          gradcheckTable(p.report, {
            threshold: this.threshold,
            sampled: sampled ? samples : false,
            caption: this.caption,
          }),
        );
      },
      onDone: (p) => {
        if (this.job !== job) return;
        this.job = null;
        const secs = (performance.now() - t0) / 1000;
        // for the page benchmark: mha:gradcheck:<panel id> (mark: when it finished; measure: from
        // its start, sharing the scheduler with whatever else was going on; detail.busyMs: the
        // time in its own slices)
        const mark = `mha:gradcheck:${this.element.id}${sampled ? ':sampled' : ''}`;
        performance.mark(mark);
        performance.measure(mark, {
          start: t0,
          end: performance.now(),
          detail: { busyMs: job.busyMs },
        });
        this.report = p.report;
        this.rows = reportRows(p.report);
        this.sampled = sampled;
        const sum = summarize(p.report, this.threshold);
        bar.finish(`${thousands(sum.checked)} entries checked in ${secs.toFixed(1)} s`);
        this.tableSlot.replaceChildren(
          gradcheckTable(p.report, {
            threshold: this.threshold,
            sampled: sampled ? samples : false,
            caption: this.caption,
          }),
        );
        this.element.dataset.state = sampled ? 'sampled' : 'done';
        if (!sampled) this.element.dataset.done = '1';
        this.status.textContent = sampled
          ? `Sampled check: ${samples} evenly spaced entries per tensor (every entry of smaller tensors). Run the full check for every entry.`
          : `Every entry checked (${thousands(sum.checked)}).`;
        onDone?.(this.rows);
        for (const f of this.listeners) f(this);
      },
      onError: (err) => {
        if (this.job !== job) return;
        this.job = null;
        this.element.dataset.state = 'error';
        bar.finish('stopped');
        this.status.textContent = `The check stopped: ${err.message}`;
      },
    });
    this.job = job;
    return job;
  }

  /** Forget results (settings changed): the table shows what is being computed next. */
  invalidate(text = 'Settings changed; the check will run again.') {
    this.cancel();
    delete this.element.dataset.done;
    this.element.dataset.state = 'cancelled';
    this.rows = null;
    this.report = null;
    this.status.textContent = text;
  }
}

// ------------------------------------------------------------------------------------------------
// progressive figures

/**
 * Figures are built progressively so the page's first render stays fast: lazyHeatmap() returns
 * the heatmap interface ({ element, update, highlight }) at once, with a light placeholder in
 * the page; the real heatmap is built when the placeholder comes near the viewport, or by
 * buildPendingFigures() right after the first render (in document order, in small slices), or
 * immediately when eager is true. update()/highlight() before that just remember the latest
 * state. When every figure exists, <html data-figures="1"> and performance mark 'mha:figures'.
 */
const pending = new Set();
let observer = null;

function estimateHeight(o) {
  const n = Math.max(o.rows, o.cols);
  const cell =
    o.cellSize ??
    (n <= 6
      ? 48
      : n <= 10
        ? 42
        : n <= 16
          ? 30
          : n <= 24
            ? 22
            : n <= 32
              ? 18
              : Math.max(3, Math.min(14, Math.floor(640 / n))));
  return Math.round(o.rows * cell + 190);
}

function observe(lazy) {
  if (typeof IntersectionObserver !== 'function') return;
  if (!observer) {
    observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) if (e.isIntersecting) e.target.__lazyFigure?.build();
      },
      { rootMargin: '600px 0px 600px 0px' },
    );
  }
  observer.observe(lazy.placeholder);
}

export function lazyHeatmap(options, { eager = false, className = '' } = {}) {
  let opts = { ...options };
  let hm = null;
  let lastHighlight = null;
  const placeholder = el(
    'div',
    {
      className: `figure-placeholder ${className}`.trim(),
      attrs: { 'aria-busy': 'true' },
      dataset: { pending: '1' },
    },
    el('p', { className: 'note', text: `${opts.title ?? 'figure'}: drawing…` }),
  );
  placeholder.style.minHeight = `${estimateHeight(opts)}px`;
  const lazy = {
    placeholder,
    build() {
      if (hm) return hm;
      pending.delete(lazy);
      observer?.unobserve(placeholder);
      hm = heatmap(opts);
      if (className) hm.element.classList.add(...className.split(/\s+/));
      if (placeholder.isConnected) placeholder.replaceWith(hm.element);
      if (lastHighlight) hm.highlight(...lastHighlight);
      checkAllBuilt();
      return hm;
    },
  };
  placeholder.__lazyFigure = lazy;
  const api = {
    get element() {
      return hm ? hm.element : placeholder;
    },
    get built() {
      return !!hm;
    },
    update(data, o = {}) {
      if (hm) {
        hm.update(data, o);
        return;
      }
      opts = { ...opts, ...o };
      if (data !== undefined && data !== null) opts.data = data;
    },
    highlight(r, c) {
      lastHighlight = [r, c];
      if (hm) hm.highlight(r, c);
    },
    build: () => lazy.build(),
  };
  if (eager || readyForNotice) {
    lazy.build();
  } // after the first render: no reason to wait
  else pending.add(lazy); // observed from buildPendingFigures() on
  return api;
}

let allBuiltNotified = false;
let readyForNotice = false;
function checkAllBuilt() {
  if (!readyForNotice || allBuiltNotified || pending.size) return;
  allBuiltNotified = true;
  performance.mark('mha:figures');
  document.documentElement.dataset.figures = '1';
}

/** Build every figure not built yet, in document order, on the scheduler at `priority`. */
export function buildPendingFigures(scheduler, priority) {
  readyForNotice = true;
  for (const l of pending) observe(l);
  if (!pending.size) {
    checkAllBuilt();
    return;
  }
  scheduler.submit({
    priority,
    name: 'figures',
    sliceMs: 40, // several figures per slice: fewer layout passes in between
    start: () => ({
      iterator: (function* () {
        while (pending.size) {
          for (const l of pending) {
            if (!l.placeholder.isConnected) {
              pending.delete(l);
              observer?.unobserve(l.placeholder);
            }
          }
          const list = [...pending];
          if (!list.length) break;
          list.sort((a, b) =>
            a.placeholder.compareDocumentPosition(b.placeholder) & Node.DOCUMENT_POSITION_FOLLOWING
              ? -1
              : 1,
          );
          list[0].build();
          yield pending.size;
        }
      })(),
    }),
    onDone: () => checkAllBuilt(),
  });
}

export { el, setChildren };
