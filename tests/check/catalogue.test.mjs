// catalogue.js's table on its own, on a layer small enough to check by hand (B = 2, T = 2, C = 2,
// h = 1): at which steps each known mistake can sit (the course's lines it replaces), what the
// student's line says, and what a few of them compute, recomputed here with plain loops.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_INPUTS, smallSizes } from './small-layer.mjs';
import { MISTAKES, rightLine, variants } from '../../web/check/catalogue.js';
import { simulate } from '../../web/check/pipeline.js';

const inputs = SMALL_INPUTS;
const sizes = smallSizes;
const p = { ...inputs, ...simulate(sizes(), inputs) };
const ids = (node, s = sizes()) => variants(node, s).map((x) => x.id);
const one = (node, id, s = sizes()) => variants(node, s).find((x) => x.id === id);

// rows (4, 2) @ W^T (2, 2), by loops
function timesTransposed(rows, W) {
  const out = new Float64Array(rows.length);
  for (let r = 0; r < rows.length / 2; r++) {
    for (let j = 0; j < 2; j++) {
      out[r * 2 + j] = rows[r * 2] * W[j * 2] + rows[r * 2 + 1] * W[j * 2 + 1];
    }
  }
  return out;
}

test('the sites of each mistake: the steps whose course line it replaces', () => {
  const sitesOf = (id, s = sizes()) =>
    ['Qm', 'Km', 'Vm', 'Q', 'K', 'V', 'scores', 'att', 'concat', 'Y', 'loss', 'dY', 'dheadout']
      .concat(['dQ', 'dK', 'dQm', 'dKm', 'dVm', 'dWq', 'dWo', 'dX'])
      .filter((node) => ids(node, s).includes(id));
  assert.deepEqual(sitesOf('weights-transposed'), ['Qm', 'Km', 'Vm', 'Y']);
  assert.deepEqual(sitesOf('missing-scale'), ['scores', 'dQ', 'dK']);
  assert.deepEqual(sitesOf('scale-sqrt-C'), ['scores', 'dQ', 'dK']);
  assert.deepEqual(sitesOf('split-without-transpose'), ['Q', 'K', 'V', 'dheadout']);
  assert.deepEqual(sitesOf('merge-without-transpose'), ['concat', 'dQm', 'dKm', 'dVm']);
  // the causal switch: masked scores only when the check is not causal
  assert.deepEqual(sitesOf('causal-mismatch'), ['scores', 'att']);
  assert.deepEqual(sitesOf('causal-mismatch', sizes({ causal: true })), ['att']);
  // the MSE's mistakes only when the loss is the MSE
  assert.deepEqual(sitesOf('mse-loss-sum'), ['loss']);
  assert.deepEqual(sitesOf('mse-loss-sum', sizes({ loss: 'dot' })), []);
  assert.deepEqual(sitesOf('dx-missing-paths'), ['dX']);
  assert.deepEqual(variants('nothing', sizes()), []);
  for (const m of MISTAKES) assert.ok(Object.isFrozen(m) && Object.isFrozen(m.tensors), m.id);
});

test('what the student wrote, and what it computes, recomputed by hand', () => {
  const wo = one('Y', 'weights-transposed');
  assert.equal(wo.what(), 'Y = concat @ Wo.T');
  assert.deepEqual(wo.fn(p), timesTransposed(p.concat, inputs.Wo));
  const [dq, dk] = [one('dQ', 'scale-sqrt-C'), one('dK', 'scale-sqrt-C')];
  assert.equal(dq.what(), 'dQ = dscores @ K / np.sqrt(C)');
  assert.equal(dk.what(), 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(C)');
  // C = hs here (h = 1): dividing by sqrt(C) is the course's own dQ and dK
  for (const [v, node] of [
    [dq, 'dQ'],
    [dk, 'dK'],
  ]) {
    const mine = v.fn(p);
    mine.forEach((x, i) => assert.ok(Math.abs(x - p[node][i]) < 1e-15, `${node}[${i}]`));
  }
  // dY = c * 2 * (Y - target) / Y.size
  const dy = one('dY', 'mse-grad-factor');
  assert.equal(dy.params, 'fit');
  const c = 3;
  assert.deepEqual(
    dy.fn(p, c),
    p.Y.map((y, i) => ((c * 2) / 8) * (y - inputs.target[i])),
  );
  // Y.size (8 here) and 1/2 read as the line a student wrote; another factor written in
  assert.match(dy.what(8), /^dY = 2 \* \(Y - target\), no division by Y\.size \(/);
  assert.match(dy.what(0.5), /^dY = \(Y - target\) \/ Y\.size, no factor 2 \(/);
  assert.equal(dy.what(1.7), 'dY = 1.7 * 2 * (Y - target) / Y.size');
  // the paths of dX a student left out
  const dx = one('dX', 'dx-missing-paths');
  assert.deepEqual(dx.params, ['Q', 'QK']);
  assert.equal(dx.what('Q'), 'dX = dQm @ Wq.T (the Q path only)');
  assert.equal(dx.what('QK'), 'dX = dQm @ Wq.T + dKm @ Wk.T (no V path)');
  assert.deepEqual(dx.fn(p, 'Q'), timesTransposed(p.dQm, inputs.Wq));
  // scores masked when the check is not causal: the fill said as the student wrote it
  const masked = one('scores', 'causal-mismatch');
  assert.deepEqual([masked.own, masked.maskedFill], [true, true]);
  assert.equal(
    masked.what(-Infinity),
    'scores masked above the diagonal (to -np.inf) though the check is not causal',
  );
  assert.equal(
    masked.what(-1e9),
    'scores masked above the diagonal (to -1000000000) though the check is not causal',
  );
  const filled = masked.fn(p, -7);
  assert.deepEqual([filled[1], filled[5]], [-7, -7]);
  assert.deepEqual([filled[0], filled[2], filled[3]], [p.scores[0], p.scores[2], p.scores[3]]);
});

test('rightLine: the record’s own line, else the course’s line for the step', () => {
  const s = sizes();
  assert.equal(
    rightLine('split-without-transpose', 'Q', s),
    'split_heads(x) = x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
  );
  assert.match(
    rightLine('weights-transposed', 'Y', s),
    /\(W is \(C, C\) with the inputs on its rows\)$/,
  );
  assert.match(rightLine('no-such-id', 'Y', s), /^Y = concat @ Wo/);
  assert.match(rightLine('causal-mismatch', 'scores', s), /, unmasked \(or tick causal if/);
  assert.match(rightLine('causal-mismatch', 'att', sizes({ causal: true })), /or untick causal/);
  assert.match(
    rightLine('causal-mismatch', 'att', s),
    /^att = softmax\(scores, axis=-1\) on unmasked/,
  );
});
