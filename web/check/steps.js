// steps.js - the course's steps as the notebook check recomputes them from a student's own arrays:
// one record per step, { name, parents, line, step(p, s) } with the course's NumPy line and its
// maths (ops.js), and the graph of the layer built from them and from the engine's tensor table.
//
//   STEPS                      the records, in the course's order (lesson 3, the loss, lesson 4)
//   graph(s)                   { [node]: { parents, step(p) } } for sizes s (its loss: mse, dot)
//   tensorPlan(mha)            what the engine's table says: the forward and backward results in
//                              order, the steps forwardFrom restarts at, what the backward reads
//   courseLine(node, s)        the course's line for node's step
//
// A node is an engine tensor (Q, scores, dQm, …: mha.tensors) or one of the check's own: Qm, Km,
// Vm (X @ W before split_heads) and loss. s: { B, T, C, heads, hs, N = B·T, n = B·T·C, causal,
// loss }. Adding a tensor to the engine's table (c/mha.h) adds it to the check's rows and order;
// its step here is the NumPy line the check recomputes (a test compares the two lists).

import * as ops from './ops.js';

// x (B, T, C) @ W (C, C), or @ W.T
export const project = (x, w, s, transB = false) =>
  ops.matmul(x, w, { m: s.N, k: s.C, n: s.C, transB });
// a.reshape(-1, C).T @ g.reshape(-1, C): (C, C)
export const weightGrad = (a, g, s) => ops.matmul(a, g, { m: s.C, k: s.N, n: s.C, transA: true });
// per (batch, head) block: (T, a) @ (a, b) with the given transposes
export const perHead = (x, y, s, dims) => ops.matmul(x, y, { batch: s.B * s.heads, ...dims });
export const maskIf = (scores, on, s) => (on ? ops.causalMask(scores, s.T) : scores);
export const qkT = (q, k, s) => perHead(q, k, s, { m: s.T, k: s.hs, n: s.T, transB: true });

const sumSquares = (Y, target) => ops.dot(ops.sub(Y, target), ops.sub(Y, target));

// dX = dQm @ Wq.T (+ dKm @ Wk.T (+ dVm @ Wv.T)): the paths named in `paths`; @ W without .T
// when `plain`
export function dxPaths(p, s, paths, plain = false) {
  let dX = project(p.dQm, p.Wq, s, !plain);
  if (paths.includes('K')) dX = ops.add(dX, project(p.dKm, p.Wk, s, !plain));
  if (paths.includes('V')) dX = ops.add(dX, project(p.dVm, p.Wv, s, !plain));
  return dX;
}

// Q = split_heads(X @ Wq) and its two steps, for each of Q, K, V
function projection(x) {
  const w = `W${x.toLowerCase()}`;
  return [
    {
      name: `${x}m`,
      parents: ['X', w],
      line: `${x} = X @ ${w}  # (B, T, C)`,
      step: (p, s) => project(p.X, p[w], s),
    },
    {
      name: x,
      parents: [`${x}m`],
      line: `${x} = split_heads(X @ ${w})  # (B, h, T, hs)`,
      step: (p, s) => ops.splitHeads(p[`${x}m`], s),
    },
  ];
}

// dQm = merge_heads(dQ) and dWq = Xᵀ dQm, for each of Q, K, V
function projectionGrad(x) {
  const w = `dW${x.toLowerCase()}`;
  return [
    {
      name: `d${x}m`,
      parents: [`d${x}`],
      line: `d${x}m = merge_heads(d${x})  # (B, T, C)`,
      step: (p, s) => ops.mergeHeads(p[`d${x}`], s),
    },
    {
      name: w,
      parents: ['X', `d${x}m`],
      line: `${w} = X.reshape(-1, C).T @ merge_heads(d${x}).reshape(-1, C)`,
      step: (p, s) => weightGrad(p.X, p[`d${x}m`], s),
    },
  ];
}

const DQ_DIMS = (s) => ({ m: s.T, k: s.T, n: s.hs });

