// gradcheck-panel.js - a gradient check on screen: progress bar, the report table and a status
// line, for a check run by the page's compute engine (web/jobs/compute.js: in a worker, or in
// slices on the main thread).

import { el } from './dom.js';
import { gradcheckTable, progressBar, groupThousands, refreshGradcheckTable } from './tables.js';
import { formatSci } from './scales.js';
import { timeLeftText } from '../model/format.js';
import {
  ERROR_FORMS,
  conventionThreshold,
  errorContrastText,
  orderedRows,
  reportRows,
  summarize,
} from '../model/gradcheck-report.js';
import { conventionControls, conventionText } from './gradcheck-convention.js';

const TABLE_EVERY_MS = 250; // the table at most 4 times a second while a check runs

/**
 * A gradient-check panel: <div id=id> holding a progress bar, the table and a summary. Runs
 * checks on the page's compute engine; run() cancels a check in progress and starts over.
 * The container gets data-done="1" when a full (not sampled) check for the current settings has
 * finished, and data-state = running | done | sampled | cancelled | error. order (optional,
 * backwardOrder(mha)): the table and its line show the rows in lesson 4's backward order, each
 * named by its gradient (dWo ... dX); rows and report keep the module's order and names.
 * The panel's convention controls (gradcheck-convention.js) choose the stencil and ε the check runs
 * with (a change runs it again) and the relative error its pass line reads; `threshold` is the
 * line of the five-point stencil and the per-entry error, scaled for the others
 * (conventionThreshold).
 */
export class GradcheckPanel {
  constructor({ id, compute, threshold, caption, label = 'Gradient check', order = null }) {
    this.compute = compute;
    this.base = threshold;
    this.title = caption;
    this.label = label;
    this.order = order;
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
    // one line under the table: the per-entry max relative error against the norm-wise one
    this.contrast = el('p', { className: 'gradcheck-contrast note' });
    this.#contrast(null);
    this.status = el('p', { className: 'gradcheck-status note' });
    this.last = null; // the last run's { check, options }, run again when the convention changes
    this.pending = null; // the rows of showPending, until a check reports
    this.conventions = conventionControls(id, (c, what) => this.#conventionChanged(what));
    this.element.append(
      this.conventions.element,
      this.progressSlot,
      this.tableSlot,
      this.contrast,
      this.status,
    );
    this.listeners = [];
  }

  /** The convention in use: { stencil, eps, form }. */
  get convention() {
    return this.conventions.value();
  }

  /** The pass line of the convention in use. */
  get threshold() {
    return conventionThreshold(this.base, this.convention);
  }

  set threshold(base) {
    this.base = base;
  }

  /** The table's caption: the check's title and the convention it ran with. */
  get caption() {
    return `${this.title}; ${conventionText(this.convention)}`;
  }

  #conventionChanged(what) {
    if (what === 'run' && this.last) {
      this.run(this.last.check, this.last.options);
      return;
    }
    const rows = this.report ?? this.pending;
    if (rows) this.#table({ sampled: !!this.report && this.sampled, samples: true }, rows);
    if (this.report) this.#summaryChanged();
  }

  /** After the pass line moved (another form): tell the listeners, as a finished check does. */
  #summaryChanged() {
    for (const f of this.listeners) f(this);
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

