// relations.js - analyses that relate a student's array to the course's one by arithmetic: a
// constant factor (and what it is in this layer), a bias (one row vector added to every token),
// another array of the check added, a sum over part of the batch, the heads averaged.
// Every relation is fitted, then proven: the fitted array must reproduce the student's within the
// row's tolerance.

import { add, dot, matmul, mergeHeads, scale, sub } from '../ops.js';
import { factorNumber, fitDigits, fitFactor, meanings, stepReadings } from './factor.js';
import { headBlocks, isAre, layoutOf, meanAlong, shapeOf, shownName } from './layout.js';

// The readings of k whose mistake could sit where the student's array comes from: this step, or
// steps the student did not save. A reading from an earlier step (a factor in dY) is then weighed
// against the student's later arrays: ruled out if one of them that such a factor would scale
// matches the course's, preferred over the step's own readings if they show the same k.
function possible(readings, ctx, k) {
  const open = new Set([
    ctx.node,
    shownName(ctx.node),
    ...ctx.hidden.map(shownName),
    ...ctx.hidden,
  ]);
  const here = (site) => site === ctx.node || site === shownName(ctx.node);
  const weighed = readings
    .filter((r) => r.sites.some((site) => open.has(site)))
    .map((r) => ({ r, said: r.sites.every(here) ? 'here' : ctx.laterEvidence(r.sites, k) }))
    .filter(({ said }) => said !== 'contradicted');
  const confirmed = weighed.some(({ said }) => said === 'confirmed');
  return weighed.filter(({ said }) => !confirmed || said !== 'here').map(({ r }) => r);
}

// "saving dY tells them apart": a step not saved where only some readings would show
// (a step some readings sit at and others not, that the student did not save; else other sizes)
function apart(readings, ctx) {
  const sites = new Set(readings.flatMap((r) => r.sites));
  const telling = [...sites].filter(
    (site) =>
      site !== ctx.node &&
      site !== shownName(ctx.node) &&
      !readings.every((r) => r.sites.includes(site)) &&
      !ctx.savedValue(site),
  );
  if (telling.length) return ` Saving ${telling.join(' or ')} tells them apart.`;
  return ' A run with other sizes (another B, T or h) tells them apart.';
}

/** yours = k · the course's, k ≠ 1: { id, message, factor }. */
export function factorAnalysis(ctx) {
  const k = fitFactor(ctx.yours, ctx.local);
  if (k == null || Math.abs(k - 1) < 1e-9) return null;
  if (!ctx.reproduces(scale(ctx.local, k))) return null;
  const all = meanings(k, ctx.node, ctx.s, Math.max(1e-9, 10 * ctx.dtypeTol));
  const readings = possible(all, ctx, k).map((r) => scaledScores(r, ctx));
  const specific = readings.filter((r) => !r.generic);
  // k as said: the quantity it reads as, exactly; else the fit, to the digits the student's
  // precision carries (the same on every machine whichever BLAS computed the arrays)
  // (one number is a multiple of any other: a scalar's factor says something only when named)
  if (ctx.yours.length === 1 && !readings.length) return null;
  const kText = readings.length
    ? factorNumber(readings[0].value)
    : factorNumber(k, fitDigits(ctx.dtypeTol));
  const head = `Your ${ctx.name} ${isAre(ctx.name)} ${kText} × the course's`;
  const line = `the course computes ${ctx.courseLine}`;
  const same = (list) => ({
    key: `factor:${list.map((r) => `${r.expr}|${r.why}`).join(';')}`,
    label: `factor ${kText}`,
  });
  if (specific.length === 1) {
    const r = specific[0];
    return {
      id: r.id ?? 'factor',
      factor: Number(kText),
      same: same(specific),
      message: `${head} (k = ${r.expr}): ${r.why}; ${line}.`,
    };
  }
  if (specific.length > 1) {
    const list = specific.map((r) => `${r.why} (k = ${r.expr})`).join('; or ');
    const sizes = `B = ${ctx.s.B}, T = ${ctx.s.T}, C = ${ctx.s.C}, h = ${ctx.s.heads}`;
    return {
      id: 'factor',
      factor: Number(kText),
      same: same(specific),
      message:
        `${head}. Two causes give this number at these sizes (${sizes}): ${list}.` +
        `${apart(specific, ctx)} ${capital(line)}.`,
    };
  }
  // the quantities k equals, not k itself again ("k = 2 = h", not "k = 2 = 2 = h")
  const named = [...new Set(readings.map((r) => r.expr))]
    .filter((e) => e.replace('−', '-') !== kText)
    .map((e) => ` = ${e}`)
    .join('');
  return {
    id: 'factor',
    factor: Number(kText),
    message: `${head}: one constant factor k = ${kText}${named} over every entry; ${line}.`,
    unexplained: !named, // k is no quantity of the layer: an edit may say where it comes from
  };
}

