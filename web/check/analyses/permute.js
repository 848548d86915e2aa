// permute.js - a student's array that holds the course's numbers in another order: two axes
// swapped, the head blocks or the tokens reordered (any permutation, found block by block), or a
// reshape that mixes (h, hs) or (T, h). Proven by rebuilding the student's array from the
// course's one with the permutation found.

import { mergeHeads, splitHeads } from '../ops.js';
import { isAre, layoutOf, reorder, sameBlock, shapeOf, swapAxes, verbS } from './layout.js';

// The map perm with block j of yours = block perm[j] of ref along axis, or null: a permutation,
// or with `repeat` any map (one block of ref used for several), its own block preferred
function matchBlocks(yours, ref, { shape, axis, tol }, repeat = false) {
  const n = shape[axis];
  const perm = [];
  for (let j = 0; j < n; j++) {
    const same = (c) => sameBlock(yours, ref, { shape, axis, tol }, j, c);
    const i =
      repeat && same(j)
        ? j
        : [...Array(n).keys()].find((c) => (repeat || !perm.includes(c)) && same(c));
    if (i === undefined) return null;
    perm.push(i);
  }
  return perm.every((p, j) => p === j) ? null : perm;
}

const orderText = (perm) => perm.map((p) => p).join(', ');

// "heads in the order 2, 1, 0 (reversed)"
function permText(perm, what) {
  const reversed = perm.every((p, j) => p === perm.length - 1 - j);
  return `${what} in the order ${orderText(perm)}${reversed ? ' (reversed)' : ''} instead of 0…${perm.length - 1}`;
}

// The head axis and the token axis of a node's layout, as [shape, axis] pairs
function axesOf(node, s) {
  const layout = layoutOf(node);
  if (layout === 'split') {
    const shape = shapeOf(node, s);
    return { heads: [shape, 1], tokens: [shape, 2] };
  }
  if (layout === 'square') return { heads: [shapeOf(node, s), 1] };
  if (layout === 'merged') {
    return { heads: [[s.B, s.T, s.heads, s.hs], 2], tokens: [[s.B, s.T, s.C], 1] };
  }
  return {};
}

/** The heads or the tokens of yours in another order than the course's. */
function blockOrder(ctx) {
  const { node, s } = ctx;
  const axes = axesOf(node, s);
  for (const [what, pair] of [
    ['heads', axes.heads],
    ['tokens', axes.tokens],
  ]) {
    if (!pair || pair[0][pair[1]] < 2) continue;
    const [shape, axis] = pair;
    const perm = matchBlocks(ctx.yours, ctx.local, { shape, axis, tol: ctx.tolAbs });
    if (!perm || !ctx.reproduces(reorder(ctx.local, shape, axis, perm))) continue;
    const blocks = what === 'heads' && layoutOf(node) === 'merged' ? 'head blocks' : what;
    return {
      id: 'permuted',
      same: { key: `${what}:${perm}`, label: `${blocks} order` },
      message:
        `Your ${ctx.name} hold${verbS(ctx.name)} the course's numbers with its ${permText(perm, blocks)}. ` +
        `The course computes ${ctx.courseLine}${what === 'heads' ? ', the heads in order' : ''}.`,
    };
  }
  return null;
}

// The (h, hs) mix-up as one map of flat indices: entry (b, h, t, e) of a split array and entry
// (b, t, e·h + h) of a merged one, the merged index read with hs and h swapped
function eachHsH({ B, T, heads, hs }, visit) {
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < heads; h++) {
      for (let t = 0; t < T; t++) {
        for (let e = 0; e < hs; e++) {
          visit(((b * heads + h) * T + t) * hs + e, (b * T + t) * hs * heads + e * heads + h);
        }
      }
    }
  }
}

// x.reshape(B, T, hs, h).transpose(0, 3, 1, 2): h and hs swapped in split_heads
function splitHsH(x, s) {
  const out = new Float64Array(x.length);
  eachHsH(s, (split, merged) => (out[split] = x[merged]));
  return out;
}

// the inverse: x (B, h, T, hs).transpose(0, 2, 3, 1).reshape(B, T, C)
function mergeHsH(x, s) {
  const out = new Float64Array(x.length);
  eachHsH(s, (split, merged) => (out[merged] = x[split]));
  return out;
}

/** A reshape with (h, hs) swapped, in split_heads or merge_heads. */
function reshapeMix(ctx) {
  const { node, s } = ctx;
  if (s.heads === s.hs) return null;
  const layout = layoutOf(node);
  if (layout === 'split') {
    const mine = splitHsH(mergeHeads(ctx.local, s), s);
    if (!ctx.reproduces(mine)) return null;
    return reshapeResult(
      ctx,
      'hs-h',
      'split_heads reshaped to (B, T, hs, h) before the transpose',
      'split_heads(x) = x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
    );
  }
  const merged = layout === 'merged' && /^(concat|dconcat|[QKV]m|d[QKV]m)$/.test(node);
  if (merged ? ctx.reproduces(mergeHsH(splitHeads(ctx.local, s), s)) : hiddenMerges(ctx)) {
    return reshapeResult(
      ctx,
      'hs-h',
      'merge_heads with (h, hs) swapped (x.transpose(0, 2, 3, 1).reshape(B, T, C))',
      'merge_heads(x) = x.transpose(0, 2, 1, 3).reshape(B, T, C)',
    );
  }
  return null;
}

