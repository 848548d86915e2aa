// lesson3.js - "Parallel attention and concatenation": the course forward pass (seed 42, B = 2,
// T = 6, C = 64, h = 4), every intermediate, and the block-diagonal vs full Wo experiment
// (DOM-free).

import { forwardNames } from './tensors.js';
import { COURSE } from './defaults.js';
import { courseData } from './course.js';
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

/** 'columns 0–15', 'columns 16–31', ...: the hs-wide column blocks of a (·, C) array. */
export function columnBlockLabels(C, heads) {
  const hs = C / heads;
  return Array.from({ length: heads }, (_, j) => `columns ${j * hs}–${(j + 1) * hs - 1}`);
}

/**
 * Why every row of ΔY (B·T, C) is the same after headout[:, 0] += 1: each token's row of Δconcat
 * is ones in head 0's columns 0 … hs−1, so each row of ΔY = Δconcat @ Wo is the sum of Wo's rows
 * 0 … hs−1. Returns { headSum: Wo[:hs].sum(axis=0) (C), rowSpread: max |ΔY[r] − ΔY[0]|,
 * maxDiff: max |ΔY[r] − headSum| } over every row r.
 */
export function deltaRowCheck(dY, Wo, { B, T, C, hs }) {
  const headSum = new Float64Array(C);
  for (let i = 0; i < hs; i++) for (let c = 0; c < C; c++) headSum[c] += Wo[i * C + c];
  let rowSpread = 0;
  let maxDiff = 0;
  for (let r = 0; r < B * T; r++) {
    for (let c = 0; c < C; c++) {
      rowSpread = Math.max(rowSpread, Math.abs(dY[r * C + c] - dY[c]));
      maxDiff = Math.max(maxDiff, Math.abs(dY[r * C + c] - headSum[c]));
    }
  }
  return { headSum, rowSpread, maxDiff };
}

// The causal mask as the lesson's script writes it: key j > query i is the future.
const MASKED = 'np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores)';

/**
 * Lesson 3's captions as NumPy that runs in its Copy-as-NumPy script (with the layer's cache and
 * weights under their names: X, Wq, ..., Q, K, V, scores, att, headout, concat, Y) and on its
 * .npz: { kind, name, code, shape }. kind 'stage' (the table of shapes, with a note), 'map' (att
 * of each batch item and head, and their mean), 'step' (the step view of batch item b, head h),
 * 'bump' (the entries the block experiment changes). tests/model/captions.test.mjs runs them.
 */
export function lesson3Captions({ B, heads, hs, causal = false, b = 0, h = 0 }) {
  const stage = (name, code, shape, note) => ({ kind: 'stage', name, code, shape, note });
  const caps = [
    stage('X', 'X', '(B, T, C)', 'the input: B sequences of T tokens, C features each'),
    stage('', 'X @ Wq', '(B, T, C)', 'one (C, C) matmul for all heads at once (also Wk, Wv)'),
    stage('', '(X @ Wq).reshape(B, T, h, hs)', '(B, T, h, hs)', `C = h · hs = ${heads} · ${hs}`),
    stage(
      'Q',
      '(X @ Wq).reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
      '(B, h, T, hs)',
      'heads become a batch axis; K, V the same from Wk, Wv',
    ),
    stage(
      'scores',
      'Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
      '(B, h, T, T)',
      `one T×T matrix per head; √hs = ${Math.sqrt(hs)}`,
    ),
    stage(
      'att',
      `softmax(${causal ? MASKED : 'scores'})`,
      '(B, h, T, T)',
      causal ? 'the causal mask: −∞ above the diagonal; each row sums to 1' : 'each row sums to 1',
    ),
    stage('headout', 'att @ V', '(B, h, T, hs)', 'each head mixes its own V'),
    stage('concat', 'merge_heads(headout)', '(B, T, C)', 'transpose back, reshape (B, T, C)'),
    stage('Y', 'concat @ Wo', '(B, T, C)', 'Wo mixes the heads'),
  ];
  for (let bi = 0; bi < B; bi++) {
    for (let i = 0; i < heads; i++) {
      caps.push({ kind: 'map', name: `att ${bi} ${i}`, code: `att[${bi}, ${i}]`, shape: '(T, T)' });
    }
    caps.push({
      kind: 'map',
      name: `mean ${bi}`,
      code: `att[${bi}].mean(axis=0)`,
      shape: '(T, T)',
    });
  }
  const at = `[${b}, ${h}]`;
  caps.push(
    { kind: 'step', name: `Q${at} @ K${at}.T`, code: `Q${at} @ K${at}.T`, shape: '(T, T)' },
    { kind: 'step', name: `scores${at}`, code: `Q${at} @ K${at}.T / np.sqrt(hs)`, shape: '(T, T)' },
    { kind: 'step', name: `att${at}`, code: `att${at}`, shape: '(T, T)' },
    { kind: 'step', name: `headout${at}`, code: `att${at} @ V${at}`, shape: '(T, hs)' },
    { kind: 'bump', name: 'headout[:, 0]', code: 'headout[:, 0]', shape: '(B, T, hs)' },
  );
  return caps;
}

/** The rows of the "shapes at every stage" table: each stage's NumPy, its shape and a note. */
export function lesson3Stages({ B, T, C, heads, hs, causal }) {
  const dims = { B, T, C, h: heads, hs };
  const shapeOf = (s) =>
    s
      .slice(1, -1)
      .split(', ')
      .map((k) => dims[k]);
  return lesson3Captions({ B, heads, hs, causal })
    .filter((c) => c.kind === 'stage')
    .map((c) => ({
      stage: c.name && c.name !== c.code ? `${c.name} = ${c.code}` : c.code,
      shape: shapeOf(c.shape),
      note: c.note,
    }));
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
  const bdWo = blockDiagonal(W.Wo, C, heads);
  const layer = borrowLayer(mha, C, heads, W);
  const bdLayer = borrowLayer(mha, C, heads, { ...W, Wo: bdWo });
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
      columnBlocks: columnBlockLabels(C, heads),
      // every row of ΔY is the sum of Wo's rows 0 … hs−1 (the block-diagonal Wo's for bdDeltaY)
      fullRows: deltaRowCheck(fullDeltaY, W.Wo, dims),
      bdRows: deltaRowCheck(bdDeltaY, bdWo, dims),
      stages: lesson3Stages({ ...dims, causal }),
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
