// pipeline.js on its own: what it computes (the course's steps, the student's arrays in place of
// theirs, a mistake switched on for one evaluation or adopted) and how often: every step is
// counted, so the memo (each node once), the seeded values (no step at all) and the cache of
// one mistaken step on unchanged parents are part of the contract, not only of the speed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_INPUTS, smallSizes } from './small-layer.mjs';
import { Pipeline, simulate } from '../../web/check/pipeline.js';
import { matmul } from '../../web/check/ops.js';

const sz = smallSizes();
const f = (...x) => Float64Array.of(...x);
const inputs = SMALL_INPUTS;
const expected = simulate(sz, inputs);

/** A pipeline whose every step counts its calls: calls[node]. */
function counted(given = {}) {
  const pipe = new Pipeline(sz, inputs);
  const calls = {};
  for (const [name, node] of Object.entries(pipe.nodes)) {
    const step = node.step;
    calls[name] = 0;
    node.step = (p) => {
      calls[name]++;
      return step(p);
    };
  }
  for (const [n, data] of Object.entries(given)) pipe.provide(n, data);
  return { pipe, calls };
}

// a mistaken step: its parent `from` times the param
const times = (id, from = 'Q') => ({ id, fn: (p, q) => p[from].map((x) => x * q) });

test('every node once: value() is remembered until something upstream changes', () => {
  const { pipe, calls } = counted();
  const y = pipe.value('Y');
  assert.deepEqual(y, expected.Y);
  assert.equal(pipe.value('Y'), y, 'the same array, not recomputed');
  assert.deepEqual(
    ['Qm', 'Q', 'scores', 'att', 'headout', 'concat', 'Y'].map((n) => calls[n]),
    [1, 1, 1, 1, 1, 1, 1],
  );
  assert.equal(calls.dY, 0, 'nothing downstream of Y is computed');
  // a result the student gives replaces its node and what follows it is computed again, once
  const att = expected.att.map((x) => x / 2);
  pipe.provide('att', att);
  assert.equal(pipe.value('att'), att);
  assert.notDeepEqual(pipe.value('Y'), y);
  assert.deepEqual([calls.scores, calls.att, calls.headout, calls.Y], [1, 1, 2, 2]);
});

test('seeded: a node reached from the inputs only takes the seeded value, no step runs', () => {
  const { pipe, calls } = counted();
  pipe.seed(expected);
  assert.equal(pipe.value('Y'), expected.Y);
  assert.equal(pipe.value('scores'), expected.scores);
  assert.equal(
    Object.values(calls).reduce((a, b) => a + b),
    0,
  );
  // after a given result, what follows it is computed; what comes before still is seeded
  const { pipe: p2, calls: c2 } = counted({ att: expected.att.map((x) => x / 2) });
  p2.seed(expected);
  assert.equal(p2.value('scores'), expected.scores);
  assert.notEqual(p2.value('Y'), expected.Y);
  assert.deepEqual([c2.scores, c2.headout, c2.concat, c2.Y], [0, 1, 1, 1]);
  // an adopted mistake makes its node and everything after it computed
  const { pipe: p3, calls: c3 } = counted();
  p3.seed(expected);
  p3.adopt('Q', { variant: times('q2', 'Qm'), param: 2 });
  assert.deepEqual(
    p3.value('Q'),
    expected.Q.map((x) => x * 2),
    'h = 1: Q is Qm',
  );
  p3.value('Y');
  assert.deepEqual([c3.Qm, c3.scores, c3.Y], [0, 1, 1]);
});

test('extra: a mistake for one evaluation, its step cached while its parents are plain', () => {
  const { pipe, calls } = counted();
  const plain = pipe.value('Y');
  const extra = new Map([['scores', { variant: times('k3'), param: 3 }]]);
  // (Q scaled by 3 in place of the scores' step: any function of the parents will do)
  const mine = pipe.value('Y', extra);
  assert.notDeepEqual(mine, plain);
  assert.equal(pipe.value('Y'), plain, 'the pipeline itself is unchanged');
  const before = { ...calls };
  const again = pipe.value('Y', new Map([['scores', { variant: times('k3'), param: 3 }]]));
  assert.deepEqual(again, mine);
  assert.equal(calls.att, before.att + 1, 'att after the mistaken step: computed per evaluation');
  // the same variant and param on unchanged parents: the mistaken step is not run again
  const run = [];
  const spy = { id: 'spy', fn: (p, q) => (run.push(q), p.Q.map((x) => x * q)) };
  pipe.value('att', new Map([['scores', { variant: spy, param: 5 }]]));
  pipe.value('att', new Map([['scores', { variant: spy, param: 5 }]]));
  pipe.value('att', new Map([['scores', { variant: spy, param: 7 }]]));
  assert.deepEqual(run, [5, 7]);
  // a mistake upstream too (its parents not plain): computed each time, never from that cache
  const both = () =>
    new Map([
      ['Q', { variant: times('q2', 'Qm'), param: 2 }],
      ['scores', { variant: spy, param: 5 }],
    ]);
  pipe.value('att', both());
  pipe.value('att', both());
  assert.deepEqual(run, [5, 7, 5, 5]);
  // and a new given result empties that cache
  pipe.provide(
    'Q',
    expected.Q.map((x) => -x),
  );
  pipe.value('att', new Map([['scores', { variant: spy, param: 5 }]]));
  assert.deepEqual(run, [5, 7, 5, 5, 5]);
});

test('hiddenAncestors and frontier: what a node is computed from, through nodes not given', () => {
  const pipe = new Pipeline(sz, inputs);
  pipe.provide('scores', expected.scores);
  assert.deepEqual(pipe.frontier('att'), ['scores']);
  assert.deepEqual(pipe.frontier('headout'), ['scores', 'X', 'Wv']);
  assert.deepEqual(pipe.hiddenAncestors('headout'), ['att', 'V', 'Vm']);
  assert.deepEqual(pipe.hiddenAncestors('scores'), ['Q', 'K', 'Qm', 'Km']);
});

test('ops.matmul: transA with transB is refused (no step of the layer needs it)', () => {
  const x = f(1, 2, 3, 4);
  assert.throws(() => matmul(x, x, { m: 2, k: 2, n: 2, transA: true, transB: true }), {
    message: 'matmul: transA and transB together are not supported',
  });
  assert.deepEqual(matmul(x, x, { m: 2, k: 2, n: 2, transB: true }), f(5, 11, 11, 25));
  assert.deepEqual(matmul(x, x, { m: 2, k: 2, n: 2, transA: true }), f(10, 14, 14, 20));
});
