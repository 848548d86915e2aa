// web/model/, every lesson's computation as the page shows it, against NumPy on the same
// documented random streams (tests/reference/page_reference.py -> build/reference/page.json):
// courseData, lessons 1-4, the sentence model of lesson 5 and its Trainer, and the layer pool.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Trainer } from '../../web/jobs/trainer.js';
import { COURSE } from '../../web/model/defaults.js';
import { courseData } from '../../web/model/course.js';
import { layerWith, borrowLayer, returnLayer } from '../../web/model/layers.js';
import { lesson1 } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { tokenize } from '../../web/model/tokens.js';
import {
  LESSON4_ORDER,
  loadMHA,
  loadPageFixture,
  f64,
  bitEqual,
  maxRelErr,
  fmt,
} from '../helpers.mjs';

const TOL = 1e-12;
const mha = await loadMHA();
const page = loadPageFixture();
const WEIGHTS = ['Wq', 'Wk', 'Wv', 'Wo'];

/** maxRelErr(actual, NumPy's) <= TOL, with the fixture's shape when `shape` is given */
function close(label, actual, expected, shape) {
  if (shape) assert.deepEqual(shape, expected.shape, `${label}: shape`);
  const e = maxRelErr(actual, f64(expected));
  assert.ok(e <= TOL, `${label}: maxRelErr ${e}`);
  return e;
}

test('courseData: X, then Wq, Wk, Wv, Wo / sqrt(C), then dY from default_rng(42), as NumPy', () => {
  const d = courseData(mha);
  assert.deepEqual([d.B, d.T, d.C], [COURSE.B, COURSE.T, COURSE.C]);
  const ref = page.lesson4;
  // X and dY are the stream itself; W divides it by sqrt(64) = 8: all exact
  const rng = mha.rng(42);
  assert.ok(bitEqual(d.X, rng.standardNormal(2 * 6 * 64)));
  for (const w of WEIGHTS) {
    assert.ok(
      bitEqual(
        d.W[w],
        rng.standardNormal(64 * 64).map((v) => v / 8),
      ),
      w,
    );
  }
  assert.ok(bitEqual(d.dY, rng.standardNormal(2 * 6 * 64)));
  rng.free();
  assert.equal(ref.dX.data.length, d.X.length);
  // a different seed and size
  const e = courseData(mha, { seed: 3, B: 1, T: 2, C: 4 });
  assert.deepEqual([e.B, e.T, e.C, e.X.length, e.W.Wo.length, e.dY.length], [1, 2, 4, 8, 16, 8]);
  assert.ok(bitEqual(e.X, mha.standardNormal(8, { seed: 3 })));
});

test('lesson 1: two single heads on the sentence equal NumPy (att, gap, argmax per row)', (t) => {
  const ref = page.lesson1;
  const tokens = tokenize(page.tokenize[0].text);
  const r = lesson1(mha, { tokens });
  assert.deepEqual([r.tokens, r.C, r.hs, r.seed, r.T], [tokens, 64, 16, 42, tokens.length]);
  assert.deepEqual(r.vocab, page.tokenize[0].vocab);
  assert.deepEqual(r.ids, page.tokenize[0].ids);
  const e1 = close('A1', r.A1, ref.A1);
  const e2 = close('A2', r.A2, ref.A2);
  assert.ok(
    bitEqual(
      r.diff,
      r.A1.map((v, i) => v - r.A2[i]),
    ),
    'diff = A1 - A2',
  );
  assert.ok(Math.abs(r.maxGap - ref.maxGap) <= TOL * ref.maxGap, `maxGap ${r.maxGap}`);
  assert.deepEqual(r.argmax1, ref.argmax1);
  assert.deepEqual(r.argmax2, ref.argmax2);
  assert.deepEqual(r.argmaxDiffRows, ref.argmaxDiffRows);
  t.diagnostic(`A1 ${fmt(e1)}, A2 ${fmt(e2)}; max gap ${r.maxGap} (NumPy ${ref.maxGap})`);
});

