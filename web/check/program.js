// program.js - the course's program (lessons 3 and 4 as their NumPy lines) as data: for each node
// of the check's graph (steps.js), the statements that compute it, each an expression tree; an
// evaluator (ndarray.js), a printer back to NumPy, and every single edit of a statement a student's
// line may differ by (edits.js searches them against the student's arrays).
//
//   PROGRAM                     { [node]: { causal?, loss?, statements: [{ name, expr }] } }
//   program(node, s)            node's statements for sizes s (the causal mask only when causal)
//   run(statements, env, s)     the last statement's value, env: { [name]: tensor }
//   print(expr, nameOf)         the NumPy source of a tree (names through nameOf)
//   editsOf(statements, s, env, scope)  every single edit: { kind, statements, at, before, after }
//
// A tree is { op, ... }: name, num (a constant with its source), matmul, add, sub, mul, div,
// square, exp, reduce (sum, max, mean; axis, keepdims), transpose (perm, or null for .T),
// reshape (dims: sizes by letter: B, T, C, h, hs; or -1), mask (the causal np.where), f32.

import * as nd from './ndarray.js';

const name = (n) => ({ op: 'name', name: n });
const num = (key, text) => ({ op: 'num', key, text });
const bin = (op) => (a, b) => ({ op, a, b });
const mm = bin('matmul');
const add = bin('add');
const sub = bin('sub');
const mul = bin('mul');
const div = bin('div');
const T = (a, perm = null) => ({ op: 'transpose', a, perm });
const reshape = (a, dims) => ({ op: 'reshape', a, dims });
const reduce = (fn, a, axis = null, keepdims = false) => ({ op: 'reduce', fn, a, axis, keepdims });
const exp = (a) => ({ op: 'exp', a });
const square = (a) => ({ op: 'square', a });

const SQRT_HS = num('sqrt(hs)', 'np.sqrt(hs)');
const split = (x) => T(reshape(x, ['B', 'T', 'h', 'hs']), [0, 2, 1, 3]);
const merge = (x) => reshape(T(x, [0, 2, 1, 3]), ['B', 'T', 'C']);
const rows = (x) => reshape(x, [-1, 'C']);
const swapLast = [0, 1, 3, 2];

// The natural constants a factor of the layer may be, by key: value and source
const CONSTANTS = Object.freeze({
  1: { value: () => 1, text: '1' },
  2: { value: () => 2, text: '2' },
  'sqrt(hs)': { value: (s) => Math.sqrt(s.hs), text: 'np.sqrt(hs)', heads: true },
  hs: { value: (s) => s.hs, text: 'hs', heads: true },
  // hs ** 1/2 and hs ** -1/2 as Python reads them: (hs ** 1) / 2 and (hs ** -1) / 2
  'hs/2': { value: (s) => s.hs / 2, text: '(hs / 2)', why: 'hs ** 1/2 is (hs ** 1) / 2' },
  '2*hs': { value: (s) => 2 * s.hs, text: '(2 * hs)', why: 'hs ** -1/2 is (hs ** -1) / 2' },
  'sqrt(C)': { value: (s) => Math.sqrt(s.C), text: 'np.sqrt(C)', heads: true },
  C: { value: (s) => s.C, text: 'C' },
  h: { value: (s) => s.heads, text: 'h', heads: true },
  B: { value: (s) => s.B, text: 'B' },
  T: { value: (s) => s.T, text: 'T' },
  'B*T': { value: (s) => s.B * s.T, text: 'B * T' },
  'Y.size': { value: (s) => s.n, text: 'Y.size' },
  lr: { value: (s) => s.lr, text: 'lr' },
});
/** Why a student's line gives this constant, when it is a slip of notation (else ''). */
export const constantWhy = (key) => CONSTANTS[key]?.why ?? '';

