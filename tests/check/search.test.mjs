// search.js on its own, on a layer small enough to follow by hand (B = 2, T = 2, C = 2, h = 1):
// which candidates it tries and in what order (each known mistake alone at every site, then one
// mistake at several of its sites together), how a fitted factor and a mask's fill are found,
// and when a candidate reproduces the student's array.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_INPUTS, smallSizes } from './small-layer.mjs';
import { Pipeline, simulate } from '../../web/check/pipeline.js';
import { candidates, findMistake } from '../../web/check/search.js';

const f = (...x) => Float64Array.of(...x);
const inputs = SMALL_INPUTS;
const sizes = smallSizes;
const pipeOf = (s = sizes(), given = {}) => {
  const pipe = new Pipeline(s, inputs);
  pipe.seed(simulate(s, inputs));
  for (const [n, d] of Object.entries(given)) pipe.provide(n, d);
  return pipe;
};
const opts = { dtype: '<f8' };
// "id@site+site" for each candidate, in order
const listed = (pipe, node, ids) =>
  [...candidates(pipe, node, ids)].map((c) =>
    c.extra ? `${c.id}@${[...c.extra.keys()].join('+')}` : `${c.id}@${c.site}`,
  );

test('candidates: a mistake alone at each site, then at several together, smaller first', () => {
  // weights-transposed has a variant at Qm, Km, Vm and Y (catalogue.js); at Q only Qm is hidden
  const pipe = pipeOf(sizes(), { Q: f(0, 0, 0, 0, 0, 0, 0, 0), K: f(0, 0, 0, 0, 0, 0, 0, 0) });
  assert.deepEqual(listed(pipe, 'scores', ['weights-transposed']), []);
  const free = pipeOf();
  assert.deepEqual(listed(free, 'scores', ['weights-transposed']), [
    'weights-transposed@Qm',
    'weights-transposed@Km',
    'weights-transposed@Qm+Km',
  ]);
  // three sites: the three pairs, then all three
  assert.deepEqual(
    listed(pipeOf(sizes(), { att: f(1, 0, 0, 1, 1, 0, 0, 1) }), 'headout', [
      'split-without-transpose',
    ]),
    ['split-without-transpose@V'],
  );
  // dheadout is computed from V, Q and K too (through att): four sites, so all four together,
  // then the three projections Q, K, V
  assert.deepEqual(listed(free, 'dheadout', ['split-without-transpose']), [
    'split-without-transpose@dheadout',
    'split-without-transpose@V',
    'split-without-transpose@Q',
    'split-without-transpose@K',
    'split-without-transpose@dheadout+V+Q+K',
    'split-without-transpose@V+Q+K',
  ]);
  const three = listed(pipeOf(sizes(), { concat: f(0, 0, 0, 0, 0, 0, 0, 0) }), 'Y', [
    'weights-transposed',
  ]);
  assert.deepEqual(three, ['weights-transposed@Y']);
  // four sites, nearest first (Vm feeds headout, Qm and Km only att): every single one, then
  // all four, then the three projections together
  assert.deepEqual(listed(free, 'Y', ['weights-transposed']), [
    'weights-transposed@Y',
    'weights-transposed@Vm',
    'weights-transposed@Qm',
    'weights-transposed@Km',
    'weights-transposed@Y+Vm+Qm+Km',
    'weights-transposed@Vm+Qm+Km',
  ]);
});

test('candidates: subsets of three sites, smaller first; fitted and own variants alone', () => {
  // merge-without-transpose at dQm, dKm, dVm (and concat): with dY given, dX sees those three
  const dY = simulate(sizes(), inputs).dY;
  const all = listed(pipeOf(sizes(), { dY }), 'dX', ['merge-without-transpose']);
  assert.deepEqual(all, [
    'merge-without-transpose@dQm',
    'merge-without-transpose@dKm',
    'merge-without-transpose@dVm',
    'merge-without-transpose@dQm+dKm',
    'merge-without-transpose@dQm+dVm',
    'merge-without-transpose@dKm+dVm',
    'merge-without-transpose@dQm+dKm+dVm',
  ]);
  // the causal switch's masked scores are `own`: tried only when scores is the result checked
  const atScores = listed(pipeOf(), 'scores', ['causal-mismatch']);
  assert.deepEqual(atScores, ['causal-mismatch@scores']);
  assert.deepEqual(listed(pipeOf(), 'att', ['causal-mismatch']), ['causal-mismatch@att']);
  // dY's factor is fitted ('fit'): alone only, never in a set
  assert.deepEqual(listed(pipeOf(), 'dWo', ['mse-grad-factor']), ['mse-grad-factor@dY']);
});

test('findMistake: a fitted factor is found; 1, 0 and no fit at all are not mistakes', () => {
  const s = sizes();
  const expected = simulate(s, inputs);
  const dY = expected.dY.map((x) => x * 0.5);
  const hit = findMistake(pipeOf(), 'dY', dY, opts, ['mse-grad-factor']);
  assert.equal(hit.id, 'mse-grad-factor');
  assert.ok(Math.abs(hit.param - 0.5) < 1e-12, `c = ${hit.param}`);
  for (const c of [1, 0]) {
    const yours = expected.dY.map((x) => x * c);
    assert.equal(findMistake(pipeOf(), 'dY', yours, opts, ['mse-grad-factor']), null, `c = ${c}`);
  }
  assert.equal(
    findMistake(
      pipeOf(),
      'dY',
      dY.map(() => NaN),
      opts,
      ['mse-grad-factor'],
    ),
    null,
  );
  // a factor that holds at only some entries is no factor
  const bent = dY.map((x, i) => (i ? x : x * 3));
  assert.equal(findMistake(pipeOf(), 'dY', bent, opts, ['mse-grad-factor']), null);
});

test('findMistake: masked scores: one fill above the diagonal, -inf or <= -1e3 max|score|', () => {
  const s = sizes();
  const scores = simulate(s, inputs).scores; // (2, 1, 2, 2): entries 1 and 5 above the diagonal
  // the largest |score| on and below the diagonal (entries 0, 2, 3, 4, 6, 7), at least 1
  const max = Math.max(...[0, 2, 3, 4, 6, 7].map((i) => Math.abs(scores[i])), 1);
  const masked = (fill, other = fill) => {
    const out = Float64Array.from(scores);
    out[1] = fill;
    out[5] = other;
    return out;
  };
  const found = (yours) => findMistake(pipeOf(), 'scores', yours, opts, ['causal-mismatch']);
  assert.equal(found(masked(-Infinity)).param, -Infinity);
  assert.equal(found(masked(-1e3 * max)).param, -1e3 * max);
  assert.equal(found(masked(-1e9)).id, 'causal-mismatch');
  assert.equal(found(masked(-999 * max)), null, 'not far enough below the scores');
  assert.equal(found(masked(-Infinity, -1e9)), null, 'two fills');
  assert.equal(found(masked(Infinity)), null);
  const below = masked(-Infinity);
  below[0] += 1;
  assert.equal(found(below), null, 'an entry on the diagonal differs');
  // T = 1 has nothing above the diagonal: no masked-scores candidate
  const one = sizes({ B: 8, T: 1, N: 8 });
  const pipe = new Pipeline(one, inputs);
  const yours = simulate(one, inputs).scores;
  assert.equal(
    findMistake(
      pipe,
      'scores',
      yours.map((x) => x * 2),
      opts,
      ['causal-mismatch'],
    ),
    null,
  );
});