test('lesson 2: Q split into heads equals NumPy; each head is its own small projection', () => {
  const ref = page.lesson2;
  const r = lesson2(mha);
  assert.deepEqual([r.T, r.C, r.heads, r.hs], [6, 64, 4, 16]);
  assert.ok(bitEqual(r.x, f64(ref.x)), 'x is the stream');
  assert.ok(bitEqual(r.Wq, f64(ref.Wq)), 'Wq = stream / 8');
  close('q', r.q, ref.q);
  close('Qheads', r.Qheads, ref.Qheads);
  assert.equal(r.perHead.length, 4);
  for (const m of r.perHead) assert.ok(m <= 1e-15, `per-head gap ${m}`);
  assert.equal(r.headMaxDiff, Math.max(...r.perHead));
  assert.equal(r.roundTrip, 0);
  assert.equal(r.splitEqualsLayer, 0);
  assert.deepEqual(r.shapes, { x: [1, 6, 64], q4: [1, 6, 4, 16], heads: [1, 4, 6, 16] });
  // another size: the figures are computed, not constants
  const s = lesson2(mha, { seed: 1, T: 3, C: 8, heads: 2 });
  assert.deepEqual([s.T, s.C, s.heads, s.hs, s.perHead.length], [3, 8, 2, 4, 2]);
  assert.equal(s.roundTrip, 0);
  assert.ok(bitEqual(s.x, mha.standardNormal(24, { seed: 1 })));
});

test(`lesson 2: the per-head figure is computed: a layer with one wrong entry of Q shows it`, () => {
  // the same module, but its layer reports Q with head 2, token 3, entry 5 off by 1e-3
  const wrongQ = {
    rng: (...a) => mha.rng(...a),
    mergeHeads: (...a) => mha.mergeHeads(...a),
    splitHeads: (...a) => mha.splitHeads(...a),
    createLayer: (o) => {
      const l = mha.createLayer(o);
      const tensor = l.tensor.bind(l);
      l.tensor = (name) => {
        const t = tensor(name);
        if (name === 'Q') t.data[(2 * 6 + 3) * 16 + 5] += 1e-3;
        return t;
      };
      return l;
    },
  };
  const r = lesson2(wrongQ);
  assert.ok(Math.abs(r.perHead[2] - 1e-3) < 1e-9, `head 2: ${r.perHead[2]}`);
  for (const i of [0, 1, 3]) assert.ok(r.perHead[i] <= 1e-15, `head ${i}: ${r.perHead[i]}`);
  assert.equal(r.headMaxDiff, r.perHead[2]);
  assert.equal(r.roundTrip, 0);
});

/** Lesson 3's table of stages at the course's size (B 2, T 6, C 64, 4 heads of 16): NumPy that
 * runs (tests/model/captions.test.mjs runs each in python3). */
function stageTable(causal) {
  const mask = 'np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores)';
  return [
    {
      stage: 'X',
      shape: [2, 6, 64],
      note: 'the input: B sequences of T tokens, C features each',
    },
    {
      stage: 'X @ Wq',
      shape: [2, 6, 64],
      note: 'one (C, C) matmul for all heads at once (also Wk, Wv)',
    },
    { stage: '(X @ Wq).reshape(B, T, h, hs)', shape: [2, 6, 4, 16], note: 'C = h · hs = 4 · 16' },
    {
      stage: 'Q = (X @ Wq).reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
      shape: [2, 4, 6, 16],
      note: 'heads become a batch axis; K, V the same from Wk, Wv',
    },
    {
      stage: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
      shape: [2, 4, 6, 6],
      note: 'one T×T matrix per head; √hs = 4',
    },
    {
      stage: causal ? `att = softmax(${mask})` : 'att = softmax(scores)',
      shape: [2, 4, 6, 6],
      note: causal
        ? 'the causal mask: −∞ above the diagonal; each row sums to 1'
        : 'each row sums to 1',
    },
    { stage: 'headout = att @ V', shape: [2, 4, 6, 16], note: 'each head mixes its own V' },
    {
      stage: 'concat = merge_heads(headout)',
      shape: [2, 6, 64],
      note: 'transpose back, reshape (B, T, C)',
    },
    { stage: 'Y = concat @ Wo', shape: [2, 6, 64], note: 'Wo mixes the heads' },
  ];
}

