// mistakes.js - the known mistakes of the course's notebook and the pipeline that reproduces them.
//
// The layer is written as a graph of the course's steps, one node per array (Qm = X @ Wq is the
// merged Q before split_heads; dQm = merge_heads(dQ)). Each step has the right NumPy line and the
// mistaken versions a student writes (`X @ Wq.T`, `x.reshape(B, h, T, hs)`, ...). A Pipeline
// evaluates the graph from the student's own arrays: every array they gave replaces its node, the
// rest is recomputed, and a mistake can be switched on at any node to see whether it reproduces
// what they saved.
//
//   MISTAKES                      the catalogue [{ id, tensors, message }] (README, page)
//   new Pipeline(sizes, inputs)   provide(node, data), step(node), value(node), adopt(...)
//   findMistake(pipe, node, ...)  the first known mistake that reproduces the student's array
//   simulate(sizes, inputs)       every node, no mistake (tests: agrees with the engine)

import * as ops from './ops.js';
import { agrees } from './compare.js';

/** The diagnoses of the notebook check; `tensors`: the results each is blamed on first. */
export const MISTAKES = Object.freeze(
  [
    [
      'weights-transposed',
      ['Q', 'K', 'V', 'Y'],
      'You computed X @ W.T; the course uses Q = X @ Wq (W is (C, C) with the inputs on its ' +
        'rows), and Y = concat @ Wo.',
    ],
    [
      'missing-scale',
      ['scores', 'dQ', 'dK'],
      'No 1/√hs: the course uses scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs), and ' +
        'dQ = dscores @ K / np.sqrt(hs), dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs).',
    ],
    [
      'scale-sqrt-C',
      ['scores', 'dQ', 'dK'],
      'You divided by np.sqrt(C); the course divides by the square root of the head size: ' +
        'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs) with hs = C // h.',
    ],
    [
      'softmax-wrong-axis',
      ['att'],
      "Your softmax normalises over the queries (axis=-2); each query's weights over the keys " +
        'sum to 1: att = softmax(scores, axis=-1).',
    ],
    [
      'causal-mismatch',
      ['scores', 'att'],
      'The causal mask does not match the check: causal means att = softmax(np.where(mask, ' +
        '-np.inf, scores), axis=-1) with mask = np.triu(np.ones((T, T), bool), k=1); otherwise ' +
        "att = softmax(scores, axis=-1). Set the check's causal option to what your notebook does.",
    ],
    [
      'split-without-transpose',
      ['Q', 'K', 'V', 'dheadout'],
      'x.reshape(B, h, T, hs) mixes tokens and heads; split_heads is ' +
        'x.reshape(B, T, h, hs).transpose(0, 2, 1, 3).',
    ],
    [
      'merge-without-transpose',
      ['headout', 'concat', 'dQ', 'dK', 'dV'],
      'x.reshape(B, T, C) of a (B, h, T, hs) array mixes tokens and heads; merge_heads is ' +
        'x.transpose(0, 2, 1, 3).reshape(B, T, C).',
    ],
    ['mse-loss-sum', ['loss'], 'The loss is the mean: loss = np.mean((Y - target) ** 2).'],
    [
      'mse-grad-factor',
      ['dY'],
      'Your dY is a constant multiple of the gradient of the mean: ' +
        'dY = 2 * (Y - target) / Y.size.',
    ],
    [
      'dw-transposed',
      ['dWo', 'dWq', 'dWk', 'dWv'],
      "A weight's gradient is inputᵀ @ output gradient: dWo = concat.reshape(-1, C).T @ " +
        'dY.reshape(-1, C); you computed its transpose (dY.reshape(-1, C).T @ concat...).',
    ],
    [
      'backward-w-not-transposed',
      ['dconcat', 'dX'],
      'The gradient goes back through the transposed weight: dconcat = dY @ Wo.T and ' +
        'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T; you used W without .T.',
    ],
    [
      'dv-not-transposed',
      ['dV'],
      'dV = att.transpose(0, 1, 3, 2) @ dheadout; you computed att @ dheadout.',
    ],
    [
      'dscores-missing-rowsum',
      ['dscores'],
      "The softmax backward subtracts each row's sum: " +
        'dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True)).',
    ],
    [
      'dq-transposed',
      ['dQ'],
      'dQ = dscores @ K / np.sqrt(hs); you computed dscores.transpose(0, 1, 3, 2) @ K.',
    ],
    [
      'dk-transposed',
      ['dK'],
      'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs) (scores = Q Kᵀ, so K takes ' +
        'dscores transposed); you computed dscores @ Q.',
    ],
    [
      'dx-missing-paths',
      ['dX'],
      'X feeds Q, K and V, so dX sums three paths: dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T ' +
        '(dQm = merge_heads(dQ), ...).',
    ],
    [
      'follows-from',
      [],
      'follows from <name>: this step, recomputed from your own <inputs>, matches your array.',
    ],
    [
      'step-differs',
      [],
      "No known mistake reproduces your array; the message shows the course's line for the step.",
    ],
  ].map(([id, tensors, message]) =>
    Object.freeze({ id, tensors: Object.freeze(tensors), message }),
  ),
);