/** The course's steps, one record each, in the course's order. */
export const STEPS = Object.freeze([
  ...['Q', 'K', 'V'].flatMap(projection),
  {
    name: 'scores',
    parents: ['Q', 'K'],
    line: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
    step: (p, s) => ops.divide(qkT(p.Q, p.K, s), Math.sqrt(s.hs)),
  },
  {
    name: 'att',
    parents: ['scores'],
    line: 'att = softmax(scores, axis=-1)  # causal: scores above the diagonal set to -inf first',
    step: (p, s) => ops.softmaxRows(maskIf(p.scores, s.causal, s), s.T),
  },
  {
    name: 'headout',
    parents: ['att', 'V'],
    line: 'headout = att @ V',
    step: (p, s) => perHead(p.att, p.V, s, { m: s.T, k: s.T, n: s.hs }),
  },
  {
    name: 'concat',
    parents: ['headout'],
    line: 'concat = merge_heads(headout)  # (B, T, C)',
    step: (p, s) => ops.mergeHeads(p.headout, s),
  },
  {
    name: 'Y',
    parents: ['concat', 'Wo'],
    line: 'Y = concat @ Wo',
    step: (p, s) => project(p.concat, p.Wo, s),
  },
  {
    name: 'loss',
    loss: 'mse',
    parents: ['Y', 'target'],
    line: 'loss = np.mean((Y - target) ** 2)',
    step: (p, s) => Float64Array.of(sumSquares(p.Y, p.target) / s.n),
  },
  {
    name: 'loss',
    loss: 'dot',
    parents: ['Y', 'dY'],
    line: 'loss = np.sum(dY * Y)',
    step: (p) => Float64Array.of(ops.dot(p.dY, p.Y)),
  },
  {
    name: 'dY',
    loss: 'mse',
    parents: ['Y', 'target'],
    line: 'dY = 2 * (Y - target) / Y.size',
    step: (p, s) => ops.scale(ops.sub(p.Y, p.target), 2 / s.n),
  },
  {
    name: 'dWo',
    parents: ['concat', 'dY'],
    line: 'dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)',
    step: (p, s) => weightGrad(p.concat, p.dY, s),
  },
  {
    name: 'dconcat',
    parents: ['dY', 'Wo'],
    line: 'dconcat = dY @ Wo.T',
    step: (p, s) => project(p.dY, p.Wo, s, true),
  },
  {
    name: 'dheadout',
    parents: ['dconcat'],
    line: 'dheadout = split_heads(dconcat)',
    step: (p, s) => ops.splitHeads(p.dconcat, s),
  },
  {
    name: 'dV',
    parents: ['att', 'dheadout'],
    line: 'dV = att.transpose(0, 1, 3, 2) @ dheadout',
    step: (p, s) => perHead(p.att, p.dheadout, s, { ...DQ_DIMS(s), transA: true }),
  },
  {
    name: 'datt',
    parents: ['dheadout', 'V'],
    line: 'datt = dheadout @ V.transpose(0, 1, 3, 2)',
    step: (p, s) => perHead(p.dheadout, p.V, s, { m: s.T, k: s.hs, n: s.T, transB: true }),
  },
  {
    name: 'dscores',
    parents: ['att', 'datt'],
    line: 'dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))',
    step: (p, s) => ops.softmaxBackward(p.att, p.datt, s.T),
  },
  {
    name: 'dQ',
    parents: ['dscores', 'K'],
    line: 'dQ = dscores @ K / np.sqrt(hs)',
    step: (p, s) => ops.divide(perHead(p.dscores, p.K, s, DQ_DIMS(s)), Math.sqrt(s.hs)),
  },
  {
    name: 'dK',
    parents: ['dscores', 'Q'],
    line: 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)',
    step: (p, s) =>
      ops.divide(perHead(p.dscores, p.Q, s, { ...DQ_DIMS(s), transA: true }), Math.sqrt(s.hs)),
  },
  ...['Q', 'K', 'V'].flatMap(projectionGrad),
  {
    name: 'dX',
    parents: ['dQm', 'dKm', 'dVm', 'Wq', 'Wk', 'Wv'],
    line: 'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T  # dQm = merge_heads(dQ), ...',
    step: (p, s) => dxPaths(p, s, 'QKV'),
  },
]);

// the steps of the forward (no loss field, before the loss) and those after it
const LOSS_AT = STEPS.findIndex((r) => r.name === 'loss');
const isForward = (record) => STEPS.indexOf(record) < LOSS_AT;

/** The nodes of the layer for these sizes: { [node]: { parents, step(p) } }. */
export function graph(s) {
  const nodes = {};
  for (const record of STEPS) {
    if (s.loss == null && !isForward(record)) continue;
    if (record.loss && record.loss !== s.loss) continue;
    nodes[record.name] = { parents: record.parents, step: (p) => record.step(p, s) };
  }
  return nodes;
}

/** The course's line for node's step (no comment), for the check's loss and causal option. */
export function courseLine(node, s) {
  const record = STEPS.find((r) => r.name === node && (!r.loss || r.loss === (s.loss ?? 'mse')));
  if (node === 'att' && s.causal) {
    return (
      'att = softmax(np.where(mask, -np.inf, scores), axis=-1) with ' +
      'mask = np.triu(np.ones((T, T), bool), k=1)'
    );
  }
  return record.line.replace(/\s+#.*$/, '');
}

/**
 * What the engine's tensor table says about the check's graph: the forward results and the
 * backward results in order (mha.tensors, mha.gradOrder), the forward's restarts (for each
 * result of the chain scores … Y: the tensors a restart reads and forwardFrom's argument), the
 * backward's steps and the forward tensors they read.
 */
export function tensorPlan(mha) {
  const tensors = mha.tensors;
  const forward = tensors.filter((t) => t.kind === 'intermediate' || t.kind === 'output');
  const backward = tensors.filter((t) => t.kind === 'gradient' && t.step > 0).map((t) => t.name);
  const restartOf = new Map(tensors.map((t) => [t.name, t.stage]));
  const byName = new Map(STEPS.map((r) => [r.name, r]));
  // the stage that produces a forward result: the one its parents restart at (0: the projections)
  const producer = (name) =>
    Math.max(0, ...(byName.get(name)?.parents ?? []).map((p) => restartOf.get(p) ?? 0));
  const restart = {};
  for (const t of forward) {
    const stage = producer(t.name);
    if (stage === 0) continue;
    const set = forward
      .filter((u) => u.stage !== null && u.stage >= stage && producer(u.name) < stage)
      .map((u) => u.name);
    const from = byName.get(t.name).parents.find((p) => restartOf.get(p) === stage);
    restart[t.name] = { set, from };
  }
  const reads = new Set();
  for (const name of backward) {
    for (const p of byName.get(name)?.parents ?? []) {
      if (forward.some((t) => t.name === p)) reads.add(p);
    }
  }
  return {
    forward: forward.map((t) => t.name),
    backward,
    results: mha.gradOrder,
    restart,
    backwardReads: [...reads],
  };
}