for (const causal of [false, true]) {
  test(`lesson 3${causal ? ' (causal)' : ''}: every intermediate, QK, row sums and the Wo experiment equal NumPy`, (t) => {
    const ref = causal ? page.lesson3_causal : page.lesson3;
    const r = lesson3(mha, { causal });
    assert.deepEqual([r.B, r.T, r.C, r.heads, r.hs, r.causal], [2, 6, 64, 4, 16, causal]);
    const errs = [];
    for (const k of ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y']) {
      errs.push(`${k} ${fmt(close(k, r.tensors[k].data, ref[k], r.tensors[k].shape))}`);
      assert.deepEqual(r.shapes[k], ref[k].shape, `shapes.${k}`);
    }
    assert.deepEqual(r.shapes.X, [2, 6, 64]);
    close('QK', r.QK, ref.QK);
    assert.ok(bitEqual(r.att, r.tensors.att.data));
    close('rowSums', r.rowSums, ref.rowSums);
    let worst = 0;
    for (const s of r.rowSums) worst = Math.max(worst, Math.abs(s - 1));
    assert.equal(r.rowSumMaxErr, worst);
    assert.ok(worst <= 1e-15);
    close('fullDeltaY', r.fullDeltaY, ref.fullDeltaY);
    close('bdDeltaY', r.bdDeltaY, ref.bdDeltaY);
    // block-diagonal Wo: only head 0's block moves, the others exactly 0
    assert.deepEqual(r.blockDiagDelta.slice(1), [0, 0, 0]);
    for (const [k, got] of [
      ['blockDiagDelta', r.blockDiagDelta],
      ['fullDelta', r.fullDelta],
    ]) {
      for (let j = 0; j < 4; j++) {
        assert.ok(Math.abs(got[j] - ref[k][j]) <= TOL * Math.max(...ref[k]), `${k}[${j}]`);
      }
    }
    for (const v of r.fullDelta) assert.ok(v > 0.5, 'the full Wo spreads head 0 everywhere');
    // the lesson's shape table, as the page prints it
    assert.deepEqual(r.stages, stageTable(causal));
    t.diagnostic(errs.join(', '));
  });
}

test('lesson 3 without options is the plain (not causal) lesson', () => {
  const r = lesson3(mha);
  assert.equal(r.causal, false);
  assert.ok(bitEqual(r.att, lesson3(mha, { causal: false }).att));
  assert.deepEqual(r.stages, stageTable(false));
});

test('lesson 3 and 4 accept the data they are given (no new draw)', () => {
  const data = courseData(mha, { seed: 9 });
  const r3 = lesson3(mha, { data });
  assert.ok(bitEqual(r3.tensors.X.data, data.X));
  const r4 = lesson4(mha, { data });
  assert.ok(bitEqual(r4.X, data.X) && r4.dY === data.dY && r4.W === data.W);
});

test(`lesson 4: Y, the loss sum(dY * Y) and every gradient in the lesson order equal NumPy`, (t) => {
  const ref = page.lesson4;
  const r = lesson4(mha);
  assert.deepEqual([r.B, r.T, r.C, r.heads, r.hs], [2, 6, 64, 4, 16]);
  assert.deepEqual(mha.gradOrder, LESSON4_ORDER);
  assert.deepEqual(Object.keys(r.grads), mha.gradOrder);
  close('Y', r.Y, ref.Y);
  assert.ok(Math.abs(r.loss - ref.loss) <= TOL * Math.abs(ref.loss), `loss ${r.loss}`);
  const errs = mha.gradOrder.map(
    (k) => `${k} ${fmt(close(k, r.grads[k].data, ref[k], r.grads[k].shape))}`,
  );
  // twice in a row (the borrowed layer's gradients are zeroed, not accumulated)
  const again = lesson4(mha);
  for (const k of mha.gradOrder) assert.ok(bitEqual(again.grads[k].data, r.grads[k].data), k);
  t.diagnostic(errs.join(', '));
});