/** The course's line for each node's step. */
export const LINES = Object.freeze({
  Qm: 'Q = X @ Wq  # (B, T, C)',
  Km: 'K = X @ Wk  # (B, T, C)',
  Vm: 'V = X @ Wv  # (B, T, C)',
  Q: 'Q = split_heads(X @ Wq)  # (B, h, T, hs)',
  K: 'K = split_heads(X @ Wk)  # (B, h, T, hs)',
  V: 'V = split_heads(X @ Wv)  # (B, h, T, hs)',
  scores: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
  att: 'att = softmax(scores, axis=-1)  # causal: scores above the diagonal set to -inf first',
  headout: 'headout = att @ V',
  concat: 'concat = merge_heads(headout)  # (B, T, C)',
  Y: 'Y = concat @ Wo',
  loss: 'loss = np.mean((Y - target) ** 2)  # with dY given: loss = np.sum(dY * Y)',
  dY: 'dY = 2 * (Y - target) / Y.size',
  dWo: 'dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)',
  dconcat: 'dconcat = dY @ Wo.T',
  dheadout: 'dheadout = split_heads(dconcat)',
  dV: 'dV = att.transpose(0, 1, 3, 2) @ dheadout',
  datt: 'datt = dheadout @ V.transpose(0, 1, 3, 2)',
  dscores: 'dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))',
  dQ: 'dQ = dscores @ K / np.sqrt(hs)',
  dK: 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)',
  dQm: 'dQm = merge_heads(dQ)  # (B, T, C)',
  dKm: 'dKm = merge_heads(dK)  # (B, T, C)',
  dVm: 'dVm = merge_heads(dV)  # (B, T, C)',
  dWq: 'dWq = X.reshape(-1, C).T @ merge_heads(dQ).reshape(-1, C)',
  dWk: 'dWk = X.reshape(-1, C).T @ merge_heads(dK).reshape(-1, C)',
  dWv: 'dWv = X.reshape(-1, C).T @ merge_heads(dV).reshape(-1, C)',
  dX: 'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T  # dQm = merge_heads(dQ), ...',
});

// ------------------------------------------------------------------------------------------------
// the steps (s: sizes { B, T, C, heads, hs, N = B*T, n = B*T*C, causal, loss })

// x (B, T, C) @ W (C, C), or @ W.T
const project = (x, w, s, transB = false) => ops.matmul(x, w, { m: s.N, k: s.C, n: s.C, transB });
// a.reshape(-1, C).T @ g.reshape(-1, C): (C, C)
const weightGrad = (a, g, s) => ops.matmul(a, g, { m: s.C, k: s.N, n: s.C, transA: true });
// per (batch, head) block: (T, a) @ (a, b) with the given transposes
const perHead = (x, y, s, dims) => ops.matmul(x, y, { batch: s.B * s.heads, ...dims });
const maskIf = (scores, on, s) => (on ? ops.causalMask(scores, s.T) : scores);
const qkT = (q, k, s) => perHead(q, k, s, { m: s.T, k: s.hs, n: s.T, transB: true });

