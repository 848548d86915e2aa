// The NumPy course's claims about multi-head attention, checked on the C/WASM layer through the
// JS API at the course's size: C = 64, 4 heads (hs = 16), B = 2, T = 6, weights from
// np.random.default_rng(42) * 0.125, X = np.random.default_rng(7).standard_normal((2, 6, 64))
// (the parameters of the 'course' fixture, read from it so the two can't drift apart).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA, loadFixture, f64, bitEqual, bitMismatches, maxRelErr, fmt } from './helpers.mjs';

const mha = await loadMHA();
const fx = loadFixture('course');
const { C, h: H, B, T, seed, rng, scale, data_seed: dataSeed } = fx;
const HS = C / H;

// The course's numbers (the fixture must still describe them).
assert.deepEqual([C, H, B, T, seed, rng, scale], [64, 4, 2, 6, 42, 'default_rng', 0.125]);

const X = mha.standardNormal(B * T * C, { seed: dataSeed });

function courseLayer() {
  return mha.createLayer({ C, heads: H, seed, rng, scale });
}

// Index of element [b, hh, t, d] of a (B, H, T, hs) tensor and [b, t, c] of a (B, T, C) tensor.
const idx4 = (b, hh, t, d) => ((b * H + hh) * T + t) * HS + d;
const idx3 = (b, t, c) => (b * T + t) * C + c;

/** Each tensor of `shapes` (name -> shape) has that shape and that many entries. */
function assertShapes(layer, shapes) {
  for (const [name, shape] of Object.entries(shapes)) {
    const t = layer.tensor(name);
    assert.deepEqual(t.shape, shape, `shape of ${name}`);
    assert.equal(
      t.data.length,
      shape.reduce((a, b) => a * b, 1),
      `length of ${name}`,
    );
  }
}

test('shapes at every stage: X, Q/K/V, scores/att, headout, concat, Y and every gradient', () => {
  const layer = courseLayer();
  layer.forward(X, { B, T });
  const expected = {
    Wq: [C, C],
    Wk: [C, C],
    Wv: [C, C],
    Wo: [C, C],
    X: [B, T, C],
    Q: [B, H, T, HS],
    K: [B, H, T, HS],
    V: [B, H, T, HS],
    scores: [B, H, T, T],
    att: [B, H, T, T],
    headout: [B, H, T, HS],
    concat: [B, T, C],
    Y: [B, T, C],
  };
  assertShapes(layer, expected);
  layer.backward(mha.standardNormal(B * T * C, { seed: 1 }));
  const grads = {
    dWq: [C, C],
    dWk: [C, C],
    dWv: [C, C],
    dWo: [C, C],
    dY: [B, T, C],
    dconcat: [B, T, C],
    dheadout: [B, H, T, HS],
    dV: [B, H, T, HS],
    datt: [B, H, T, T],
    dscores: [B, H, T, T],
    dQ: [B, H, T, HS],
    dK: [B, H, T, HS],
    dQm: [B, T, C],
    dKm: [B, T, C],
    dVm: [B, T, C],
    dX: [B, T, C],
  };
  assertShapes(layer, grads);
  // Every tensor the module lists was covered.
  assert.deepEqual(
    [...Object.keys(expected), ...Object.keys(grads)].sort(),
    mha.tensorNames.sort(),
  );
  layer.free();
});

test('attention rows sum to 1 (|sum - 1| <= 1e-15 per row) and are non-negative', (t) => {
  const layer = courseLayer();
  const { attention } = layer.forward(X, { B, T });
  assert.equal(attention.length, B * H * T * T);
  let worst = 0;
  for (let r = 0; r < B * H * T; r++) {
    let s = 0;
    for (let j = 0; j < T; j++) {
      const a = attention[r * T + j];
      assert.ok(a >= 0 && a <= 1, `att row ${r} col ${j} = ${a}`);
      s += a;
    }
    const e = Math.abs(s - 1);
    assert.ok(e <= 1e-15, `row ${r}: sum - 1 = ${e}`);
    worst = Math.max(worst, e);
  }
  t.diagnostic(`attention rows: ${B * H * T}, max |sum - 1| = ${fmt(worst)}`);
  layer.free();
});