// the constants of a layer of sizes s (lr only when the file saved one); at the loss and its
// gradient dY, those of the loss's sizes alone (the loss knows nothing of the heads or the scale)
const LOSS_STEPS = new Set(['loss', 'dY']);
const constantsOf = (s, site = null) =>
  Object.entries(CONSTANTS).filter(
    ([key, c]) =>
      (key !== 'lr' || Number.isFinite(c.value(s))) &&
      !(LOSS_STEPS.has(site) && (c.heads || key.includes('hs'))),
  );

const projection = (x) => ({ [`${x}m`]: mm(name('X'), name(`W${x.toLowerCase()}`)) });
const splitOf = (x) => ({ [x]: split(name(`${x}m`)) });
const mergeOf = (x) => ({ [`d${x}m`]: merge(name(`d${x}`)) });
const weightGrad = (x) => ({
  [`dW${x.toLowerCase()}`]: mm(T(rows(name('X'))), rows(name(`d${x}m`))),
});

// node -> one expression, or the statements that end with it
const LINES = {
  ...projection('Q'),
  ...splitOf('Q'),
  ...projection('K'),
  ...splitOf('K'),
  ...projection('V'),
  ...splitOf('V'),
  scores: div(mm(name('Q'), T(name('K'), swapLast)), SQRT_HS),
  att: [
    ['e', exp(sub(name('scores'), reduce('max', name('scores'), -1, true)))],
    ['att', div(name('e'), reduce('sum', name('e'), -1, true))],
  ],
  headout: mm(name('att'), name('V')),
  concat: merge(name('headout')),
  Y: mm(name('concat'), name('Wo')),
  'loss:mse': reduce('mean', square(sub(name('Y'), name('target')))),
  'loss:dot': reduce('sum', mul(name('dY'), name('Y'))),
  dY: div(mul(num(2, '2'), sub(name('Y'), name('target'))), num('Y.size', 'Y.size')),
  dWo: mm(T(rows(name('concat'))), rows(name('dY'))),
  dconcat: mm(name('dY'), T(name('Wo'))),
  dheadout: split(name('dconcat')),
  dV: mm(T(name('att'), swapLast), name('dheadout')),
  datt: mm(name('dheadout'), T(name('V'), swapLast)),
  dscores: mul(
    name('att'),
    sub(name('datt'), reduce('sum', mul(name('datt'), name('att')), -1, true)),
  ),
  dQ: div(mm(name('dscores'), name('K')), SQRT_HS),
  dK: div(mm(T(name('dscores'), swapLast), name('Q')), SQRT_HS),
  ...mergeOf('Q'),
  ...mergeOf('K'),
  ...mergeOf('V'),
  ...weightGrad('Q'),
  ...weightGrad('K'),
  ...weightGrad('V'),
  dX: add(
    add(mm(name('dQm'), T(name('Wq'))), mm(name('dKm'), T(name('Wk')))),
    mm(name('dVm'), T(name('Wv'))),
  ),
};

/** The nodes of the program, in the course's order. */
export const PROGRAM_NODES = Object.freeze([
  ...new Set(Object.keys(LINES).map((k) => k.replace(/:.*$/, ''))),
]);

const MASKED = { op: 'mask', a: name('scores'), fill: -Infinity, k: 1, lower: false };

/** node's statements [{ name, expr }] for sizes s (s.causal: the mask; s.loss: mse or dot). */
export function program(node, s) {
  const line = node === 'loss' ? LINES[`loss:${s.loss ?? 'mse'}`] : LINES[node];
  if (!line) return null;
  const statements = Array.isArray(line)
    ? line.map(([n, expr]) => ({ name: n, expr }))
    : [{ name: node, expr: line }];
  if (node === 'att' && s.causal) {
    return [{ name: 'scores', expr: MASKED, local: true }, ...statements];
  }
  return statements;
}

/** The arrays node's statements read that they do not compute themselves. */
export function reads(statements) {
  const out = new Set();
  const local = new Set();
  for (const st of statements) {
    for (const t of subtrees(st.expr)) if (t.op === 'name' && !local.has(t.name)) out.add(t.name);
    local.add(st.name);
  }
  return [...out];
}

/** Every subtree of t, t first. */
export function* subtrees(t) {
  yield t;
  for (const k of ['a', 'b']) if (t[k]) yield* subtrees(t[k]);
}