function forwardNodes(s) {
  const nodes = {};
  for (const [x, w] of [
    ['Q', 'Wq'],
    ['K', 'Wk'],
    ['V', 'Wv'],
  ]) {
    nodes[`${x}m`] = { parents: ['X', w], step: (p) => project(p.X, p[w], s) };
    nodes[x] = { parents: [`${x}m`], step: (p) => ops.splitHeads(p[`${x}m`], s) };
  }
  return Object.assign(nodes, {
    scores: {
      parents: ['Q', 'K'],
      step: (p) => ops.divide(qkT(p.Q, p.K, s), Math.sqrt(s.hs)),
    },
    att: { parents: ['scores'], step: (p) => ops.softmaxRows(maskIf(p.scores, s.causal, s), s.T) },
    headout: {
      parents: ['att', 'V'],
      step: (p) => perHead(p.att, p.V, s, { m: s.T, k: s.T, n: s.hs }),
    },
    concat: { parents: ['headout'], step: (p) => ops.mergeHeads(p.headout, s) },
    Y: { parents: ['concat', 'Wo'], step: (p) => project(p.concat, p.Wo, s) },
  });
}

const sumSquares = (Y, target) => ops.dot(ops.sub(Y, target), ops.sub(Y, target));

function lossNodes(s) {
  if (s.loss === 'dot') {
    return { loss: { parents: ['Y', 'dY'], step: (p) => Float64Array.of(ops.dot(p.dY, p.Y)) } };
  }
  return {
    loss: {
      parents: ['Y', 'target'],
      step: (p) => Float64Array.of(sumSquares(p.Y, p.target) / s.n),
    },
    dY: { parents: ['Y', 'target'], step: (p) => ops.scale(ops.sub(p.Y, p.target), 2 / s.n) },
  };
}

function backwardNodes(s) {
  const root = Math.sqrt(s.hs);
  const nodes = {
    dWo: { parents: ['concat', 'dY'], step: (p) => weightGrad(p.concat, p.dY, s) },
    dconcat: { parents: ['dY', 'Wo'], step: (p) => project(p.dY, p.Wo, s, true) },
    dheadout: { parents: ['dconcat'], step: (p) => ops.splitHeads(p.dconcat, s) },
    dV: {
      parents: ['att', 'dheadout'],
      step: (p) => perHead(p.att, p.dheadout, s, { m: s.T, k: s.T, n: s.hs, transA: true }),
    },
    datt: {
      parents: ['dheadout', 'V'],
      step: (p) => perHead(p.dheadout, p.V, s, { m: s.T, k: s.hs, n: s.T, transB: true }),
    },
    dscores: { parents: ['att', 'datt'], step: (p) => ops.softmaxBackward(p.att, p.datt, s.T) },
    dQ: {
      parents: ['dscores', 'K'],
      step: (p) => ops.divide(perHead(p.dscores, p.K, s, { m: s.T, k: s.T, n: s.hs }), root),
    },
    dK: {
      parents: ['dscores', 'Q'],
      step: (p) =>
        ops.divide(perHead(p.dscores, p.Q, s, { m: s.T, k: s.T, n: s.hs, transA: true }), root),
    },
    dX: { parents: ['dQm', 'dKm', 'dVm', 'Wq', 'Wk', 'Wv'], step: (p) => dxPaths(p, s, 'QKV') },
  };
  for (const x of ['Q', 'K', 'V']) {
    nodes[`d${x}m`] = { parents: [`d${x}`], step: (p) => ops.mergeHeads(p[`d${x}`], s) };
    nodes[`dW${x.toLowerCase()}`] = {
      parents: ['X', `d${x}m`],
      step: (p) => weightGrad(p.X, p[`d${x}m`], s),
    };
  }
  return nodes;
}

// dX = dQm @ Wq.T (+ dKm @ Wk.T (+ dVm @ Wv.T)): the paths named in `paths`; @ W without .T
// when `plain`
function dxPaths(p, s, paths, plain = false) {
  let dX = project(p.dQm, p.Wq, s, !plain);
  if (paths.includes('K')) dX = ops.add(dX, project(p.dKm, p.Wk, s, !plain));
  if (paths.includes('V')) dX = ops.add(dX, project(p.dVm, p.Wv, s, !plain));
  return dX;
}

/** The nodes of the layer for these sizes: { [node]: { parents, step(p) } }. */
export function graph(s) {
  const nodes = forwardNodes(s);
  if (s.loss == null) return nodes;
  return Object.assign(nodes, lossNodes(s), backwardNodes(s));
}

// ------------------------------------------------------------------------------------------------
// the mistaken steps: variants(node, s) -> [{ id, fn(p, param), what(param), params }]
// `what` is the student's line; `params`: the values to try (default [undefined]); 'fit': a
// constant factor found by least squares; `own`: only when the node is the result being checked.

const sqrtC = (s) => Math.sqrt(s.C);