test('splitHeads/mergeHeads: permutation matches the index formula, round trip is exact', (t) => {
  // split: (B,T,C) -> (B,H,T,hs) with out[b,hh,t,d] = x[b,t,hh*hs+d]; merge is its inverse.
  const layer = courseLayer();
  layer.forward(X, { B, T });
  const Q = layer.tensor('Q').data; // split_heads(X @ Wq), (B,H,T,hs); merged back it is X @ Wq
  const XWq = mha.mergeHeads(Q, { B, T, C, heads: H });
  const split = mha.splitHeads(XWq, { B, T, C, heads: H });
  let checked = 0;
  for (let b = 0; b < B; b++) {
    for (let hh = 0; hh < H; hh++) {
      for (let tt = 0; tt < T; tt++) {
        for (let d = 0; d < HS; d++) {
          assert.ok(
            Object.is(split[idx4(b, hh, tt, d)], XWq[idx3(b, tt, hh * HS + d)]),
            `split[${b},${hh},${tt},${d}]`,
          );
          assert.ok(
            Object.is(XWq[idx3(b, tt, hh * HS + d)], Q[idx4(b, hh, tt, d)]),
            `merge[${b},${tt},${hh * HS + d}]`,
          );
          checked++;
        }
      }
    }
  }
  assert.equal(checked, B * T * C);
  // Round trips on arbitrary data, including -0 and subnormals: exactly the same bits.
  const x = mha.standardNormal(B * T * C, { seed: 5 });
  x[3] = -0;
  x[17] = 5e-324;
  x[100] = -Number.MAX_VALUE;
  const rt1 = mha.mergeHeads(mha.splitHeads(x, { B, T, C, heads: H }), { B, T, C, heads: H });
  const rt2 = mha.splitHeads(mha.mergeHeads(x, { B, T, C, heads: H }), { B, T, C, heads: H });
  let maxAbs = 0;
  for (let i = 0; i < x.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(rt1[i] - x[i]), Math.abs(rt2[i] - x[i]));
  }
  assert.equal(maxAbs, 0);
  assert.equal(bitMismatches(rt1, x), 0);
  assert.equal(bitMismatches(rt2, x), 0);
  // NumPy's own split_heads(X @ Wq) (the fixture's Q) goes through the C merge and split unchanged,
  // and the C layer's Q is that tensor (the same projection, split the same way).
  const npQ = f64(fx.forward.Q);
  const rt3 = mha.splitHeads(mha.mergeHeads(npQ, { B, T, C, heads: H }), { B, T, C, heads: H });
  assert.equal(bitMismatches(rt3, npQ), 0, 'split(merge(NumPy Q)) != NumPy Q');
  assert.ok(maxRelErr(Q, npQ) <= 1e-12, `C Q vs NumPy Q: ${maxRelErr(Q, npQ)}`);
  t.diagnostic(
    `split/merge: ${checked} entries match the index formula; round trip max |diff| = ${maxAbs}`,
  );
  layer.free();
});

test('each head of Q equals its own small projection X @ Wq[:, i*hs:(i+1)*hs]', (t) => {
  const layer = courseLayer();
  layer.forward(X, { B, T });
  const Q = layer.tensor('Q').data;
  const Wq = layer.weights.Wq.slice();
  // Entry [b, tt, d] of the small projection (B,T,hs) with only head hh's columns: a plain
  // k-ordered sum from 0.0.
  const small = (hh, b, tt, d) => {
    let s = 0.0;
    for (let k = 0; k < C; k++) s += X[idx3(b, tt, k)] * Wq[k * C + hh * HS + d];
    return s;
  };
  let worst = 0;
  for (let hh = 0; hh < H; hh++) {
    for (let b = 0; b < B; b++) {
      for (let tt = 0; tt < T; tt++) {
        for (let d = 0; d < HS; d++) {
          worst = Math.max(worst, Math.abs(Q[idx4(b, hh, tt, d)] - small(hh, b, tt, d)));
        }
      }
    }
  }
  assert.ok(worst <= 1e-15, `max |Q_head - X @ Wq_head| = ${worst}`);
  t.diagnostic(
    `max |Q[:, i] - X @ Wq[:, i*hs:(i+1)*hs]| over ${H} heads = ${worst}` +
      ` (NumPy reference: ${fx.split_merge.head_equals_small_projection_max_abs})`,
  );
  layer.free();
});