test(`sentenceModel: E, W, target from one stream (default_rng or legacy), + PE: equal NumPy`, (t) => {
  for (const m of page.models) {
    const tokens = tokenize(m.sentence);
    const opts = { tokens, C: m.C, heads: m.heads, seed: m.seed, rng: m.rng, pe: m.pe };
    const model = sentenceModel(mha, { ...opts, causal: m.causal });
    assert.ok(Object.isFrozen(model) && Object.isFrozen(model.W));
    assert.deepEqual(
      [model.C, model.heads, model.hs, model.seed, model.rng, model.pe, model.causal, model.T],
      [m.C, m.heads, m.C / m.heads, m.seed, m.rng, m.pe, m.causal, tokens.length],
    );
    assert.equal(model.tokens, tokens);
    assert.deepEqual(model.vocab, m.vocab);
    assert.deepEqual(model.ids, m.ids);
    assert.ok(bitEqual(model.E, f64(m.E)), `${m.name}: E`);
    for (const w of WEIGHTS) assert.ok(bitEqual(model.W[w], f64(m.W[w])), `${m.name}: ${w}`);
    assert.ok(bitEqual(model.target, f64(m.target)), `${m.name}: target`);
    close(`${m.name}: X`, model.X, m.X);
    assert.equal(model.PE === undefined, !m.pe);
    // the same arguments give the same (cached) object; other arguments another model
    assert.equal(sentenceModel(mha, { ...opts, causal: m.causal }), model);
    assert.notEqual(sentenceModel(mha, { ...opts, causal: !m.causal }), model);
    t.diagnostic(`${m.name}: ${tokens.length} tokens, ${m.rng}(${m.seed}), pe ${m.pe}: identical`);
  }
  // defaults: C 64, 4 heads, seed 42, default_rng, no PE, not causal
  const d = sentenceModel(mha, { tokens: ['a', 'b'] });
  assert.deepEqual(
    [d.C, d.heads, d.seed, d.rng, d.pe, d.causal],
    [64, 4, 42, 'default_rng', false, false],
  );
});

test(`Trainer: the loss after each step with its own learning rate equals NumPy; reset restores`, (t) => {
  for (const m of page.models) {
    const tokens = tokenize(m.sentence);
    const model = sentenceModel(mha, {
      tokens,
      C: m.C,
      heads: m.heads,
      seed: m.seed,
      rng: m.rng,
      pe: m.pe,
      causal: m.causal,
    });
    const tr = new Trainer(mha, model);
    assert.equal(tr.steps, 0);
    const first = tr.loss;
    for (const lr of m.lrs) tr.step(lr);
    assert.equal(tr.steps, m.lrs.length);
    assert.deepEqual(tr.lrs, m.lrs);
    assert.equal(tr.losses.length, m.lrs.length + 1);
    assert.equal(tr.loss, tr.losses[tr.losses.length - 1]);
    for (let s = 0; s < tr.losses.length; s++) {
      const e = Math.abs(tr.losses[s] - m.losses[s]) / m.losses[s];
      assert.ok(e <= TOL, `${m.name}: loss after ${s} steps ${tr.losses[s]} vs ${m.losses[s]}`);
    }
    t.diagnostic(`${m.name}: losses ${tr.losses.map((v) => v.toFixed(6)).join(' ')}`);
    for (const w of WEIGHTS) close(`${m.name}: trained ${w}`, tr.layer.weights[w], m.trainedW[w]);
    close(`${m.name}: Y`, tr.Y, m.Y);
    close(`${m.name}: att`, tr.att, m.att);
    // the model itself is untouched; reset goes back to it exactly
    for (const w of WEIGHTS) assert.ok(bitEqual(model.W[w], f64(m.W[w])), `model.${w} changed`);
    tr.reset();
    assert.deepEqual(Array.from(tr.losses), [first]);
    assert.equal(tr.steps, 0);
    for (const w of WEIGHTS) assert.ok(bitEqual(tr.layer.weights[w], model.W[w]));
    assert.ok(
      tr.layer.gradBuffer.every((v) => v === 0),
      'reset zeroes the gradients',
    );
    tr.free();
    assert.throws(() => tr.layer.weights, /freed/);
  }
});

test('Trainer: a diverged loss stops training with an Error that says what to do', () => {
  const model = sentenceModel(mha, { tokens: ['one', 'two', 'three'], C: 8, heads: 2, seed: 3 });
  const tr = new Trainer(mha, model);
  let k = 0;
  while (Number.isFinite(tr.loss) && k < 20) {
    tr.step(1e200);
    k++;
  }
  assert.ok(!Number.isFinite(tr.loss), 'lr 1e200 diverges');
  assert.throws(
    () => tr.step(0.1),
    (e) =>
      e instanceof Error &&
      e.message.startsWith(`the loss is ${tr.loss}: training diverged`) &&
      /smaller learning rate/.test(e.message),
  );
  tr.free();
});