function projectionVariants(node, s) {
  const x = node[0];
  const w = `W${x.toLowerCase()}`;
  if (/^[QKV]m$/.test(node)) {
    return [v('weights-transposed', (p) => project(p.X, p[w], s, true), `${x} = X @ ${w}.T`)];
  }
  if (/^[QKV]$/.test(node)) {
    return [
      v(
        'split-without-transpose',
        (p) => ops.reshapeOnly(p[`${x}m`]),
        `${x} = (X @ ${w}).reshape(B, h, T, hs), no transpose`,
      ),
    ];
  }
  return [];
}

const v = (id, fn, what, extra = {}) => ({ id, fn, what: () => what, ...extra });

function scoreVariants(s) {
  const list = [
    v(
      'missing-scale',
      (p) => qkT(p.Q, p.K, s),
      'scores = Q @ K.transpose(0, 1, 3, 2) with no / np.sqrt(hs)',
    ),
    v(
      'scale-sqrt-C',
      (p) => ops.divide(qkT(p.Q, p.K, s), sqrtC(s)),
      'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(C)',
    ),
  ];
  if (!s.causal) {
    list.push({
      id: 'causal-mismatch',
      own: true,
      maskedFill: true,
      fn: (p, fill) => ops.causalMask(ops.divide(qkT(p.Q, p.K, s), Math.sqrt(s.hs)), s.T, fill),
      what: (fill) =>
        `scores masked above the diagonal (to ${fill === -Infinity ? '-np.inf' : fill}) ` +
        'though the check is not causal',
    });
  }
  return list;
}

function attVariants(s) {
  const masked = (p) => maskIf(p.scores, s.causal, s);
  return [
    v(
      'softmax-wrong-axis',
      (p) => ops.softmaxColumns(masked(p), s.T),
      "att = softmax(scores, axis=-2): each key's column sums to 1",
    ),
    v(
      'causal-mismatch',
      (p) => ops.softmaxRows(maskIf(p.scores, !s.causal, s), s.T),
      s.causal
        ? 'att without the causal mask (the check is causal)'
        : 'att with the causal mask (the check is not causal)',
    ),
  ];
}

function lossVariants(node, s) {
  if (node === 'loss' && s.loss === 'mse') {
    return [
      v(
        'mse-loss-sum',
        (p) => Float64Array.of(sumSquares(p.Y, p.target)),
        'loss = np.sum((Y - target) ** 2)',
      ),
    ];
  }
  if (node === 'dY') {
    return [
      {
        id: 'mse-grad-factor',
        params: 'fit',
        fn: (p, c) => ops.scale(ops.sub(p.Y, p.target), (2 / s.n) * c),
        what: (c) => `dY = c * 2 * (Y - target) / Y.size with c = ${factorText(c, s)}`,
      },
    ];
  }
  return [];
}

// "120 (= Y.size: the sum instead of the mean)"
function factorText(c, s) {
  const known = [
    [s.n, 'Y.size: the sum instead of the mean'],
    [0.5, 'the factor 2 is missing'],
    [s.n / 2, 'Y.size / 2: dY = Y - target, no 2 and no mean'],
    [2, 'a factor 2 too many'],
    [-1, 'the sign is flipped: target - Y'],
    [s.C, 'C: divided by B*T instead of Y.size'],
    [s.N, 'B*T: divided by C instead of Y.size'],
  ];
  const hit = known.find(([k]) => Math.abs(c - k) <= 1e-9 * Math.abs(k));
  const num = Number(c.toPrecision(6));
  return hit ? `${num} (= ${hit[1]})` : `${num}`;
}

// dQ and dK: the 1/√hs and the transpose of dscores
function queryKeyGradVariants(s) {
  const root = Math.sqrt(s.hs);
  const dims = { m: s.T, k: s.T, n: s.hs };
  const dq = (p, t, d) => ops.divide(perHead(p.dscores, p.K, s, { ...dims, transA: t }), d);
  const dk = (p, t, d) => ops.divide(perHead(p.dscores, p.Q, s, { ...dims, transA: t }), d);
  const dsT = 'dscores.transpose(0, 1, 3, 2)';
  return {
    dQ: [
      v('missing-scale', (p) => dq(p, false, 1), 'dQ = dscores @ K with no / np.sqrt(hs)'),
      v('scale-sqrt-C', (p) => dq(p, false, sqrtC(s)), 'dQ = dscores @ K / np.sqrt(C)'),
      v('dq-transposed', (p) => dq(p, true, root), `dQ = ${dsT} @ K / np.sqrt(hs)`),
    ],
    dK: [
      v('missing-scale', (p) => dk(p, true, 1), `dK = ${dsT} @ Q with no / np.sqrt(hs)`),
      v('scale-sqrt-C', (p) => dk(p, true, sqrtC(s)), `dK = ${dsT} @ Q / np.sqrt(C)`),
      v('dk-transposed', (p) => dk(p, false, root), 'dK = dscores @ Q / np.sqrt(hs)'),
    ],
  };
}