// ------------------------------------------------------------------------------------------------
// evaluation

const dimOf = (d, s) => (typeof d === 'number' ? d : SIZE_OF[d](s));
const SIZE_OF = { B: (s) => s.B, T: (s) => s.T, C: (s) => s.C, h: (s) => s.heads, hs: (s) => s.hs };

/** The value of tree t: env holds tensors by name. */
export function evaluate(t, env, s) {
  switch (t.op) {
    case 'name':
      if (!env[t.name]) throw new nd.ShapeError(`${t.name} is not defined`);
      return env[t.name];
    case 'num':
      return nd.scalar(CONSTANTS[t.key].value(s));
    case 'matmul':
      return nd.matmul(evaluate(t.a, env, s), evaluate(t.b, env, s));
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
      return nd.binary(t.op, evaluate(t.a, env, s), evaluate(t.b, env, s));
    case 'square':
      return nd.unary((x) => x * x, evaluate(t.a, env, s));
    case 'exp':
      return nd.unary(Math.exp, evaluate(t.a, env, s));
    case 'f32':
      return nd.unary(Math.fround, evaluate(t.a, env, s));
    case 'reduce':
      return nd.reduce(t.fn, evaluate(t.a, env, s), t.axis, t.keepdims);
    case 'transpose':
      return nd.transpose(evaluate(t.a, env, s), t.perm);
    case 'reshape':
      return nd.reshape(
        evaluate(t.a, env, s),
        t.dims.map((d) => dimOf(d, s)),
      );
    case 'mask':
      return nd.causalWhere(evaluate(t.a, env, s), t);
    default:
      throw new Error(`program: unknown operation ${t.op}`);
  }
}

/** The last statement's value, each statement's result added to env in turn. */
export function run(statements, env, s) {
  const scope = { ...env };
  let value = null;
  for (const st of statements) {
    value = evaluate(st.expr, scope, s);
    scope[st.name] = value;
  }
  return value;
}

// ------------------------------------------------------------------------------------------------
// printing

const PREC = { add: 1, sub: 1, mul: 2, div: 2, matmul: 2 };
const SYMBOL = { add: '+', sub: '-', mul: '*', div: '/', matmul: '@' };
const fill = (f) => (f === -Infinity ? '-np.inf' : String(f));

// how each operation is printed: (t, p: print a subtree, atom: print it as an operand)
const PRINTERS = {
  name: (t, p, atom, nameOf) => nameOf(t.name),
  num: (t) => t.text,
  square: (t, p, atom) => `${atom(t.a)} ** 2`,
  exp: (t, p) => `np.exp(${p(t.a)})`,
  f32: (t, p, atom) => `${atom(t.a)}.astype(np.float32)`,
  reduce: printReduce,
  transpose: (t, p, atom) =>
    t.perm ? `${atom(t.a)}.transpose(${t.perm.join(', ')})` : `${atom(t.a)}.T`,
  reshape: (t, p, atom) => `${atom(t.a)}.reshape(${t.dims.join(', ')})`,
  mask: (t, p) => {
    const mask = `np.${t.lower ? 'tril' : 'triu'}(np.ones((T, T), dtype=bool), k=${t.k})`;
    return `np.where(${mask}, ${fill(t.fill)}, ${p(t.a)})`;
  },
};

function printReduce(t, p, atom) {
  if (t.axis === null && !t.keepdims && t.fn !== 'max') return `np.${t.fn}(${p(t.a)})`;
  const args = [t.axis === null ? null : `axis=${t.axis}`, t.keepdims ? 'keepdims=True' : null];
  return `${atom(t.a)}.${t.fn}(${args.filter(Boolean).join(', ')})`;
}

