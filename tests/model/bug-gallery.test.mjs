// The gallery of common bugs (web/model/bug-gallery.js): every record of the check's catalogue
// appears once (drawn when it has a mistaken step, in words otherwise), the check recognises every
// drawn mistake as that record's, and the mistaken tensors agree with formulas written here with
// plain loops on the course's arrays (X, W, dY of default_rng(42)), not with the check's steps.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA } from '../helpers.mjs';
import { MISTAKES } from '../../web/check/catalogue.js';
import { COURSE } from '../../web/model/defaults.js';
import { courseData } from '../../web/model/course.js';
import {
  CORNER,
  bugGallery,
  galleryCase,
  galleryContext,
  galleryEntries,
  galleryFigure,
  gallerySizes,
  siteNumbers,
  siteView,
} from '../../web/model/bug-gallery.js';

const mha = await loadMHA();
const data = courseData(mha);
const gallery = bugGallery(mha);
const s = gallerySizes(COURSE);
const caseOf = (id) => gallery.cases.find((c) => c.id === id);
const { B, T, C, heads: H, hs } = s;

/** Largest |a − b| relative to the largest |b| (both finite, same length). */
function relErr(a, b) {
  assert.equal(a.length, b.length);
  let d = 0;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i] - b[i]));
    m = Math.max(m, Math.abs(b[i]));
  }
  return d / m;
}

/** X @ W (transposed: X @ W.T) split into heads, (B, h, T, hs), by plain loops. */
function splitProjection(W, transposed = false) {
  const out = new Float64Array(B * H * T * hs);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let o = 0; o < C; o++) {
        let acc = 0;
        for (let c = 0; c < C; c++) {
          acc += data.X[(b * T + t) * C + c] * (transposed ? W[o * C + c] : W[c * C + o]);
        }
        const [h, d] = [Math.floor(o / hs), o % hs];
        out[((b * H + h) * T + t) * hs + d] = acc;
      }
    }
  }
  return out;
}

/** Q Kᵀ per (batch item, head), (B, h, T, T), by plain loops. */
function qkT(Q, K) {
  const out = new Float64Array(B * H * T * T);
  for (let bh = 0; bh < B * H; bh++) {
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        let acc = 0;
        for (let d = 0; d < hs; d++) acc += Q[(bh * T + i) * hs + d] * K[(bh * T + j) * hs + d];
        out[(bh * T + i) * T + j] = acc;
      }
    }
  }
  return out;
}

const Q = splitProjection(data.W.Wq);
const K = splitProjection(data.W.Wk);

test('every record of the catalogue is in the gallery exactly once: drawn or in words', () => {
  const ids = [...gallery.cases, ...gallery.textOnly].map((e) => e.id);
  assert.deepEqual([...ids].sort(), MISTAKES.map((m) => m.id).sort());
  assert.equal(new Set(ids).size, ids.length);
  // every known mistake (a record with a mistaken step at these sizes) is drawn
  const known = MISTAKES.filter((m) => m.edits).map((m) => m.id);
  assert.deepEqual(
    gallery.cases.map((c) => c.id),
    known,
  );
  assert.ok(known.length >= 16, `${known.length} known mistakes`);
  for (const t of gallery.textOnly) {
    const record = MISTAKES.find((m) => m.id === t.id);
    assert.equal(record.edits, undefined, t.id);
    let expected = 'wording'; // follows-from, step-differs
    if (record.analyses) expected = 'analysis';
    else if (/^edit of the /.test(record.kind ?? '')) expected = 'edit';
    assert.equal(t.reason, expected, t.id);
    assert.ok(t.why.length > 20 && t.message === record.message, t.id);
  }
});

test("the check's row of every drawn mistake names that mistake", () => {
  for (const c of gallery.cases) {
    assert.equal(c.error, undefined, c.id);
    assert.equal(c.row.status, 'differs', c.id);
    assert.equal(c.row.diagnosis.id, c.id, `${c.id}: ${c.row.name} ${c.row.diagnosis.message}`);
    assert.equal(c.recognised, true, c.id);
    assert.ok(c.row.diagnosis.message.length > 0, c.id);
    assert.ok(c.summary.differs >= 1 && c.summary.follows === c.summary.differs - 1, c.id);
    assert.ok(c.numbers.maxAbs > 0 || c.numbers.nonFinite > 0, c.id);
    assert.ok(c.what.endsWith(c.variant.what()), c.id);
  }
});

