// lesson2.js - "Splitting into heads": (1, 6, 64) -> (1, 6, 4, 16) -> (1, 4, 6, 16), and the two
// proofs (DOM-free).

import { COURSE } from './defaults.js';
import { drawScaled } from './input.js';
import { dotColumn, maxAbs, maxAbsDiff } from './arrays.js';
import { withLayer } from './layers.js';

/**
 * max |Qheads[:, i] - x @ Wq[:, i*hs:(i+1)*hs]| for each head i: the layer's head i against the
 * small projection (k-ordered sums from 0.0), over every batch item. x (B, T, C), Wq (C, C),
 * Qheads (B, h, T, hs).
 */
function headProjectionGaps(x, Wq, Qheads, { B, T, C, heads, hs }) {
  const perHead = [];
  for (let i = 0; i < heads; i++) {
    let m = 0;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        for (let d = 0; d < hs; d++) {
          const s = dotColumn(x, (b * T + t) * C, Wq, i * hs + d, C);
          m = Math.max(m, Math.abs(Qheads[((b * heads + i) * T + t) * hs + d] - s));
        }
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
  const rng = mha.rng(seed, COURSE.rng);
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
 * default_rng(42); Q from a layer (already split, (1, 4, 6, 16)); the two proofs. With `arrays`
 * ({ x (B·T·C), Wq (C·C), B, T, C, heads }: a notebook's, see lesson2Part) the same from them.
 */
export function lesson2(
  mha,
  { seed = COURSE.seed, T: T0 = COURSE.T, C: C0 = COURSE.C, heads: h0 = COURSE.heads, arrays } = {},
) {
  const { x, Wq, B, T, C, heads } = arrays ?? {
    ...drawLesson2(mha, seed, T0, C0),
    B: 1,
    T: T0,
    C: C0,
    heads: h0,
  };
  const hs = C / heads;
  const dims = { B, T, C, heads };
  // Q = x @ Wq depends on Wq only; the other weights are whatever the borrowed layer holds
  return withLayer(mha, C, heads, { Wq, Wk: Wq, Wv: Wq, Wo: Wq }, (layer) => {
    layer.forward(x, { B, T });
    const Qheads = Float64Array.from(layer.tensor('Q').data); // (B, h, T, hs)
    const q = mha.mergeHeads(Qheads, dims); // x @ Wq, (B, T, C)
    const perHead = headProjectionGaps(x, Wq, Qheads, { ...dims, hs });
    const headMaxDiff = perHead.reduce((a, m) => Math.max(a, m), 0);
    const split = mha.splitHeads(q, dims);
    const back = mha.mergeHeads(split, dims);
    return {
      B,
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
      shapes: { x: [B, T, C], q4: [B, T, heads, hs], heads: [B, heads, T, hs] },
      custom: !!arrays,
    };
  });
}

/**
 * Lesson 2's captions as NumPy that runs in its Copy-as-NumPy script (x, Wq, h, hs, q, q4,
 * heads): { name, code, shape, kind }. kind 'stage' (the shapes table), 'head' (heads[0, i] and
 * the columns of q it is), 'figure' (the shapes and the two proofs). tests/model/captions.test.mjs
 * runs every one in python3 and compares it with the page's value.
 */
export function lesson2Captions({ B = 1, T, C, heads, hs }) {
  const x = `(${B}, ${T}, ${C})`;
  const merge = `heads.transpose(0, 2, 1, 3).reshape(${B}, ${T}, ${C})`;
  const gap = 'np.abs(heads[:, i] - x @ Wq[:, i * hs:(i + 1) * hs]).max()';
  const caps = [
    { kind: 'stage', name: 'x', code: 'x', shape: x },
    { kind: 'stage', name: 'q', code: 'x @ Wq', shape: x },
    {
      kind: 'stage',
      name: 'q4',
      code: `q.reshape(${B}, ${T}, h, hs)`,
      shape: `(${B}, ${T}, h, hs)`,
    },
    {
      kind: 'stage',
      name: 'heads',
      code: 'q4.transpose(0, 2, 1, 3)',
      shape: `(${B}, h, ${T}, hs)`,
    },
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