// Perturb head j's headout, recompute from there, and count changed entries of Y per column block.
function perturbHead(layer, j) {
  const base = layer.forward(X, { B, T }).Y;
  const headout = layer.tensor('headout').data;
  // Unchanged headout: forwardFrom reproduces Y bit for bit.
  assert.ok(
    bitEqual(layer.forwardFrom('headout').Y, base),
    'forwardFrom(headout) without edits changes Y',
  );
  for (let b = 0; b < B; b++) {
    for (let tt = 0; tt < T; tt++) {
      for (let d = 0; d < HS; d++) headout[idx4(b, j, tt, d)] += 0.5 + 0.01 * d;
    }
  }
  layer.setTensor('headout', headout);
  const Y = layer.forwardFrom('headout').Y;
  const changed = new Array(H).fill(0);
  for (let b = 0; b < B; b++) {
    for (let tt = 0; tt < T; tt++) {
      for (let c = 0; c < C; c++) {
        const i = idx3(b, tt, c);
        if (!Object.is(Y[i], base[i])) changed[Math.floor(c / HS)]++;
      }
    }
  }
  return changed;
}

test('block-diagonal Wo: perturbing one head changes only its own column block of Y', (t) => {
  const layer = courseLayer();
  const Wo = layer.weights.Wo; // live view: zero every off-diagonal hs x hs block
  for (let r = 0; r < C; r++) {
    for (let c = 0; c < C; c++) if (Math.floor(r / HS) !== Math.floor(c / HS)) Wo[r * C + c] = 0;
  }
  const blockSize = B * T * HS;
  for (let j = 0; j < H; j++) {
    const changed = perturbHead(layer, j);
    for (let i = 0; i < H; i++) {
      if (i === j) {
        assert.equal(changed[i], blockSize, `head ${j}: its own block should change everywhere`);
      } else assert.equal(changed[i], 0, `head ${j}: block ${i} must stay bit-identical`);
    }
    t.diagnostic(
      `block-diagonal Wo, head ${j} perturbed: changed entries per Y block = [${changed}]`,
    );
  }
  layer.free();
});

test('full Wo: perturbing one head changes every column block of Y', (t) => {
  const layer = courseLayer();
  const changed = perturbHead(layer, 1);
  for (let i = 0; i < H; i++) assert.ok(changed[i] > 0, `block ${i} unchanged with a full Wo`);
  t.diagnostic(
    `full Wo, head 1 perturbed: changed entries per Y block = [${changed}] of ${B * T * HS} each`,
  );
  layer.free();
});

test('causal mask: attention is exactly 0 above the diagonal and rows still sum to 1', (t) => {
  const layer = courseLayer();
  const { attention } = layer.forward(X, { B, T, causal: true });
  const scores = layer.tensor('scores').data;
  let worst = 0,
    zeros = 0;
  for (let r = 0; r < B * H * T; r++) {
    const q = r % T; // the query's position
    let s = 0;
    for (let k = 0; k < T; k++) {
      const a = attention[r * T + k];
      if (k > q) {
        assert.ok(Object.is(a, 0), `att[row ${r}, key ${k}] = ${a} above the diagonal`);
        // scores are stored unmasked (c/mha.h): the mask is not a write into scores
        assert.ok(Number.isFinite(scores[r * T + k]), 'scores are stored before the mask');
        zeros++;
      } else {
        assert.ok(a > 0, `att[row ${r}, key ${k}] = ${a} on/below the diagonal`);
      }
      s += a;
    }
    assert.ok(Math.abs(s - 1) <= 1e-15, `row ${r}: sum - 1 = ${s - 1}`);
    worst = Math.max(worst, Math.abs(s - 1));
  }
  assert.equal(zeros, (B * H * (T * (T - 1))) / 2);
  // The first query sees only itself: a softmax over one key is exp(0) / exp(0) = 1 exactly.
  for (let bh = 0; bh < B * H; bh++) assert.equal(attention[bh * T * T], 1);
  t.diagnostic(`causal: ${zeros} masked entries all exactly 0; max |row sum - 1| = ${fmt(worst)}`);
  layer.free();
});