const capital = (t) => t[0].toUpperCase() + t.slice(1);

/**
 * A factor at a step the student did not save, seen through a step that is not linear (scores
 * scaled by k before the softmax, with only att saved): each known reading tried at that step.
 */
export function hiddenFactorAnalysis(ctx) {
  const open = new Set(ctx.large ? [] : ctx.hidden);
  for (const sites of HIDDEN_GROUPS.filter((g) => g.every((site) => open.has(site)))) {
    for (const r of stepReadings(sites[0], ctx.s)) {
      const key = `factor:${sites}:${r.expr}`;
      const extra = new Map(
        sites.map((site) => {
          const { step } = ctx.pipe.nodes[site];
          return [site, { variant: { id: `${key}:${site}`, fn: (p) => scale(step(p), r.value) } }];
        }),
      );
      const mine = ctx.pipe.step(ctx.node, extra);
      if (!ctx.reproduces(mine)) continue;
      const [site] = sites;
      return {
        id: r.id ?? 'factor',
        same: { key: `factor:${r.expr}|${r.why}`, label: `factor ${factorNumber(r.value)}` },
        message:
          `Your ${ctx.name} ${isAre(ctx.name)} the course's step from ${sites.join(' and ')} ` +
          `${factorNumber(r.value)} × the course's (k = ${r.expr}; ${sites.join(', ')} not in ` +
          'your file): ' +
          `${r.why}; the course computes ${courseLineOf(ctx, site)}.`,
        adopt: extra,
      };
    }
  }
  return null;
}

// The steps not saved whose factor is tried, alone or together (the backward's dQ and dK share
// their scale)
const HIDDEN_GROUPS = [['scores'], ['dY'], ['dQ', 'dK'], ['dQ'], ['dK']];

const courseLineOf = (ctx, site) => ctx.lineOf?.(site) ?? ctx.courseLine;

// At dQ and dK, the forward's scale mistakes (no 1/√hs, √C) are ruled out as causes when the
// student's scores match the course's: their scores carry the scale, so the factor sits in how
// their backward applies it. Said as that, without the catalogue's id.
function scaledScores(r, ctx) {
  if (!['missing-scale', 'scale-sqrt-C'].includes(r.id) || !ctx.matched('scores')) return r;
  return {
    ...r,
    id: undefined,
    // (said the same way at dQ and dK: one mistake, so dK follows from dQ)
    why:
      `${r.id === 'missing-scale' ? "it lacks the course's 1/√hs" : r.why}; your scores ` +
      'match, so the scale is right in the forward and applied differently in your backward',
  };
}

// A (rows, C) view of a merged or split node (split ones merged first).
function rowsOf(x, node, s) {
  return layoutOf(node) === 'split' ? mergeHeads(x, s) : x;
}

const BIAS_OF = { Qm: 'bq', Q: 'bq', Km: 'bk', K: 'bk', Vm: 'bv', V: 'bv', Y: 'bo' };

/** yours = the course's + the same vector b on every token: a bias. */
export function biasAnalysis(ctx) {
  const { node, s } = ctx;
  if (!['merged', 'split'].includes(layoutOf(node))) return null;
  const d = sub(rowsOf(ctx.yours, node, s), rowsOf(ctx.local, node, s));
  const rows = d.length / s.C;
  if (rows < 2) return null;
  const b = new Float64Array(s.C);
  for (let i = 0; i < d.length; i++) b[i % s.C] += d[i] / rows;
  const fitted = add(ctx.local, layoutOf(node) === 'split' ? splitTile(b, s) : tile(b, rows));
  if (!ctx.reproduces(fitted) || dot(b, b) === 0) return null;
  const name = BIAS_OF[node];
  const saved = name && ctx.bias(name);
  // (the file's own bias when it reproduces the row too: a float32 one is off by its rounding)
  const tiled = (v) => (layoutOf(node) === 'split' ? splitTile(v, s) : tile(v, rows));
  const same = saved?.length === s.C && ctx.reproduces(add(ctx.local, tiled(saved)));
  const what = same ? `your ${name}` : `a vector of ${s.C} numbers (b[:3] = ${preview(b)})`;
  return {
    id: 'bias',
    message:
      `Your ${ctx.name} ${isAre(ctx.name)} the course's plus the same row added to every token, ${what}: a ` +
      `bias. The course's layer has none: ${ctx.courseLine}.`,
  };
}

