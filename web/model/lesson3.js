// lesson3.js - "Parallel attention and concatenation": the course forward pass (seed 42, B = 2,
// T = 6, C = 64, h = 4), every intermediate, and the block-diagonal vs full Wo experiment
// (DOM-free).

import { forwardNames } from './tensors.js';
import { COURSE, courseData } from './course.js';
import {
  blockDiagonal,
  blockMaxima,
  causalMasked,
  distanceFromOne,
  dotRows,
  maxAbs,
  rowSums,
  slice2d,
  subtract,
} from './arrays.js';
import { borrowLayer, returnLayer } from './layers.js';

/** Population standard deviation (NumPy's a.std(): ddof = 0), the mean first, then the squares. */
export function standardDeviation(a) {
  let mean = 0;
  for (let i = 0; i < a.length; i++) mean += a[i];
  mean /= a.length;
  let ss = 0;
  for (let i = 0; i < a.length; i++) ss += (a[i] - mean) ** 2;
  return Math.sqrt(ss / a.length);
}

/** Q Kᵀ before the scaling (for the step view): Q, K (B, h, T, hs) -> (B, h, T, T). */
function qkProducts(Qd, Kd, { B, heads, T, hs }) {
  const QK = new Float64Array(B * heads * T * T);
  for (let bh = 0; bh < B * heads; bh++) {
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        QK[(bh * T + i) * T + j] = dotRows(Qd, (bh * T + i) * hs, Kd, (bh * T + j) * hs, hs);
      }
    }
  }
  return QK;
}

/** headout (B, h, T, hs) with +1.0 on every entry of head 0: headout[:, 0] += 1. */
function perturbHead0(headout, { B, heads, T, hs }) {
  const perturbed = Float64Array.from(headout);
  for (let b = 0; b < B; b++) {
    const off = (b * heads + 0) * T * hs;
    for (let i = 0; i < T * hs; i++) perturbed[off + i] += 1.0;
  }
  return perturbed;
}

/** Y after setting headout to `perturbed` and running forward_from('headout'), minus Y before. */
function deltaY(layer, Ybefore, perturbed) {
  layer.setTensor('headout', perturbed);
  return subtract(layer.forwardFrom('headout').Y, Ybefore);
}

/** The rows of the "shapes at every stage" table. */
export function lesson3Stages({ B, T, C, heads, hs, causal, shapes }) {
  return [
    { stage: 'X (input)', shape: [B, T, C], note: 'B sequences of T tokens, C features each' },
    {
      stage: 'X @ Wq  (also Wk, Wv)',
      shape: [B, T, C],
      note: 'one (C, C) matmul for all heads at once',
    },
    {
      stage: '.reshape(B, T, h, hs)',
      shape: [B, T, heads, hs],
      note: `C = h · hs = ${heads} · ${hs}`,
    },
    {
      stage: '.transpose(0, 2, 1, 3) → Q, K, V',
      shape: shapes.Q,
      note: 'heads become a batch axis',
    },
    {
      stage: 'Q @ K.transpose(0, 1, 3, 2) / √hs → scores',
      shape: shapes.scores,
      note: `one T×T matrix per head; √hs = ${Math.sqrt(hs)}`,
    },
    {
      stage: causal ? 'causal mask + softmax → att' : 'softmax(scores) → att',
      shape: shapes.att,
      note: 'each row sums to 1',
    },
    { stage: 'att @ V → headout', shape: shapes.headout, note: 'each head mixes its own V' },
    {
      stage: 'merge_heads → concat',
      shape: shapes.concat,
      note: 'transpose back, reshape (B, T, C)',
    },
    { stage: 'concat @ Wo → Y', shape: shapes.Y, note: 'Wo mixes the heads' },
  ];
}

/** The forward pass's tensors by name, and their shapes. */
function forwardTensors(mha, layer, X, { B, T, causal }) {
  layer.forward(X, { B, T, causal });
  const t = {};
  for (const name of forwardNames(mha)) t[name] = layer.tensor(name);
  const shapes = {};
  for (const [k, v] of Object.entries(t)) shapes[k] = v.shape;
  return { t, shapes };
}

/**
 * Lesson 3: the course forward pass (seed 42, B=2, T=6, C=64, h=4), every intermediate, and the
 * block-diagonal vs full Wo experiment (+1.0 on every entry of headout[:, 0], then
 * forwardFrom('headout')).
 */
export function lesson3(mha, { causal = false, data } = {}) {
  const { X, W, B, T, C } = data ?? courseData(mha);
  const heads = data?.heads ?? COURSE.heads; // a notebook's arrays bring their own
  const dims = { B, T, C, heads, hs: C / heads };
  const layer = borrowLayer(mha, C, heads, W);
  const bdLayer = borrowLayer(mha, C, heads, { ...W, Wo: blockDiagonal(W.Wo, C, heads) });
  try {
    const { t, shapes } = forwardTensors(mha, layer, X, { B, T, causal });
    const QK = qkProducts(t.Q.data, t.K.data, dims);
    const att = t.att.data;
    const { sums, maxErr } = rowSums(att, T);
    const perturbed = perturbHead0(t.headout.data, dims);
    const fullDeltaY = deltaY(layer, t.Y.data, perturbed);
    bdLayer.forward(X, { B, T, causal });
    const bdDeltaY = deltaY(bdLayer, bdLayer.tensor('Y').data, perturbed);
    return {
      ...dims,
      causal,
      tensors: t,
      shapes,
      QK,
      // why 1/√hs: the spread of Q Kᵀ (each entry a dot product of hs terms) and of the scores
      scoreSpread: { before: standardDeviation(QK), after: standardDeviation(t.scores.data) },
      att,
      rowSums: sums,
      rowSumMaxErr: maxErr,
      fullDeltaY,
      bdDeltaY,
      deltaMaxAbs: maxAbs(fullDeltaY),
      blockDiagDelta: blockMaxima(bdDeltaY, C, heads),
      fullDelta: blockMaxima(fullDeltaY, C, heads),
      stages: lesson3Stages({ ...dims, causal, shapes }),
    };
  } finally {
    returnLayer(mha, layer);
    returnLayer(mha, bdLayer);
  }
}

/**
 * The step view of one (batch item b, head h): Q Kᵀ, the scaled scores, the masked scores (−∞
 * above the diagonal when causal), att (each (T, T)), the head output (T, hs), and the row sums
 * of att with |sum − 1|.
 */
export function lesson3Step(r, b, h) {
  const { T, hs } = r;
  const i = b * r.heads + h;
  const scores = slice2d(r.tensors.scores.data, i, T, T);
  const sums = Array.from(r.rowSums.subarray(i * T, (i + 1) * T));
  return {
    QK: slice2d(r.QK, i, T, T),
    scores,
    masked: r.causal ? causalMasked(scores, T) : slice2d(r.tensors.scores.data, i, T, T),
    att: slice2d(r.att, i, T, T),
    headout: slice2d(r.tensors.headout.data, i, T, hs),
    sums,
    sumErrors: distanceFromOne(sums),
  };
}
