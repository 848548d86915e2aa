// lesson2.js - "Splitting into heads": (1, 6, 64) -> (1, 6, 4, 16) -> (1, 4, 6, 16), and the two
// proofs (DOM-free).

import { drawScaled } from './input.js';
import { dotColumn, maxAbs, maxAbsDiff } from './arrays.js';
import { withLayer } from './layers.js';

/**
 * max |Qheads[0, i] - x @ Wq[:, i*hs:(i+1)*hs]| for each head i: the layer's head i against the
 * small projection (k-ordered sums from 0.0). x (T, C), Wq (C, C), Qheads (1, h, T, hs).
 */
function headProjectionGaps(x, Wq, Qheads, { T, C, heads, hs }) {
  const perHead = [];
  for (let i = 0; i < heads; i++) {
    let m = 0;
    for (let t = 0; t < T; t++) {
      for (let d = 0; d < hs; d++) {
        const s = dotColumn(x, t * C, Wq, i * hs + d, C);
        m = Math.max(m, Math.abs(Qheads[(i * T + t) * hs + d] - s));
      }
    }
    perHead.push(m);
  }
  return perHead;
}

/** (x @ Wq[:, hs:2*hs])[0, 0, :4]: head 1's small projection of token 0 (k-ordered sums). */
function head1Projection(x, Wq, { C, hs }) {
  return Array.from({ length: Math.min(4, hs) }, (_, d) => dotColumn(x, 0, Wq, hs + d, C));
}

/** x = standard_normal((1, T, C)), then Wq = standard_normal((C, C)) / sqrt(C); default_rng. */
function drawLesson2(mha, seed, T, C) {
  const rng = mha.rng(seed, 'default_rng');
  try {
    const x = rng.standardNormal(T * C);
    const Wq = drawScaled(rng, C * C, C);
    return { x, Wq };
  } finally {
    rng.free();
  }
}

/**
 * Lesson 2: x = standard_normal((1, 6, 64)), Wq = standard_normal((64, 64)) / sqrt(64) from
 * default_rng(42); Q from a layer (already split, (1, 4, 6, 16)); the two proofs.
 */
export function lesson2(mha, { seed = 42, T = 6, C = 64, heads = 4 } = {}) {
  const hs = C / heads;
  const { x, Wq } = drawLesson2(mha, seed, T, C);
  // Q = x @ Wq depends on Wq only; the other weights are whatever the borrowed layer holds
  return withLayer(mha, C, heads, { Wq, Wk: Wq, Wv: Wq, Wo: Wq }, (layer) => {
    layer.forward(x, { B: 1, T });
    const Qheads = layer.tensor('Q').data; // (1, h, T, hs)
    const q = mha.mergeHeads(Qheads, { B: 1, T, C, heads }); // x @ Wq, (1, T, C)
    const perHead = headProjectionGaps(x, Wq, Qheads, { T, C, heads, hs });
    const headMaxDiff = perHead.reduce((a, m) => Math.max(a, m), 0);
    const split = mha.splitHeads(q, { B: 1, T, C, heads });
    const back = mha.mergeHeads(split, { B: 1, T, C, heads });
    return {
      T,
      C,
      heads,
      hs,
      x,
      Wq,
      q,
      qMaxAbs: maxAbs(q),
      Qheads,
      perHead,
      headMaxDiff,
      head1Projection: heads > 1 ? head1Projection(x, Wq, { C, hs }) : [],
      roundTrip: maxAbsDiff(back, q),
      splitEqualsLayer: maxAbsDiff(split, Qheads),
      shapes: { x: [1, T, C], q4: [1, T, heads, hs], heads: [1, heads, T, hs] },
    };
  });
}

/**
 * Lesson 2's captions as NumPy that runs in its Copy-as-NumPy script (x, Wq, h, hs, q, q4,
 * heads): { name, code, shape, kind }. kind 'stage' (the shapes table), 'head' (heads[0, i] and
 * the columns of q it is), 'figure' (the shapes and the two proofs). tests/model/captions.test.mjs
 * runs every one in python3 and compares it with the page's value.
 */
export function lesson2Captions({ T, C, heads, hs }) {
  const x = `(1, ${T}, ${C})`;
  const merge = `heads.transpose(0, 2, 1, 3).reshape(1, ${T}, ${C})`;
  const gap = 'np.abs(heads[:, i] - x @ Wq[:, i * hs:(i + 1) * hs]).max()';
  const caps = [
    { kind: 'stage', name: 'x', code: 'x', shape: x },
    { kind: 'stage', name: 'q', code: 'x @ Wq', shape: x },
    { kind: 'stage', name: 'q4', code: `q.reshape(1, ${T}, h, hs)`, shape: `(1, ${T}, h, hs)` },
    { kind: 'stage', name: 'heads', code: 'q4.transpose(0, 2, 1, 3)', shape: `(1, h, ${T}, hs)` },
    { kind: 'stage', name: 'merged', code: merge, shape: x },
  ];
  for (let i = 0; i < heads; i++) {
    const cols = `q[0, :, ${i * hs}:${(i + 1) * hs}]`;
    caps.push({ kind: 'head', name: `head ${i}`, code: `heads[0, ${i}]`, shape: `(${T}, hs)` });
    caps.push({ kind: 'columns', name: `columns ${i}`, code: cols, shape: `(${T}, hs)` });
  }
  caps.push(
    { kind: 'figure', name: 'shapeX', code: 'x.shape', shape: '(3,)' },
    { kind: 'figure', name: 'shapeQ4', code: 'q4.shape', shape: '(4,)' },
    { kind: 'figure', name: 'shapeHeads', code: 'heads.shape', shape: '(4,)' },
    {
      kind: 'figure',
      name: 'head_max_diff',
      code: `max(${gap} for i in range(h))`,
      shape: '()',
    },
    { kind: 'figure', name: 'per_head', code: `[${gap} for i in range(h)]`, shape: '(h,)' },
    { kind: 'figure', name: 'round_trip', code: `np.abs(${merge} - q).max()`, shape: '()' },
  );
  return caps;
}
