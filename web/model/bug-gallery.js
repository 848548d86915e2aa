// bug-gallery.js - "A gallery of common bugs" (DOM-free): every known mistake of the notebook
// check's catalogue (web/check/catalogue.js: a record that names edits of the course's program)
// done once on the course's arrays of lessons 3 and 4, and what the check says of it.
//
// For each such record, the first edit it names (at the first of its sites where the course's
// program has one: the check's edit search makes it, namedEdit finds it) replaces the course's
// step at that site: the gallery keeps the mistaken tensor there and the course's, then writes a
// notebook of the course's arrays computed with that one step done the student's way and runs
// checkNotebook on it, as the page's "Check your notebook" does, keeping the check's row for the
// mistake. The records with no edit (the analyses, the kinds of edit of the lines and of the
// loop, the check's wording of a result) are listed as text, with why. Nothing here lists
// mistakes: a new record of the catalogue shows up by itself.
//
// The notebook uses the MSE loss of lesson 5 with target = Y − (Y.size / 2) · dY: its gradient
// 2 (Y − target) / Y.size is lesson 4's dY, and the mistakes of the loss (mse-loss-sum,
// mse-grad-factor) have a step to show.

import {
  MISTAKES,
  editVariant,
  namedEdit,
  namesEdit,
  rightLine,
  studentLines,
  checkNotebook,
  resultOrder,
  Pipeline,
  tensorPlan,
  acceptedShapes,
  shownName,
} from '../check.js';
import { COURSE } from './defaults.js';
import { courseData } from './course.js';
import { block2d } from './arrays.js';

/** The largest corner of a (C, C) array the gallery draws (rows and columns). */
export const CORNER = 16;

/** Why a record of the catalogue has no figure in the gallery, by what the record is. */
export const TEXT_ONLY_REASONS = Object.freeze({
  analysis:
    'found by an analysis that proves a relation on your own arrays; the record holds no ' +
    'mistaken line to run on the course’s arrays',
  wording: 'how the check words a result, not a mistake of its own',
  edit:
    'a kind of edit of the course’s lines (or of lesson 5’s loop) that the check’s search ' +
    'tries on your own arrays: many lines, not one to draw',
  sizes: 'no mistaken step at the course’s sizes',
});

/** The check's sizes for the course's arrays (no causal mask, the MSE loss). */
export function gallerySizes({ B, T, C }, heads = COURSE.heads) {
  return { B, T, C, heads, hs: C / heads, N: B * T, n: B * T * C, causal: false, loss: 'mse' };
}

function textReason(record) {
  if (record.edits) return 'sizes';
  if (record.analyses) return 'analysis';
  if (/^edit of the /.test(record.kind ?? '')) return 'edit';
  return 'wording';
}

// The first edit a record names at sizes s, at the first of its sites that has one: { site, edit }
function firstNamed(record, s) {
  for (const site of record.edits?.flatMap((n) => n.sites) ?? []) {
    const edit = namedEdit(site, s, (e) => namesEdit(record, site, e));
    if (edit) return { site, edit };
  }
  return null;
}

/**
 * The catalogue's records as the gallery shows them, in its order: { shown: [{ id, message, site,
 * variant, what, courseLine }], textOnly: [{ id, message, reason, why }] }. `what` is the
 * student's line (the edit's), `courseLine` the course's line for the same step (rightLine).
 */
export function galleryEntries(s, records = MISTAKES) {
  const shown = [];
  const textOnly = [];
  for (const record of records) {
    const named = firstNamed(record, s);
    if (!named) {
      const reason = textReason(record);
      textOnly.push({
        id: record.id,
        message: record.message,
        reason,
        why: TEXT_ONLY_REASONS[reason],
      });
      continue;
    }
    const { site, edit } = named;
    shown.push({
      id: record.id,
      message: record.message,
      site,
      variant: editVariant(edit, site, s),
      what: studentLines([{ site, edit }], (n) => n),
      courseLine: rightLine(record.id, site, s),
    });
  }
  return { shown, textOnly };
}

/** The shape of a node of the check's graph (Qm: (B, T, C); Q: (B, h, T, hs); loss: ()). */
export function siteShape(site, s) {
  const forms = acceptedShapes(shownName(site), s);
  return [...(forms.find((f) => f.node === site) ?? forms[0]).shape];
}

const INPUT_SHAPES = (s) => ({ X: [s.B, s.T, s.C], target: [s.B, s.T, s.C] });

/**
 * What every case shares: the sizes, the inputs (the course's X and weights, and the target whose
 * MSE gradient is lesson 4's dY), the result names the check reads, and a pipeline of the
 * course's steps. data: courseData(mha) or a notebook's { X, W, dY, B, T, C, heads? }.
 */
export function galleryContext(mha, data = courseData(mha)) {
  const s = gallerySizes(data, data.heads ?? COURSE.heads);
  const weights = Object.fromEntries(
    Object.entries(data.W).map(([k, w]) => [k, Float64Array.from(w)]),
  );
  const X = Float64Array.from(data.X);
  const Y = new Pipeline({ ...s, loss: null }, { X, ...weights }).value('Y');
  const half = s.n / 2;
  const target = Y.map((y, i) => y - half * data.dY[i]);
  const inputs = { X, ...weights, target };
  const names = resultOrder(tensorPlan(mha), s.loss);
  return { s, inputs, names, pipe: new Pipeline(s, inputs) };
}