const preview = (b) => Array.from(b.subarray(0, 3), (x) => factorNumber(x)).join(', ');
const tile = (b, rows) => {
  const out = new Float64Array(rows * b.length);
  for (let r = 0; r < rows; r++) out.set(b, r * b.length);
  return out;
};
// b (C,) laid out as a split (B, h, T, hs) array: head block h of b on every token
function splitTile(b, s) {
  const out = new Float64Array(s.B * s.T * s.C);
  for (let i = 0; i < out.length; i++) {
    const hh = Math.floor(i / (s.T * s.hs)) % s.heads;
    out[i] = b[hh * s.hs + (i % s.hs)];
  }
  return out;
}

/** yours − the course's = c · another array of the check (X, Q, …). */
export function addedAnalysis(ctx) {
  const d = sub(ctx.yours, ctx.local);
  for (const { name, data } of ctx.sameLayout()) {
    const c = fitFactor(d, data);
    if (c == null || !ctx.reproduces(add(ctx.local, scale(data, c)))) continue;
    // c as printed (6 digits): a fit from float32 arrays lands on 1 or an ulp away from it
    // depending on the BLAS that made them; both read "plus X"
    const shown = factorNumber(c);
    const times = shown === '1' ? '' : `${shown} × `;
    const residual =
      name === 'X' && ctx.node === 'Y'
        ? ': a residual connection inside the layer (the course adds it outside, if at all)'
        : '';
    return {
      id: 'added-array',
      message:
        `Your ${ctx.name} ${isAre(ctx.name)} the course's plus ${times}${name}${residual}; ` +
        `the course computes ${ctx.courseLine}.`,
    };
  }
  return null;
}

// The batch items' shares of a weight gradient ((C, C) = Σ_b a[b]ᵀ g[b])
function batchShares(ctx) {
  const { s } = ctx;
  const share = ctx.weightGradShares?.();
  if (!share) return null;
  const n = s.B;
  const gram = Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (__, j) => dot(share[i], share[j])),
  );
  const rhs = share.map((g) => dot(g, ctx.yours));
  const c = solve(gram, rhs);
  return c && { share, c };
}

// Gaussian elimination with partial pivoting; null when singular
function solve(a, b) {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let col = 0; col < n; col++) {
    let piv = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r][col]) > Math.abs(m[piv][col])) piv = r;
    if (!(Math.abs(m[piv][col]) > 0)) return null;
    [m[col], m[piv]] = [m[piv], m[col]];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r][col] / m[col][col];
      for (let k = col; k <= n; k++) m[r][k] -= f * m[col][k];
    }
  }
  return m.map((row, i) => row[n] / row[i]);
}

/** A weight gradient summed over some batch items only (or each with its own weight). */
export function batchSubsetAnalysis(ctx) {
  if (layoutOf(ctx.node) !== 'weight' || !ctx.node.startsWith('d') || ctx.s.B < 2) return null;
  const found = batchShares(ctx);
  if (!found) return null;
  const rounded = found.c.map((x) => Math.round(x));
  if (!rounded.every((x, i) => Math.abs(x - found.c[i]) < 1e-6 && (x === 0 || x === 1))) {
    return null;
  }
  if (rounded.every((x) => x === 1)) return null;
  let sum = new Float64Array(ctx.yours.length);
  found.share.forEach((g, b) => {
    if (rounded[b]) sum = add(sum, g);
  });
  if (!ctx.reproduces(sum)) return null;
  const items = rounded.flatMap((x, b) => (x ? [b] : []));
  const which = items.length
    ? `batch item${items.length > 1 ? 's' : ''} ${items.join(', ')}`
    : 'no batch item';
  return {
    id: 'reduction',
    same: { key: `batch:${items}`, label: `sum over ${which} only` },
    message:
      `Your ${ctx.name} sums over ${which} only, of the ${ctx.s.B}: a weight's gradient sums ` +
      `every batch item's share (X.reshape(-1, C) takes all B·T rows); the course computes ` +
      `${ctx.courseLine}.`,
  };
}

// x (B, T, C) summed over its tokens: (B, C), or over the batch too (1, C)
function tokenSums(x, { B, T, C }, batch) {
  const out = new Float64Array((batch ? 1 : B) * C);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < C; c++) out[(batch ? 0 : b) * C + c] += x[(b * T + t) * C + c];
    }
  }
  return out;
}

// sum over rows r of the outer products a[r] ⊗ g[r], a and g (R, C)
function outerSum(a, g, C) {
  const out = new Float64Array(C * C);
  for (let r = 0; r < a.length / C; r++) {
    for (let i = 0; i < C; i++) {
      for (let j = 0; j < C; j++) out[i * C + j] += a[r * C + i] * g[r * C + j];
    }
  }
  return out;
}

const EINSUMS = [
  [false, "'bti,bsj->ij'", 'each batch item’s tokens summed before the product'],
  [true, "'bti,csj->ij'", 'every token of every batch item summed before the product'],
];