test('a new record naming an edit shows up by itself, and a failing one is an error', () => {
  const ctx = galleryContext(mha, data);
  const extra = {
    id: 'no-exp',
    tensors: ['att'],
    message: 'the exponential left out of the softmax',
    edits: [{ sites: ['att'], kinds: ['exp-dropped'], where: () => true }],
  };
  // Wo @ concat: a shape NumPy refuses at these sizes
  const broken = {
    id: 'broken',
    tensors: [],
    message: 'broken',
    edits: [{ sites: ['Y'], kinds: ['operands-swapped'], where: () => true }],
  };
  const { shown } = galleryEntries(s, [...MISTAKES, extra, broken]);
  const entry = shown.find((e) => e.id === 'no-exp');
  assert.ok(entry);
  const c = galleryCase(mha, ctx, entry);
  assert.equal(c.error, undefined);
  assert.equal(c.what, 'e = scores - scores.max(axis=-1, keepdims=True)');
  // (scores − row max) / its row sum, by loops
  const scores = caseOf('missing-scale').right;
  const expected = new Float64Array(scores.length);
  for (let row = 0; row < scores.length / T; row++) {
    const r = scores.subarray(row * T, row * T + T);
    const max = Math.max(...r);
    const sum = r.reduce((a, x) => a + (x - max), 0);
    for (let j = 0; j < T; j++) expected[row * T + j] = (r[j] - max) / sum;
  }
  assert.ok(relErr(c.mistaken, expected) < 1e-12);
  assert.equal(c.recognised, false); // the catalogue does not name it
  const failed = galleryCase(
    mha,
    ctx,
    shown.find((e) => e.id === 'broken'),
  );
  assert.ok(failed.error.length > 0);
  assert.equal(failed.row, undefined);
});

test('missing-scale: scores = Q Kᵀ with no / √hs, the course’s with it (plain loops)', () => {
  const c = caseOf('missing-scale');
  assert.equal(c.site, 'scores');
  assert.deepEqual(c.shape, [B, H, T, T]);
  const QK = qkT(Q, K);
  assert.ok(relErr(c.mistaken, QK) < 1e-12);
  assert.ok(
    relErr(
      c.right,
      QK.map((x) => x / Math.sqrt(hs)),
    ) < 1e-12,
  );
  assert.ok(Math.abs(c.numbers.ratio - Math.sqrt(hs)) < 1e-12);
});

test('softmax-wrong-axis: each key’s column of att sums to 1 (plain loops)', () => {
  const c = caseOf('softmax-wrong-axis');
  // e = exp(scores − each row's max), divided by its column's sum
  const scores = qkT(Q, K).map((x) => x / Math.sqrt(hs));
  const e = new Float64Array(scores.length);
  for (let row = 0; row < B * H * T; row++) {
    const r = scores.subarray(row * T, row * T + T);
    const max = Math.max(...r);
    for (let j = 0; j < T; j++) e[row * T + j] = Math.exp(r[j] - max);
  }
  const expected = new Float64Array(scores.length);
  for (let bh = 0; bh < B * H; bh++) {
    for (let j = 0; j < T; j++) {
      let sum = 0;
      for (let i = 0; i < T; i++) sum += e[(bh * T + i) * T + j];
      for (let i = 0; i < T; i++) expected[(bh * T + i) * T + j] = e[(bh * T + i) * T + j] / sum;
    }
  }
  assert.ok(relErr(c.mistaken, expected) < 1e-12);
  assert.equal(c.what, 'att = e / e.sum(axis=-2, keepdims=True)');
  assert.equal(galleryFigure(c).scale, 'unit');
});

