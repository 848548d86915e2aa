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
