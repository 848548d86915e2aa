// catalogue.js's table on its own, on a layer small enough to check by hand (B = 2, T = 2, C = 2,
// h = 1): at which steps each known mistake is an edit of the course's program (the records name
// the edits; edits.js makes them), the line the edit prints, and what a few of them compute,
// recomputed here with plain loops.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_INPUTS, smallSizes } from './small-layer.mjs';
import { MISTAKES, recordOf, rightLine } from '../../web/check/catalogue.js';
import { editVariant, namedEdit } from '../../web/check/edits.js';
import { printLine } from '../../web/check/program.js';
import { simulate } from '../../web/check/pipeline.js';

const inputs = SMALL_INPUTS;
const sizes = smallSizes;
const p = { ...inputs, ...simulate(sizes(), inputs) };
// the first edit of node's step that the record `id` names, or null
const editOf = (node, id, s = sizes()) =>
  namedEdit(node, s, (edit) => recordOf({ site: node, edit })?.id === id);
// the edit's line and what it computes from p
const line = (e) => printLine(e.statements[e.index]);
const compute = (e, node, s = sizes()) => editVariant(e, node, s).fn(p);

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

test('the sites of each mistake: the steps at which it names an edit', () => {
  const sitesOf = (id, s = sizes()) =>
    ['Qm', 'Km', 'Vm', 'Q', 'K', 'V', 'scores', 'att', 'concat', 'Y', 'loss', 'dY', 'dheadout']
      .concat(['dV', 'dQ', 'dK', 'dQm', 'dKm', 'dVm', 'dWq', 'dWo', 'dX'])
      .filter((node) => editOf(node, id, s) !== null);
  assert.deepEqual(sitesOf('weights-transposed'), ['Qm', 'Km', 'Vm', 'Y']);
  assert.deepEqual(sitesOf('missing-scale'), ['scores', 'dQ', 'dK']);
  assert.deepEqual(sitesOf('scale-sqrt-C'), ['scores', 'dQ', 'dK']);
  assert.deepEqual(sitesOf('split-without-transpose'), ['Q', 'K', 'V', 'dheadout']);
  assert.deepEqual(sitesOf('merge-without-transpose'), ['concat', 'dQm', 'dKm', 'dVm']);
  // the causal switch: the mask added (scores or att) when the check is not causal, taken away
  // from att when it is
  assert.deepEqual(sitesOf('causal-mismatch'), ['scores', 'att']);
  assert.deepEqual(sitesOf('causal-mismatch', sizes({ causal: true })), ['att']);
  // the MSE's mistakes only when the loss is the MSE
  assert.deepEqual(sitesOf('mse-loss-sum'), ['loss']);
  assert.deepEqual(sitesOf('mse-loss-sum', sizes({ loss: 'dot' })), []);
  assert.deepEqual(sitesOf('dx-missing-paths'), ['dX']);
  assert.deepEqual(sitesOf('dv-not-transposed'), ['dV']);
  assert.deepEqual(sitesOf('dw-transposed'), ['dWq', 'dWo']);
  // a record names edits only: it implements none
  for (const m of MISTAKES) {
    assert.ok(Object.isFrozen(m) && Object.isFrozen(m.tensors), m.id);
    assert.ok(!Object.values(m).some((x) => typeof x === 'function'), m.id);
  }
});

test('the edit a record names: its line, and what it computes, recomputed by hand', () => {
  const wo = editOf('Y', 'weights-transposed');
  assert.equal(line(wo), 'Y = concat @ Wo.T');
  assert.deepEqual(compute(wo, 'Y'), timesTransposed(p.concat, inputs.Wo));
  const [dq, dk] = [editOf('dQ', 'scale-sqrt-C'), editOf('dK', 'scale-sqrt-C')];
  assert.equal(line(dq), 'dQ = dscores @ K / np.sqrt(C)');
  assert.equal(line(dk), 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(C)');
  // C = hs here (h = 1): dividing by sqrt(C) is the course's own dQ and dK
  for (const [e, node] of [
    [dq, 'dQ'],
    [dk, 'dK'],
  ]) {
    const mine = compute(e, node);
    mine.forEach((x, i) => assert.ok(Math.abs(x - p[node][i]) < 1e-15, `${node}[${i}]`));
  }
  // dY without the division by Y.size: the gradient of the sum
  const dy = editOf('dY', 'mse-grad-factor');
  assert.equal(line(dy), 'dY = 2 * (Y - target)');
  assert.deepEqual(
    compute(dy, 'dY'),
    p.Y.map((y, i) => 2 * (y - inputs.target[i])),
  );
  // a path of dX left out
  const dx = editOf('dX', 'dx-missing-paths');
  assert.equal(line(dx), 'dX = dQm @ Wq.T + dKm @ Wk.T');
  const qk = timesTransposed(p.dQm, inputs.Wq).map(
    (x, i) => x + timesTransposed(p.dKm, inputs.Wk)[i],
  );
  compute(dx, 'dX').forEach((x, i) => assert.ok(Math.abs(x - qk[i]) < 1e-15, `dX[${i}]`));
  // scores masked though the check is not causal: -inf above the diagonal, the rest the course's
  const masked = editOf('scores', 'causal-mismatch');
  assert.match(
    line(masked),
    /^scores = np\.where\(np\.triu\(np\.ones\(\(T, T\), dtype=bool\), k=1\), -np\.inf, /,
  );
  const filled = compute(masked, 'scores');
  assert.deepEqual([filled[1], filled[5]], [-Infinity, -Infinity]);
  assert.deepEqual([filled[0], filled[2], filled[3]], [p.scores[0], p.scores[2], p.scores[3]]);
  // a dW transposed: the whole result's .T
  const dwo = editOf('dWo', 'dw-transposed');
  assert.equal(line(dwo), 'dWo = (concat.reshape(-1, C).T @ dY.reshape(-1, C)).T');
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