/** The notebook of the course's arrays with `extra`'s mistaken step: checkNotebook's arrays. */
function notebookArrays(ctx, extra) {
  const { s, inputs, pipe, names } = ctx;
  const shapes = INPUT_SHAPES(s);
  const arrays = {};
  for (const [name, data] of Object.entries(inputs)) {
    arrays[name] = { data, shape: shapes[name] ?? [s.C, s.C], dtype: '<f8' };
  }
  for (const name of names) {
    const shape = acceptedShapes(name, s)[0].shape;
    arrays[name] = { data: pipe.value(name, extra), shape, dtype: '<f8' };
  }
  return arrays;
}

/**
 * max |mistaken − right| and ‖mistaken‖ / ‖right‖ over the entries finite in both, and how many
 * entries are not (−inf of a mask, NaN): { maxAbs, ratio (null when ‖right‖ is 0), nonFinite }.
 */
export function siteNumbers(mistaken, right) {
  let maxAbs = 0;
  let nonFinite = 0;
  let yy = 0;
  let rr = 0;
  for (let i = 0; i < right.length; i++) {
    const [y, r] = [mistaken[i], right[i]];
    if (!Number.isFinite(y) || !Number.isFinite(r)) {
      nonFinite += 1;
      continue;
    }
    maxAbs = Math.max(maxAbs, Math.abs(y - r));
    yy += y * y;
    rr += r * r;
  }
  return { maxAbs, ratio: rr > 0 ? Math.sqrt(yy / rr) : null, nonFinite };
}

/**
 * The (rows, cols) piece of a site's tensor the gallery draws: (B, h, T, ·) at [0, 0], (B, T, C)
 * at [0], a (C, C) weight's top-left CORNER × CORNER; null for a scalar (the loss). Returns
 * { data, rows, cols, where }.
 */
export function siteView(data, shape) {
  if (shape.length === 4) {
    const [, , rows, cols] = shape;
    return { data: block2d(data, 0, rows, cols), rows, cols, where: '[0, 0]' };
  }
  if (shape.length === 3) {
    const [, rows, cols] = shape;
    return { data: block2d(data, 0, rows, cols), rows, cols, where: '[0]' };
  }
  if (shape.length !== 2) return null;
  const [R, Cc] = shape;
  const rows = Math.min(R, CORNER);
  const cols = Math.min(Cc, CORNER);
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) out.set(data.subarray(i * Cc, i * Cc + cols), i * cols);
  const where = rows < R || cols < Cc ? `[:${rows}, :${cols}]` : '';
  return { data: out, rows, cols, where };
}

/**
 * One mistake on the course's arrays: the entry with { shape, mistaken, right (the course's
 * tensor at the site), numbers (siteNumbers), row (the check's row naming the mistake, else its
 * first row with a cause of its own), recognised (that row's diagnosis is the record's id),
 * summary ({ differs, follows }: how many rows differ, how many only follow) } or { error }.
 */
export function galleryCase(mha, ctx, entry) {
  const { s, pipe } = ctx;
  try {
    const extra = new Map([
      [entry.site, { variant: { ...entry.variant, id: entry.id }, param: entry.id }],
    ]);
    const mistaken = pipe.value(entry.site, extra);
    const right = pipe.value(entry.site);
    const report = checkNotebook(mha, notebookArrays(ctx, extra), {
      heads: s.heads,
      causal: s.causal,
    });
    const differing = report.rows.filter((r) => r.status === 'differs');
    const own = differing.filter((r) => r.diagnosis && r.diagnosis.id !== 'follows-from');
    const row = own.find((r) => r.diagnosis.id === entry.id) ?? own[0] ?? differing[0] ?? null;
    return {
      ...entry,
      shape: siteShape(entry.site, s),
      mistaken,
      right,
      numbers: siteNumbers(mistaken, right),
      row,
      recognised: row?.diagnosis?.id === entry.id,
      summary: { differs: differing.length, follows: differing.length - own.length },
    };
  } catch (e) {
    return { ...entry, error: String(e?.message ?? e) };
  }
}

/** The whole gallery at once: { s, cases: galleryCase for each shown entry, textOnly }. */
export function bugGallery(mha, { data } = {}) {
  const ctx = galleryContext(mha, data ?? courseData(mha));
  const { shown, textOnly } = galleryEntries(ctx.s);
  return { s: ctx.s, cases: shown.map((e) => galleryCase(mha, ctx, e)), textOnly };
}

/**
 * The two maps of a case, on one scale: { name (the tensor as the student saves it), yours,
 * course (siteView of the mistaken and of the course's tensor), scale ('unit' for att, else
 * 'diverging'), maxAbs (the largest finite |entry| of the two views) }; null for a scalar site or
 * a case without arrays.
 */
export function galleryFigure(c) {
  if (!c?.mistaken || !c.right || !c.shape) return null;
  const yours = siteView(c.mistaken, c.shape);
  const course = siteView(c.right, c.shape);
  if (!yours || !course) return null;
  let maxAbs = 0;
  for (const v of [...yours.data, ...course.data]) {
    if (Number.isFinite(v)) maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  const scale = c.site === 'att' ? 'unit' : 'diverging';
  return { name: shownName(c.site), yours, course, scale, maxAbs };
}