  /** A report's rows as the table shows them: in this.order, named by gradient, if it is set. */
  #shown(rows) {
    return this.order ? orderedRows(rows, this.order) : rows;
  }

  /** Show a table of pending rows (see pendingReport) and a status line; runs nothing. */
  showPending(text, rows) {
    this.status.textContent = text;
    if (rows) {
      this.pending = rows;
      this.#table({ sampled: false }, rows);
    }
  }

  /**
   * Run a check: check = { C, heads, W, X, opts } as compute.gradcheck takes them (opts.samples:
   * 0 = every entry). o: { priority, total, onDone(rows), sliceMs (main thread only), group }.
   */
  run(check, options = {}) {
    this.cancel();
    this.last = { check, options };
    const { stencil, eps } = this.convention;
    return this.#submit({ ...check, opts: { ...check.opts, stencil, eps } }, options);
  }

  #submit(check, { priority = 1, total, onDone, sliceMs, group }) {
    const samples = check.opts?.samples ?? 0;
    const run = { samples, sampled: samples > 0, onDone, t0: 0, lastTable: 0, job: null };
    run.bar = this.#begin(run, total);
    run.t0 = performance.now();
    const job = this.compute.gradcheck({
      ...check,
      priority,
      sliceMs,
      group,
      name: this.element.id,
      label: this.label,
      onProgress: (p) => this.#progress(run, p),
    });
    job.promise.then(
      (report) => this.#done(run, { report }),
      (err) => {
        if (!err.cancelled) this.#failed(run, err);
      },
    );
    run.job = job;
    this.job = job;
    return job;
  }

  /** Where the check runs, for the status line. */
  #where() {
    const n = this.compute.size;
    if (this.compute.kind !== 'worker') return 'in small chunks on this page';
    return n > 1 ? `in ${n} background workers` : 'in a background worker';
  }

  /** The panel's state for a new run: progress bar, status line; returns the bar. */
  #begin(run, total) {
    delete this.element.dataset.done;
    this.element.dataset.state = 'running';
    this.element.dataset.kind = run.sampled ? 'sampled' : 'full';
    this.#contrast(null);
    const bar = progressBar({
      label: run.sampled
        ? `${this.label} (sampled, ${run.samples} entries per tensor)`
        : `${this.label} (every entry)`,
    });
    if (total) bar.set(0, total);
    this.progressSlot.replaceChildren(bar.element);
    run.running = run.sampled
      ? 'Running a sampled check…'
      : `Running the full check ${this.#where()}; the page stays usable meanwhile.`;
    this.status.textContent = run.running;
    return bar;
  }

  /** The line telling the two errors apart, quoting a finished report's figures (null: none). */
  #contrast(report) {
    const rows = report && this.#shown(report);
    this.contrast.textContent = errorContrastText(rows, (x) => formatSci(x, 2));
  }

  /** The table of `report`'s rows: the one shown brought up to date where it can be, else new. */
  #table(run, report) {
    const rows = this.#shown(report);
    const opts = {
      threshold: this.threshold,
      sampled: run.sampled ? run.samples : false,
      caption: this.caption,
      form: this.convention.form,
    };
    const shown = this.tableSlot.firstElementChild;
    if (shown && refreshGradcheckTable(shown, rows, opts)) return;
    this.tableSlot.replaceChildren(gradcheckTable(rows, opts));
  }

  #progress(run, p) {
    if (this.job !== run.job) return;
    run.bar.set(p.done, p.total);
    const now = performance.now();
    if (now - run.lastTable < TABLE_EVERY_MS) return;
    run.lastTable = now;
    this.#table(run, p.report);
    this.status.textContent = `${run.running}${timeLeftText(p.etaMs)}`;
  }

  /**
   * For the page benchmark: mha:gradcheck:<panel id> (mark: when it finished; measure: from its
   * start, sharing the workers or the main thread with whatever else was going on; detail.busyMs:
   * the time in its own slices, summed over the workers of a split check).
   */
  #measure(run) {
    const mark = `mha:gradcheck:${this.element.id}${run.sampled ? ':sampled' : ''}`;
    performance.mark(mark);
    performance.measure(mark, {
      start: run.t0,
      end: performance.now(),
      detail: { busyMs: run.job.busyMs },
    });
  }

  #done(run, p) {
    if (this.job !== run.job) return;
    this.job = null;
    const secs = (performance.now() - run.t0) / 1000;
    this.#measure(run);
    this.report = p.report;
    this.rows = reportRows(p.report);
    this.sampled = run.sampled;
    const sum = summarize(p.report, this.threshold, ERROR_FORMS[this.convention.form].field);
    const shared = run.job.sharedWith;
    const other = shared && `the ${shared.replace(/^[A-Z](?=[a-z])/, (ch) => ch.toLowerCase())}`;
    run.bar.finish(
      shared
        ? `${groupThousands(sum.checked)} entries checked, once for this and ${other}`
        : `${groupThousands(sum.checked)} entries checked in ${secs.toFixed(1)} s`,
    );
    this.#table(run, p.report);
    this.#contrast(p.report);
    this.element.dataset.state = run.sampled ? 'sampled' : 'done';
    if (!run.sampled) this.element.dataset.done = '1';
    this.status.textContent = run.sampled
      ? `Sampled check: ${run.samples} evenly spaced entries per tensor (every entry of smaller tensors). Run the full check for every entry.`
      : `Every entry checked (${groupThousands(sum.checked)}).${
          shared
            ? ` Its inputs are those of ${other}, so the page ran that check once for both.`
            : ''
        }`;
    run.onDone?.(this.rows);
    for (const f of this.listeners) f(this);
  }

  #failed(run, err) {
    if (this.job !== run.job) return;
    this.job = null;
    this.element.dataset.state = 'error';
    run.bar.finish('stopped');
    this.status.textContent = `The check stopped: ${err.message}`;
  }

  /** Forget results (settings changed): the table shows what is being computed next. */
  invalidate(text = 'Settings changed; the check will run again.') {
    this.cancel();
    delete this.element.dataset.done;
    this.element.dataset.state = 'cancelled';
    this.rows = null;
    this.report = null;
    this.last = null;
    this.#contrast(null);
    this.status.textContent = text;
  }
}