/** NumPy source of t; nameOf maps the course's names to the student's. */
export function print(t, nameOf = (n) => n) {
  const p = (x) => print(x, nameOf);
  const atom = (x) => (PREC[x.op] ? `(${p(x)})` : p(x));
  if (PRINTERS[t.op]) return PRINTERS[t.op](t, p, atom, nameOf);
  const prec = PREC[t.op];
  const left = PREC[t.a.op] && PREC[t.a.op] < prec ? `(${p(t.a)})` : p(t.a);
  const right = PREC[t.b.op] && PREC[t.b.op] <= prec ? `(${p(t.b)})` : p(t.b);
  return `${left} ${SYMBOL[t.op]} ${right}`;
}

/** A statement as a line: `name = expr`. */
export const printLine = (st, nameOf = (n) => n) =>
  `${nameOf(st.name)} = ${print(st.expr, nameOf)}`;

// ------------------------------------------------------------------------------------------------
// edits

// every subtree of t with the function that rebuilds t with it replaced
function* places(t, rebuild = (x) => x) {
  yield { sub: t, put: rebuild };
  for (const k of ['a', 'b']) {
    if (t[k]) yield* places(t[k], (x) => rebuild({ ...t, [k]: x }));
  }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// the transpose of a subtree's last two axes (.T for a matrix)
const swapped = (t, r) => T(t, r === 2 ? null : lastTwo(r));

// The single edits of one subtree by its operation: (t, ctx) -> [[kind, tree]]; ctx: { scope (the
// names in scope of the subtree's shape), rank(t) }
const EDITS = {
  name: (t, { scope, rank, s }) => [
    ...scope.filter((n) => n !== t.name).map((n) => ['operand', name(n)]),
    ...(rank(t) >= 2 ? [['transpose-added', swapped(t, rank(t))]] : []),
    // a weight read after its update (W -= lr * dW above the line), with the file's lr
    ...(/^W[qkvo]$/.test(t.name) && scope.includes(`d${t.name}`) && Number.isFinite(s.lr)
      ? [['stepped', sub(t, mul(num('lr', 'lr'), name(`d${t.name}`)))]]
      : []),
  ],
  transpose: (t, { rank, shape, s }) => {
    const out = [['transpose-dropped', t.a]];
    if (t.a.op === 'reshape') {
      const dims = t.perm ? t.perm.map((ax) => t.a.dims[ax]) : [...t.a.dims].reverse();
      out.push(['reshape-without-transpose', reshape(t.a.a, dims)]);
    } else if (t.a.op === 'name' && !same(shape(t), shape(t.a))) {
      // an array reshaped to the transpose's shape (K.reshape(B, h, hs, T) for K's transpose)
      const dims = dimNames(shape(t), s);
      if (dims) out.push(['reshape-without-transpose', reshape(t.a, dims)]);
    }
    // x.T on an array of three or more axes reverses them all: every axis, or every axis but the
    // batch axis (the student's arrays without it)
    const r = rank(t.a);
    if (r >= 3) {
      const all = [...Array(r).keys()].reverse();
      for (const perm of [all, [0, ...all.slice(0, -1)]]) {
        if (!same(perm, t.perm ?? all)) out.push(['transpose-axes', T(t.a, perm)]);
      }
    }
    return out;
  },
  matmul: (t, { rank }) => [
    ['operands-swapped', { ...t, a: t.b, b: t.a }],
    ...['a', 'b']
      .filter((k) => t[k].op !== 'transpose' && t[k].op !== 'name' && rank(t[k]) >= 2)
      .map((k) => ['transpose-added', { ...t, [k]: swapped(t[k], rank(t[k])) }]),
  ],
  reduce: (t, { rank }) => {
    // the square taken of the mean instead of the mean of the squares: np.mean(Y - target) ** 2
    const outside = t.a.op === 'square' ? [['power', square({ ...t, a: t.a.a })]] : [];
    if (t.axis === null) return [...otherReduction(t), ...outside];
    const r = rank(t.a);
    const own = (t.axis + r) % r;
    const axes = [...Array(r).keys()].filter((ax) => ax !== own);
    return [
      ...otherReduction(t),
      ...axes.map((ax) => ['axis', { ...t, axis: t.axis < 0 ? ax - r : ax }]),
      ['keepdims', { ...t, keepdims: !t.keepdims }],
      ['axis', { ...t, axis: null }],
      ...outside,
    ];
  },
  add: (t) => [
    ['term-dropped', t.a],
    ['term-dropped', t.b],
    ['sign', { ...t, op: 'sub' }],
  ],
  sub: (t) => [
    ['term-dropped', t.a],
    ['sign', { ...t, op: 'add' }],
  ],
  mul: (t) => [
    ['term-dropped', t.a],
    ['term-dropped', t.b],
  ],
  div: (t) => [
    ['term-dropped', t.a],
    ['inverted', mul(t.a, t.b)],
  ],
  num: (t, { s, site }) =>
    constantsOf(s, site)
      .filter(([key]) => key !== String(t.key))
      .map(([key, c]) => ['constant', num(key, c.text)]),
  mask: (t) => [
    ['mask', t.a],
    ['mask', { ...t, k: 0 }],
    ['mask', { ...t, lower: true, k: -1 }],
    ['mask', { ...t, fill: 0 }],
  ],
  exp: (t) => [['exp-dropped', t.a]],
  square: (t) => [
    ['power', t.a],
    ['power', square(t)],
  ],
};

// np.sum where the course takes np.mean, or the reverse
function otherReduction(t) {
  const other = { mean: 'sum', sum: 'mean' }[t.fn];
  return other ? [['reduction', { ...t, fn: other }]] : [];
}

function editsAt(t, scope, { rank, shape, site }, s) {
  const edits = EDITS[t.op]?.(t, { scope, rank, shape, s, site }) ?? [];
  return edits.map(([kind, to]) => ({ kind, to }));
}

// A shape's sizes by name, as a notebook writes them in a reshape ((2, 4, 5, 3) -> B, h, hs, T
// with B = 2, h = 4, T = 5, hs = 3): each axis the first name of its place whose size it is;
// null when one has none
const DIM_NAMES = {
  2: [
    ['T', 'C'],
    ['T', 'C'],
  ],
  3: [['B'], ['T', 'C'], ['C', 'T']],
  4: [['B'], ['h'], ['T', 'hs'], ['hs', 'T']],
};
function dimNames(shape, s) {
  const names = shape.map((d, i) => DIM_NAMES[shape.length]?.[i].find((n) => dimOf(n, s) === d));
  return names.every(Boolean) ? names : null;
}

const lastTwo = (r) => [...Array(r - 2).keys(), r - 1, r - 2];

/**
 * Every single edit of node's statements: [{ kind, statements, at (the statement's name), before,
 * after (the subtrees), index }]. env: { [name]: tensor } what the statements read; scope: the
 * names (in env) an operand may be replaced by when their shapes fit.
 */
export function editsOf(statements, s, env, scope) {
  const out = [];
  const local = { ...env };
  statements.forEach((st, i) => {
    const shapes = new Map();
    const shape = (t) => {
      if (!shapes.has(t)) shapes.set(t, evaluate(t, local, s).shape);
      return shapes.get(t);
    };
    const rank = (t) => shape(t).length;
    const singles = [];
    for (const { sub: t, put } of places(st.expr)) {
      const fitting =
        t.op === 'name' ? scope.filter((n) => sameShape(env[n]?.shape, shape(t))) : [];
      for (const e of editsAt(t, fitting, { rank, shape, site: st.name }, s)) {
        addEdit(out, statements, i, put(e.to), e, t);
        singles.push({ kind: e.kind, before: t, after: e.to });
      }
    }
    everywhereEdits(out, statements, i, singles);
    // the result transposed (a weight's gradient as dY.T @ concat: (concat.T @ dY).T)
    if (rank(st.expr) === 2) {
      const to = T(st.expr);
      addEdit(out, statements, i, to, { kind: 'transpose-added', to }, st.expr);
    }
    const root = { op: 'f32', a: st.expr };
    addEdit(out, statements, i, root, { kind: 'float32', to: root }, st.expr);
    // the result multiplied or divided by a natural constant (a factor the course does not have)
    for (const [key, c] of constantsOf(s, st.name)) {
      // (a slip of notation replaces a constant the course writes; it is never a new factor)
      if (key === '1' || c.why) continue;
      for (const op of [mul, div]) {
        const to = op(st.expr, num(key, c.text));
        addEdit(out, statements, i, to, { kind: 'factor', to }, st.expr);
      }
    }
    // an array in scope added to the statement's result (a residual), when shapes allow
    for (const n of scope) {
      if (n !== st.name && sameShape(env[n]?.shape, shape(st.expr))) {
        const to = add(st.expr, name(n));
        addEdit(out, statements, i, to, { kind: 'term-added', to }, st.expr);
      }
    }
    local[st.name] = evaluate(st.expr, local, s);
  });
  return out;
}

/**
 * An edit's shape with the projections' letters made one (Q, K, V -> P; Wq, Wk, Wv -> Wp; dQm ->
 * dPm): two edits with one likeness are the same change at like places (Wq.T and Wk.T).
 */
export const likeness = (kind, before, after) =>
  [kind, print(before), print(after)]
    .join('|')
    .replace(/\b(d?)[QKV](m?)\b/g, '$1P$2')
    .replace(/\b(d?W)[qkv]\b/g, '$1p');

// The same single edit made at every like place of statement i at once (dX = dQm @ Wq + dKm @
// Wk + dVm @ Wv: the three transposes dropped), when it has two places or more
function everywhereEdits(out, statements, i, singles) {
  const groups = new Map();
  for (const e of singles.filter((x) => x.kind !== 'operand')) {
    const key = likeness(e.kind, e.before, e.after);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(e);
  }
  for (const group of groups.values()) {
    const befores = new Set(group.map((e) => JSON.stringify(e.before)));
    if (group.length < 2 || befores.size !== group.length) continue;
    const to = replaceEach(statements[i].expr, group);
    const [first] = group;
    addEdit(out, statements, i, to, { kind: first.kind, to: first.after }, first.before);
    out.at(-1).everywhere = group.length;
  }
}

// t with each edit's subtree replaced by its new one
function replaceEach(t, edits) {
  const hit = edits.find((e) => same(e.before, t));
  if (hit) return hit.after;
  const out = { ...t };
  for (const k of ['a', 'b']) if (t[k]) out[k] = replaceEach(t[k], edits);
  return out;
}

function addEdit(out, statements, i, expr, e, before) {
  if (same(expr, statements[i].expr)) return;
  const edited = statements.map((st, j) => (j === i ? { ...st, expr } : st));
  out.push({
    kind: e.kind,
    statements: edited,
    at: statements[i].name,
    before,
    after: e.to,
    index: i,
    original: statements[i],
  });
}

// the shape of each node of the check's graph, by sizes
const BTC = (s) => [s.B, s.T, s.C];
const HEADS = (s) => [s.B, s.heads, s.T, s.hs];
const MAPS = (s) => [s.B, s.heads, s.T, s.T];
const CC = (s) => [s.C, s.C];
const SHAPES = {
  ...Object.fromEntries(
    [
      'X',
      'Qm',
      'Km',
      'Vm',
      'concat',
      'Y',
      'target',
      'dY',
      'dconcat',
      'dQm',
      'dKm',
      'dVm',
      'dX',
    ].map((n) => [n, BTC]),
  ),
  ...Object.fromEntries(
    ['Q', 'K', 'V', 'headout', 'dheadout', 'dQ', 'dK', 'dV'].map((n) => [n, HEADS]),
  ),
  ...Object.fromEntries(['scores', 'att', 'datt', 'dscores'].map((n) => [n, MAPS])),
  ...Object.fromEntries(['Wq', 'Wk', 'Wv', 'Wo', 'dWq', 'dWk', 'dWv', 'dWo'].map((n) => [n, CC])),
  loss: () => [],
};

/** The shape of node for sizes s (null: not a node of the program). */
export const shapeOf = (node, s) => SHAPES[node]?.(s) ?? null;

const sameShape = (a, b) => !!a && !!b && a.length === b.length && a.every((d, i) => d === b[i]);