// dQm, dKm, dVm (merge_heads) and dWq, dWk, dWv
function projectionGradVariants(s) {
  const table = {};
  for (const x of ['Q', 'K', 'V']) {
    const merge = (p) => ops.reshapeOnly(p[`d${x}`]);
    const what = `d${x}.reshape(B, T, C) to merge d${x}, no transpose`;
    table[`d${x}m`] = [v('merge-without-transpose', merge, what)];
    const w = `dW${x.toLowerCase()}`;
    const transposed = (p) => weightGrad(p[`d${x}m`], p.X, s);
    table[w] = [
      v('dw-transposed', transposed, `${w} = d${x}m.reshape(-1, C).T @ X.reshape(-1, C)`),
    ];
  }
  return table;
}

function backwardVariants(node, s) {
  const dims = { m: s.T, k: s.T, n: s.hs };
  const table = {
    dWo: [
      v(
        'dw-transposed',
        (p) => weightGrad(p.dY, p.concat, s),
        'dWo = dY.reshape(-1, C).T @ concat.reshape(-1, C)',
      ),
    ],
    dconcat: [v('backward-w-not-transposed', (p) => project(p.dY, p.Wo, s), 'dconcat = dY @ Wo')],
    dheadout: [
      v(
        'split-without-transpose',
        (p) => ops.reshapeOnly(p.dconcat),
        'dheadout = dconcat.reshape(B, h, T, hs), no transpose',
      ),
    ],
    dV: [v('dv-not-transposed', (p) => perHead(p.att, p.dheadout, s, dims), 'dV = att @ dheadout')],
    dscores: [v('dscores-missing-rowsum', (p) => ops.mul(p.att, p.datt), 'dscores = att * datt')],
    dX: [
      {
        id: 'dx-missing-paths',
        params: ['Q', 'QK'],
        fn: (p, paths) => dxPaths(p, s, paths),
        what: (paths) =>
          paths === 'Q'
            ? 'dX = dQm @ Wq.T (the Q path only)'
            : 'dX = dQm @ Wq.T + dKm @ Wk.T (no V path)',
      },
      v(
        'backward-w-not-transposed',
        (p) => dxPaths(p, s, 'QKV', true),
        'dX = dQm @ Wq + dKm @ Wk + dVm @ Wv',
      ),
    ],
    ...queryKeyGradVariants(s),
    ...projectionGradVariants(s),
  };
  return table[node] ?? [];
}

/** The mistaken versions of node's step for these sizes. */
export function variants(node, s) {
  if (node === 'scores') return scoreVariants(s);
  if (node === 'att') return attVariants(s);
  if (node === 'concat') {
    return [
      v(
        'merge-without-transpose',
        (p) => ops.reshapeOnly(p.headout),
        'concat = headout.reshape(B, T, C), no transpose',
      ),
    ];
  }
  if (node === 'Y') {
    return [v('weights-transposed', (p) => project(p.concat, p.Wo, s, true), 'Y = concat @ Wo.T')];
  }
  return [...projectionVariants(node, s), ...lossVariants(node, s), ...backwardVariants(node, s)];
}

// ------------------------------------------------------------------------------------------------
// the pipeline of one student's notebook

/**
 * The layer's graph evaluated from a student's arrays: `inputs` (X, Wq..Wo, target or dY) and
 * every result given so far (`provide`) replace their node; the other nodes are recomputed, with
 * the mistakes `adopt`ed at them. `extra` (a Map node -> { variant, param }) switches on mistakes
 * for one evaluation without changing the pipeline.
 */
export class Pipeline {
  #memo = new Map(); // node -> value with the pipeline's own mistakes
  #shared = new Map(); // "node|id|param" -> value of one mistaken step on unchanged parents

