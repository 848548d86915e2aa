// search.js - the search for a known mistake (catalogue.js) that reproduces a student's array:
// every variant at the result's step and at the steps before it the student did not save, alone
// and one mistake at several of its sites together.
//
//   candidates(pipe, node, ids)            the candidates, in order
//   findMistake(pipe, node, yours, opts)   the first that reproduces the student's array, or null

import * as ops from './ops.js';
import { agrees } from './compare.js';
import { SEARCHED, variants } from './catalogue.js';

// The sets of two or more sites to try one mistake at together: every subset of up to three
// sites; of more, all of them and the three projections (or splits) Q, K, V.
function multiSets(list) {
  if (list.length < 2) return [];
  if (list.length > 3) {
    const qkv = list.filter(([site]) => /^[QKV]m?$/.test(site));
    return qkv.length > 1 && qkv.length < list.length ? [list, qkv] : [list];
  }
  const sets = [];
  for (let mask = 1; mask < 1 << list.length; mask++) {
    const set = list.filter((_, i) => mask & (1 << i));
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
export function findMistake(pipe, node, yours, opts, ids = SEARCHED) {
  for (const cand of candidates(pipe, node, ids)) {
    if (masksItsScores(pipe, node, cand)) continue;
    for (const extra of extrasOf(pipe, node, cand, yours)) {
      const mine = pipe.step(node, extra);
      if (reproduces(yours, mine, opts, cand.variant, pipe.s)) {
        return { id: cand.id, extra, variant: cand.variant, param: extra.get(cand.site)?.param };
      }
    }
  }
  return null;
}

// att without the causal mask is no cause when the student's own scores hold -inf: they mask in
// their scores step (whatever their mask, their att is softmax of it, as the course's is)
function masksItsScores(pipe, node, cand) {
  if (cand.id !== 'causal-mismatch' || node !== 'att' || !pipe.s.causal) return false;
  const given = pipe.given.get('scores');
  return given != null && given.some((x) => x === -Infinity);
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