test(`layerWith / borrowLayer / returnLayer: the weights given; the pool keeps 3 layers per size`, () => {
  const W = courseData(mha, { C: 8 }).W;
  const own = layerWith(mha, 8, 2, W);
  for (const w of WEIGHTS) assert.ok(bitEqual(own.weights[w], W[w]), w);
  own.free();
  // borrowing four, returning four keeps three (this size is used by no other test here)
  const layers = [1, 2, 3, 4].map(() => borrowLayer(mha, 8, 4, W));
  assert.equal(new Set(layers).size, 4);
  for (const l of layers) returnLayer(mha, l);
  assert.throws(() => layers[3].weights, /freed/, 'the fourth returned layer is freed');
  // the next borrows get the pooled layers back (last returned first), with the new weights
  const W2 = courseData(mha, { seed: 1, C: 8 }).W;
  const again = [borrowLayer(mha, 8, 4, W2), borrowLayer(mha, 8, 4, W2)];
  assert.equal(again[0], layers[2]);
  assert.equal(again[1], layers[1]);
  for (const w of WEIGHTS) assert.ok(bitEqual(again[0].weights[w], W2[w]), w);
  // a different size is not served from this pool
  const other = borrowLayer(mha, 8, 2, W2);
  assert.ok(!layers.includes(other));
  assert.deepEqual([other.C, other.heads], [8, 2]);
  for (const l of [...again, other]) returnLayer(mha, l);
  // returning a layer twice keeps it pooled and alive: the next borrow gets a working layer
  const twice = borrowLayer(mha, 8, 4, W2);
  returnLayer(mha, twice);
  returnLayer(mha, twice);
  const next = borrowLayer(mha, 8, 4, W);
  assert.equal(next, twice);
  for (const w of WEIGHTS) assert.ok(bitEqual(next.weights[w], W[w]), `${w} after a double return`);
  returnLayer(mha, next);
});

/**
 * The module's API with a count of live generators and layers: every rng() and createLayer() adds
 * one, its free() takes it away. (Private fields forbid a Proxy; the lessons use only these calls.)
 */
function counting(m) {
  const live = { rng: 0, layer: 0 };
  const track = (obj, kind) => {
    live[kind]++;
    const free = obj.free.bind(obj);
    obj.free = () => {
      live[kind]--;
      free();
    };
    return obj;
  };
  const api = {
    live,
    rng: (...a) => track(m.rng(...a), 'rng'),
    createLayer: (o) => track(m.createLayer(o), 'layer'),
    // the module's tensor table (the lessons ask it for names and shapes)
    tensors: m.tensors,
    gradOrder: m.gradOrder,
    tensorShape: (...a) => m.tensorShape(...a),
  };
  for (const f of ['singleHead', 'splitHeads', 'mergeHeads', 'mseLoss', 'standardNormal']) {
    api[f] = (...a) => m[f](...a);
  }
  return api;
}

test('the lessons free every generator and give every layer back to the pool', () => {
  const m = counting(mha);
  const tokens = tokenize(page.tokenize[0].text);
  let k = 0;
  const round = () => {
    courseData(m);
    lesson1(m, { tokens });
    lesson2(m);
    lesson3(m);
    lesson3(m, { causal: true });
    lesson4(m);
    sentenceModel(m, { tokens, C: 32, heads: 4, seed: 1000 + k++ }); // a new key: no cache hit
  };
  round();
  assert.equal(m.live.rng, 0, 'generators left alive');
  // the first round fills the pool of (64, 4) layers: lesson 3 borrows two at once
  assert.equal(m.live.layer, 2);
  for (let i = 0; i < 3; i++) round();
  assert.deepEqual(m.live, { rng: 0, layer: 2 }, 'later rounds reuse the pooled layers');
  const tr = new Trainer(m, sentenceModel(m, { tokens, C: 8, heads: 2 }));
  tr.step(0.1);
  tr.free();
  assert.deepEqual(m.live, { rng: 0, layer: 2 }, 'the Trainer frees its layer');
});