  constructor(sizes, inputs) {
    this.s = sizes;
    this.nodes = graph(sizes);
    this.given = new Map(Object.entries(inputs));
    this.sites = new Map(); // node -> { variant, param } adopted (nodes not given)
    this.children = new Map(Object.keys(this.nodes).map((n) => [n, []]));
    for (const [n, { parents }] of Object.entries(this.nodes)) {
      for (const p of parents) this.children.get(p)?.push(n);
    }
  }

  /** Use the student's array for node from now on. */
  provide(node, data) {
    this.given.set(node, data);
    this.#invalidate(node);
  }

  /** Recompute node (not given) with this mistake from now on. */
  adopt(node, choice) {
    this.sites.set(node, choice);
    this.#invalidate(node);
  }

  #invalidate(node) {
    this.#shared.clear();
    const stack = [node];
    while (stack.length) {
      const n = stack.pop();
      this.#memo.delete(n);
      stack.push(...(this.children.get(n) ?? []));
    }
  }

  /** Node's value: the student's array if given, else its step recomputed. */
  value(node, extra = null, scratch = new Map()) {
    if (this.given.has(node)) return this.given.get(node);
    if (!extra || !this.#touched(node, extra, scratch)) {
      if (!this.#memo.has(node)) this.#memo.set(node, this.step(node));
      return this.#memo.get(node);
    }
    const choice = extra.get(node);
    const parentsPlain = this.nodes[node].parents.every((p) => !this.#touched(p, extra, scratch));
    const key = `${node}|${choice?.variant.id}|${choice?.param}`;
    if (choice && parentsPlain) {
      if (!this.#shared.has(key)) this.#shared.set(key, this.step(node, extra, scratch));
      return this.#shared.get(key);
    }
    if (!scratch.has(node)) scratch.set(node, this.step(node, extra, scratch));
    return scratch.get(node);
  }

  // whether a mistake in `extra` reaches node through nodes that are not given
  #touched(node, extra, scratch) {
    if (this.given.has(node)) return false;
    if (extra.has(node)) return true;
    const key = `touched:${node}`;
    if (!scratch.has(key)) {
      scratch.set(
        key,
        this.nodes[node].parents.some((p) => this.#touched(p, extra, scratch)),
      );
    }
    return scratch.get(key);
  }

  /** Node's step (even if it is given) on its parents' values, with extra's or adopted mistakes. */
  step(node, extra = null, scratch = new Map()) {
    const p = {};
    for (const parent of this.nodes[node].parents) p[parent] = this.value(parent, extra, scratch);
    const choice = extra?.get(node) ?? this.sites.get(node);
    return choice ? choice.variant.fn(p, choice.param) : this.nodes[node].step(p);
  }

  /** The nodes node depends on through nodes not given, nearest first. */
  hiddenAncestors(node) {
    const out = [];
    const queue = [...this.nodes[node].parents];
    while (queue.length) {
      const n = queue.shift();
      if (this.given.has(n) || out.includes(n)) continue;
      out.push(n);
      queue.push(...this.nodes[n].parents);
    }
    return out;
  }

  /** The given arrays node is computed from (through nodes not given), parents first. */
  frontier(node) {
    const found = [];
    const seen = new Set();
    const visit = (n) => {
      for (const p of this.nodes[n].parents) {
        if (seen.has(p)) continue;
        seen.add(p);
        if (this.given.has(p)) found.push(p);
        else visit(p);
      }
    };
    visit(node);
    return found;
  }
}

/** Every node of the layer from these inputs with no mistake: { [node]: Float64Array }. */
export function simulate(sizes, inputs) {
  const pipe = new Pipeline(sizes, inputs);
  return Object.fromEntries(Object.keys(pipe.nodes).map((n) => [n, pipe.value(n)]));
}

// ------------------------------------------------------------------------------------------------
// finding the mistake that reproduces a student's array

// All subsets of at least two of the sites (up to four sites; else just all of them).
function multiSets(sites) {
  if (sites.length < 2) return [];
  if (sites.length > 4) return [sites];
  const sets = [];
  for (let mask = 1; mask < 1 << sites.length; mask++) {
    const set = sites.filter((_, i) => mask & (1 << i));
    if (set.length >= 2) sets.push(set);
  }
  return sets.sort((a, b) => a.length - b.length);
}

/**
 * The candidates at node (the result being checked) and the nodes it is computed from that the
 * student did not give: each single mistake, then one mistake at several of its sites together.
 * `ids`: only these mistakes. Yields { id, extra: Map(node -> { variant, param }), variant }.
 */
export function* candidates(pipe, node, ids = null) {
  const sites = [node, ...pipe.hiddenAncestors(node)];
  const byId = new Map();
  for (const site of sites) {
    for (const variant of variants(site, pipe.s)) {
      if (ids && !ids.includes(variant.id)) continue;
      if (variant.own && site !== node) continue;
      yield { id: variant.id, site, variant };
      if (!variant.params && !variant.own) {
        if (!byId.has(variant.id)) byId.set(variant.id, []);
        byId.get(variant.id).push([site, variant]);
      }
    }
  }
  for (const [id, list] of byId) {
    for (const set of multiSets(list)) {
      yield {
        id,
        extra: new Map(set.map(([site, variant]) => [site, { variant }])),
        variant: set[0][1],
      };
    }
  }
}

/**
 * The first candidate at node that reproduces the student's array `yours` (the row's compare
 * options: dtype, resolution, scalar, skip): { id, extra, param, variant } or null.
 */
export function findMistake(pipe, node, yours, opts, ids = null) {
  for (const cand of candidates(pipe, node, ids)) {
    for (const extra of extrasOf(pipe, node, cand, yours)) {
      const mine = pipe.step(node, extra);
      if (reproduces(yours, mine, opts, cand.variant, pipe.s)) {
        return { id: cand.id, extra, variant: cand.variant, param: extra.get(cand.site)?.param };
      }
    }
  }
  return null;
}

// The settings of one candidate to try: its params, or the least-squares factor.
function extrasOf(pipe, node, cand, yours) {
  if (cand.extra) return [cand.extra];
  const { site, variant } = cand;
  if (variant.params === 'fit') {
    const one = pipe.step(node, new Map([[site, { variant, param: 1 }]]));
    const c = ops.dot(yours, one) / ops.dot(one, one);
    if (!Number.isFinite(c) || Math.abs(c - 1) < 1e-9 || c === 0) return [];
    return [new Map([[site, { variant, param: c }]])];
  }
  if (variant.maskedFill) {
    if (pipe.s.T < 2) return [];
    return [new Map([[site, { variant, param: yours[1] }]])];
  }
  return (variant.params ?? [undefined]).map((param) => new Map([[site, { variant, param }]]));
}

// Whether the candidate's array equals the student's within tolerance. Masked scores: the entries
// on and below the diagonal as usual, those above all the fill, which must be -inf or far below
// every score.
function reproduces(yours, mine, opts, variant, s) {
  if (!variant.maskedFill) return agrees(yours, mine, opts);
  const above = (i) => i % s.T > Math.floor(i / s.T) % s.T;
  if (!agrees(yours, mine, { ...opts, skip: above })) return false;
  const fill = yours[1];
  let scale = 0;
  for (let i = 0; i < mine.length; i++) if (!above(i)) scale = Math.max(scale, Math.abs(mine[i]));
  if (!(fill === -Infinity || fill <= -1e3 * Math.max(scale, 1))) return false;
  return yours.every((y, i) => !above(i) || y === fill);
}

// The right line shown beside a mistake at node `site`.
const RIGHT = Object.freeze({
  'split-without-transpose': 'split_heads(x) = x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
  'merge-without-transpose': 'merge_heads(x) = x.transpose(0, 2, 1, 3).reshape(B, T, C)',
});

/** The course's line for the step a mistake of this id at node `site` replaces. */
export function rightLine(id, site, s) {
  if (RIGHT[id]) return RIGHT[id];
  if (id === 'causal-mismatch' && site === 'scores') {
    return `${LINES.scores}, unmasked (or tick causal if your notebook masks the scores)`;
  }
  if (id === 'causal-mismatch') {
    return s.causal
      ? 'att = softmax(np.where(mask, -np.inf, scores), axis=-1) with mask = ' +
          'np.triu(np.ones((T, T), bool), k=1) (or untick causal if your notebook has no mask)'
      : 'att = softmax(scores, axis=-1) on unmasked scores (or tick causal if your notebook masks)';
  }
  const line = LINES[site].replace(/\s+#.*$/, '');
  return id === 'weights-transposed' ? `${line} (W is (C, C) with the inputs on its rows)` : line;
}