// The merges the student did not save (dQm, … before dWq, dX) done with (h, hs) swapped
// reproduce yours.
// The merges among the steps the student did not save (concat, dQm … before Y, dWq, dX)
function mergeSites(ctx) {
  if (ctx.large) return [];
  return ctx.hidden.filter((site) => {
    const parents = ctx.pipe.nodes[site]?.parents ?? [];
    return layoutOf(site) === 'merged' && parents.length === 1 && layoutOf(parents[0]) === 'split';
  });
}

function hiddenMerges(ctx) {
  const { pipe, s } = ctx;
  const sites = mergeSites(ctx);
  if (!sites.length) return false;
  const extra = new Map(
    sites.map((site) => {
      const [parent] = pipe.nodes[site].parents;
      const fn = (p) => mergeHsH(p[parent], s);
      return [site, { variant: { id: `merge-hs-h:${site}`, fn } }];
    }),
  );
  return ctx.reproduces(pipe.step(ctx.node, extra));
}

function reshapeResult(ctx, key, what, right) {
  return {
    id: 'permuted',
    same: { key, label: '(h, hs) reshape' },
    message:
      `Your ${ctx.name} hold${verbS(ctx.name)} the course's numbers in another order: ${what}, which mixes ` +
      `the head index with the position inside a head (h = ${ctx.s.heads}, hs = ${ctx.s.hs}); ` +
      `${right}.`,
  };
}

/** Two axes of the same size swapped (scores as K @ Q.T, a (C, C) gradient transposed …). */
function axisSwap(ctx) {
  const { node, s } = ctx;
  const shape = shapeOf(node, s);
  for (let a = 0; a < shape.length; a++) {
    for (let b = a + 1; b < shape.length; b++) {
      if (shape[a] !== shape[b] || shape[a] < 2) continue;
      if (!ctx.reproduces(swapAxes(ctx.local, shape, a, b))) continue;
      const hint = node === 'scores' ? ': K @ Q.T instead of Q @ K.T' : '';
      return {
        id: 'permuted',
        same: { key: `swap:${a},${b}`, label: 'axes swapped' },
        message:
          `Your ${ctx.name} ${isAre(ctx.name)} the course's with axes ${a} and ${b} swapped (its transpose` +
          `${hint}); the course computes ${ctx.courseLine}.`,
      };
    }
  }
  return null;
}

/** Some heads of yours are copies of another head of the course's (a slice that stays put). */
function repeatedHeads(ctx) {
  const [shape, axis] = axesOf(ctx.node, ctx.s).heads ?? [];
  if (!shape || shape[axis] < 2) return null;
  const map = matchBlocks(ctx.yours, ctx.local, { shape, axis, tol: ctx.tolAbs }, true);
  if (!map || new Set(map).size === map.length) return null;
  if (!ctx.reproduces(reorder(ctx.local, shape, axis, map))) return null;
  return {
    id: 'permuted',
    same: { key: `heads-repeated:${map}`, label: 'repeated heads' },
    message:
      `Your ${ctx.name}'s heads are the course's heads ${orderText(map)} instead of ` +
      `0…${map.length - 1}: one head's columns used for several, as a slice that does not move ` +
      'with the head does (W[:, 0:hs] where the course takes W[:, i*hs:(i+1)*hs] for head i); ' +
      `the course computes ${ctx.courseLine}.`,
  };
}

/** The course's numbers, in another order: the first permutation that reproduces yours. */
export function permutationAnalysis(ctx) {
  return (
    axisSwap(ctx) ??
    blockOrder(ctx) ??
    repeatedHeads(ctx) ??
    reshapeMix(ctx) ??
    hiddenHeadOrder(ctx)
  );
}

// Every order of n heads but the identity (n ≤ 5: at most 119), else the reversed one only
function headOrders(n) {
  if (n > 5) return [[...Array(n).keys()].reverse()];
  let perms = [[]];
  for (let i = 0; i < n; i++) {
    perms = perms.flatMap((p) =>
      [...Array(n).keys()].filter((j) => !p.includes(j)).map((j) => [...p, j]),
    );
  }
  return perms.filter((p) => p.some((x, j) => x !== j));
}

/** The heads merged in another order at a merge the student did not save (only Y saved). */
function hiddenHeadOrder(ctx) {
  const { pipe, s } = ctx;
  if (s.heads < 2) return null;
  const split = [s.B, s.heads, s.T, s.hs];
  for (const site of mergeSites(ctx)) {
    const [parent] = pipe.nodes[site].parents;
    for (const perm of headOrders(s.heads)) {
      const fn = (p) => mergeHeads(reorder(p[parent], split, 1, perm), s);
      const key = `heads:${perm}`;
      const mine = ctx.tryAt(site, `${key}:${site}`, fn);
      if (!ctx.reproduces(mine)) continue;
      return {
        id: 'permuted',
        same: { key, label: 'head order' },
        message:
          `Your ${ctx.name} ${isAre(ctx.name)} the course's step from ${site} with its ` +
          `${permText(perm, 'head blocks')} (${site} is not in your file): recomputed that way ` +
          `from your own arrays, it matches; the course computes ${site} with the heads in order.`,
        site,
        variant: { id: `${key}:${site}`, fn },
      };
    }
  }
  return null;
}

/** Whether yours holds the same numbers as the course's (sorted, within tol): a reorder. */
export function sameNumbers(yours, ref, tol) {
  if (yours.length !== ref.length) return false;
  const a = Float64Array.from(yours).sort();
  const b = Float64Array.from(ref).sort();
  return a.every((x, i) => Math.abs(x - b[i]) <= tol || x === b[i]);
}