/**
 * A weight's gradient from sums over the tokens: an einsum whose two token axes have letters of
 * their own ('bti,bsj->ij') sums each operand over its tokens first, where the course pairs each
 * token's rows ('bti,btj->ij').
 */
export function tokenSumAnalysis(ctx) {
  const { node, s, pipe } = ctx;
  if (layoutOf(node) !== 'weight' || !node.startsWith('d') || s.T < 2) return null;
  const parents = pipe.nodes[node]?.parents;
  if (parents?.length !== 2) return null;
  const [a, g] = parents.map((p) => pipe.value(p));
  for (const [batch, einsum, what] of EINSUMS) {
    if (batch && s.B < 2) continue;
    if (!ctx.reproduces(outerSum(tokenSums(a, s, batch), tokenSums(g, s, batch), s.C))) continue;
    const [x, y] = parents.map((p) => (/^d[QKV]m$/.test(p) ? `merge_heads(${p.slice(0, -1)})` : p));
    return {
      id: 'token-sums',
      message:
        `Your ${ctx.name} is the product of sums over the tokens, np.einsum(${einsum}, ${x}, ` +
        `${y}): ${what}, because the two token axes have letters of their own. A weight's ` +
        `gradient sums each token's product: np.einsum('bti,btj->ij', ${x}, ${y}); the course ` +
        `computes ${ctx.courseLine}.`,
    };
  }
  return null;
}

const WEIGHT_GRADS = ['dWq', 'dWk', 'dWv', 'dWo'];

/**
 * A weight's gradient the sum of all four (or of several): one array shared by the gradients
 * (dict.fromkeys(names, np.zeros(...)) gives every key the same array), each backward line
 * adding into it.
 */
export function sharedGradientAnalysis(ctx) {
  if (!WEIGHT_GRADS.includes(ctx.node)) return null;
  const grads = WEIGHT_GRADS.map((g) => (g === ctx.node ? ctx.local : ctx.pipe.step(g)));
  for (let set = 1; set < 16; set++) {
    const kept = WEIGHT_GRADS.filter((_, i) => set & (1 << i));
    if (kept.length < 2 || !kept.includes(ctx.node)) continue;
    const sum = grads
      .filter((_, i) => set & (1 << i))
      .reduce((acc, g) => acc.map((x, j) => x + g[j]));
    if (!ctx.reproduces(sum)) continue;
    return {
      id: 'shared-gradient',
      message:
        `Your ${ctx.name} is the sum ${kept.join(' + ')}: one array shared by the gradients, ` +
        'each backward line adding into it (dict.fromkeys(names, np.zeros((C, C))) gives every ' +
        'name the same array; make one array per name: {n: np.zeros((C, C)) for n in names}). ' +
        `The course computes ${ctx.courseLine}.`,
    };
  }
  return null;
}

const INPUT_PATHS = { dQm: ['Wq', 'Q'], dKm: ['Wk', 'K'], dVm: ['Wv', 'V'] };

/**
 * dQ, dK or dV the gradient at the projection's input instead (dQm @ Wq.T: the Q path of dX),
 * as a layer's backward returns it for its query, key and value inputs.
 */
export function projectionInputAnalysis(ctx) {
  const path = INPUT_PATHS[ctx.node];
  if (!path) return null;
  const [W, x] = path;
  const { B, T, C } = ctx.s;
  const mine = matmul(ctx.local, ctx.pipe.value(W), { m: B * T, k: C, n: C, transB: true });
  if (!ctx.reproduces(mine)) return null;
  return {
    id: 'input-gradient',
    message:
      `Your ${ctx.name} is the gradient at the projection's input, d${x}m @ ${W}.T (the ${x} ` +
      `path of dX, what a layer's backward returns for its ${x.toLowerCase()} input), not at ` +
      `${x} itself; the course computes ${ctx.courseLine}, and dX sums the three paths.`,
  };
}

/** The heads averaged: every head (or head block) of yours is the mean over the heads. */
export function headMeanAnalysis(ctx) {
  const { node, s } = ctx;
  if (s.heads < 2) return null;
  const layout = layoutOf(node);
  let mine = null;
  if (layout === 'split' || layout === 'square') mine = meanAlong(ctx.local, shapeOf(node, s), 1);
  if (layout === 'merged' && ['concat', 'dconcat'].includes(node)) {
    mine = meanAlong(ctx.local, headBlocks(s), 2);
  }
  if (!mine || !ctx.reproduces(mine)) return null;
  return {
    id: 'reduction',
    same: { key: 'head-mean', label: 'mean over the heads' },
    message:
      `Every head of your ${ctx.name} is the mean over the ${s.heads} heads: the heads were ` +
      'averaged, not kept apart; each head attends on its own and merge_heads concatenates ' +
      `them. The course computes ${ctx.courseLine}.`,
  };
}