test('weights-transposed: Q from X @ Wq.T, before split_heads (plain loops)', () => {
  const c = caseOf('weights-transposed');
  assert.equal(c.site, 'Qm');
  assert.deepEqual(c.shape, [B, T, C]);
  // the mistaken Qm split into heads is X @ Wq.T split into heads
  const split = new Float64Array(c.mistaken.length);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let o = 0; o < C; o++) {
        split[((b * H + Math.floor(o / hs)) * T + t) * hs + (o % hs)] =
          c.mistaken[(b * T + t) * C + o];
      }
    }
  }
  assert.ok(relErr(split, splitProjection(data.W.Wq, true)) < 1e-12);
  assert.equal(c.row.name, 'Q');
});

test('the loss and dY mistakes: the MSE gradient is lesson 4’s dY, the sum is Y.size × it', () => {
  const n = B * T * C;
  const loss = caseOf('mse-loss-sum');
  // Y − target = (n / 2) dY, so sum((Y − target)²) = (n / 2)² Σ dY²
  const sumSq = data.dY.reduce((a, x) => a + x * x, 0);
  assert.ok(Math.abs(loss.mistaken[0] / ((n / 2) ** 2 * sumSq) - 1) < 1e-12);
  assert.ok(Math.abs(loss.right[0] / (((n / 2) ** 2 * sumSq) / n) - 1) < 1e-12);
  assert.equal(galleryFigure(loss), null); // a scalar: numbers, no map
  const dY = caseOf('mse-grad-factor');
  assert.ok(relErr(dY.right, data.dY) < 1e-12);
  assert.ok(
    relErr(
      dY.mistaken,
      data.dY.map((x) => n * x),
    ) < 1e-12,
  );
  assert.equal(dY.what, 'dY = 2 * (Y - target)'); // no division by Y.size
});

test('dw-transposed: the mistaken dWo is the transpose of the course’s', () => {
  const c = caseOf('dw-transposed');
  assert.deepEqual(c.shape, [C, C]);
  for (let i = 0; i < C; i++) {
    for (let j = 0; j < C; j++) assert.equal(c.mistaken[i * C + j], c.right[j * C + i]);
  }
  const v = siteView(c.mistaken, c.shape);
  assert.deepEqual([v.rows, v.cols, v.where], [CORNER, CORNER, `[:${CORNER}, :${CORNER}]`]);
  assert.equal(v.data[CORNER + 2], c.mistaken[C + 2]); // row 1, column 2
});

test('causal-mismatch: scores masked to −inf above the diagonal, the rest the course’s', () => {
  const c = caseOf('causal-mismatch');
  assert.equal(c.site, 'scores');
  const masked = (T * (T - 1)) / 2;
  assert.equal(c.numbers.nonFinite, B * H * masked);
  assert.equal(c.numbers.maxAbs, 0);
  const f = galleryFigure(c);
  assert.ok(Number.isFinite(f.maxAbs) && f.maxAbs > 0);
  assert.equal(f.yours.data[1], -Infinity); // row 0, key 1: above the diagonal
});

test('siteView and siteNumbers on small arrays', () => {
  const a = Float64Array.from({ length: 2 * 3 * 4 * 5 }, (_, i) => i);
  assert.deepEqual([...siteView(a, [2, 3, 4, 5]).data], [...a.subarray(0, 20)]);
  assert.equal(siteView(a, [2, 3, 4, 5]).where, '[0, 0]');
  const three = siteView(a, [2, 12, 5]);
  assert.deepEqual([three.rows, three.cols, three.where], [12, 5, '[0]']);
  const small = siteView(Float64Array.of(1, 2, 3, 4), [2, 2]);
  assert.deepEqual(
    [small.rows, small.cols, small.where, [...small.data]],
    [2, 2, '', [1, 2, 3, 4]],
  );
  assert.equal(siteView(Float64Array.of(3), []), null);
  const nums = siteNumbers(Float64Array.of(3, -Infinity, 4), Float64Array.of(1, 2, 2));
  assert.deepEqual(nums, { maxAbs: 2, ratio: Math.sqrt(25 / 5), nonFinite: 1 });
  assert.equal(siteNumbers(Float64Array.of(1), Float64Array.of(0)).ratio, null);
  assert.equal(galleryFigure(null), null);
  assert.equal(galleryFigure({ mistaken: null }), null);
});
