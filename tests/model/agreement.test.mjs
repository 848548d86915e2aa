// web/model/agreement.js: the page's one statement of how its numbers agree with NumPy, measured
// again here with Debian's NumPy (python3 runs the page's own Copy-as-NumPy scripts):
//   - the random draws (X, Wq, Wk, Wv, Wo, dY, target; both generators) are bit-identical;
//   - everything computed (Y, the loss, every gradient, the losses of training) agrees to the last
//     digit or two: within 1e-14 of each array's largest entry (measured: at most ~7e-16);
//   - with the positional encoding on, X is computed too and agrees the same way;
//   - the gradient check's errors agree only in magnitude (norm-wise within three);
//   - the examples the statement quotes are the page's own numbers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  AGREEMENT,
  AGREEMENT_SENTENCE,
  CHECK_EXAMPLE,
  EXAMPLE,
  KINDS,
  PE_AGREEMENT,
  SCRIPT_NOTE,
} from '../../web/model/agreement.js';
import { lesson4Script, trainingScript, xSnippet } from '../../web/model/numpy-scripts.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { sentenceInput } from '../../web/model/input.js';
import { trainAtOnce } from '../../web/model/training.js';
import { layerWith } from '../../web/model/layers.js';
import { DEFAULT_CONVENTION } from '../../web/model/gradcheck-report.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { PYTHON, bitMismatches, loadMHA, maxRelErr } from '../helpers.mjs';

const mha = await loadMHA();
const TOKENS = tokenize(DEFAULT_SENTENCE);
/** "The last digit or two", as a bound: the difference relative to the array's largest entry. */
const LAST_DIGITS = 1e-14;

/** Run a script plus a JSON dump of the given Python expressions; returns { out, values }. */
function runPython(script, pairs) {
  const body = Object.entries(pairs)
    .map(([k, expr]) => `${JSON.stringify(k)}: ${expr}`)
    .join(', ');
  const out = execFileSync(PYTHON, ['-'], {
    input: `${script}\nimport json as _j\nprint("JSON", _j.dumps({${body}}))\n`,
    encoding: 'utf8',
    env: { ...process.env, PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 64 << 20,
  });
  const line = out.split('\n').find((l) => l.startsWith('JSON '));
  assert.ok(line, `no JSON line in:\n${out}`);
  return { out, values: JSON.parse(line.slice(5)) };
}

const flat = (x) => Float64Array.from(Array.isArray(x) ? x.flat(Infinity) : [x]);

function assertExact(t, page, numpy, what) {
  const b = flat(numpy);
  assert.equal(b.length, page.length, `${what}: length`);
  assert.equal(bitMismatches(Float64Array.from(page), b), 0, `${what}: not bit-identical`);
  t.diagnostic(`${what}: ${b.length} entries bit-identical to NumPy's`);
}

/** Within LAST_DIGITS of the largest entry; returns { rel, equal } for the diagnostics. */
function assertLastDigits(page, numpy, what) {
  const a = Float64Array.from(page);
  const b = flat(numpy);
  const rel = maxRelErr(a, b);
  assert.ok(rel <= LAST_DIGITS, `${what}: ${rel} of the largest entry`);
  return { rel, equal: a.length - bitMismatches(a, b), n: a.length };
}

test('agreement.js: three kinds (title, short form, brief, text); the examples in the text', () => {
  assert.deepEqual(KINDS, ['exact', 'lastDigits', 'magnitude']);
  for (const k of KINDS) {
    const a = AGREEMENT[k];
    assert.equal(a.kind, k);
    for (const f of ['title', 'short', 'brief', 'text']) assert.ok(a[f].length > 10, `${k}.${f}`);
    assert.ok(!/bit-identical|bit for bit/.test(a.text) || k === 'exact', `${k}: no bit claim`);
  }
  assert.match(AGREEMENT.lastDigits.text, new RegExp(`${EXAMPLE.page}.*${EXAMPLE.numpy}`));
  assert.match(
    AGREEMENT.magnitude.text,
    new RegExp(`${CHECK_EXAMPLE.page}.*${CHECK_EXAMPLE.numpy}`),
  );
  assert.match(AGREEMENT_SENTENCE, /bit-identical.*last digit or two.*magnitude only/);
  assert.match(PE_AGREEMENT, /last digit or two/);
  assert.ok(SCRIPT_NOTE.split('\n').every((l) => l.startsWith('# ') && l.length <= 100));
});

const L4 = 'lesson 4 in NumPy: X, W, dY bit-identical; Y, L, gradients to the last digit or two';
test(L4, (t) => {
  const r = lesson4(mha);
  assert.equal(String(r.loss), EXAMPLE.page, 'the example quotes the page’s L');
  const exactL = Number(EXAMPLE.numpy);
  assert.notEqual(exactL, r.loss, 'the quoted NumPy L differs from the page’s');
  assert.ok(Math.abs(exactL - r.loss) / r.loss <= LAST_DIGITS, 'and only in the last digits');
  const script = lesson4Script().replace('FULL_CHECK = True', 'FULL_CHECK = False');
  const grads = r.order.map((g) => `${JSON.stringify(g)}: g[${JSON.stringify(g)}].tolist()`);
  const { values: v } = runPython(script, {
    X: 'X.tolist()',
    Wq: 'layer.W["Wq"].tolist()',
    Wk: 'layer.W["Wk"].tolist()',
    Wv: 'layer.W["Wv"].tolist()',
    Wo: 'layer.W["Wo"].tolist()',
    dY: 'dY.tolist()',
    Y: 'Y.tolist()',
    L: 'float(np.sum(dY * Y))',
    grads: `{${grads.join(', ')}}`,
  });
  assertExact(t, r.X, v.X, 'X');
  for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) assertExact(t, r.W[k], v[k], k);
  assertExact(t, r.dY, v.dY, 'dY');
  const rows = [['Y', assertLastDigits(r.Y, v.Y, 'Y')]];
  rows.push(['L', assertLastDigits([r.loss], [v.L], 'L')]);
  for (const g of r.order) rows.push([g, assertLastDigits(r.grads[g].data, v.grads[g], g)]);
  t.diagnostic(
    `computed, largest difference / largest entry: ${rows.map(([k, e]) => `${k} ${e.rel.toExponential(1)} (${e.equal}/${e.n} equal)`).join(', ')}`,
  );
  t.diagnostic(`L: page ${r.loss}, this NumPy ${v.L}, quoted ${EXAMPLE.numpy}`);
});

const SCRIPT = {
  title: 'agreement',
  sentence: DEFAULT_SENTENCE,
  tokens: TOKENS,
  lrs: new Array(10).fill(0.1),
  check: false,
  printAtt: false,
};

for (const rng of ['default_rng', 'legacy']) {
  const title = `lesson 5 (${rng}) in NumPy: X, W, target bit-identical; 10 steps' losses close`;
  test(title, (t) => {
    const model = sentenceModel(mha, { tokens: TOKENS, rng });
    const s = { C: 64, h: 4, steps: 10, lr: 0.1, causal: false };
    const { losses } = trainAtOnce(mha, s, model);
    const { values: v } = runPython(trainingScript({ ...SCRIPT, rng }), {
      X: 'X.tolist()',
      target: 'target.tolist()',
      losses: '[float(L) for L in losses]',
    });
    // the layer's initial weights: the same script before any step (training moves layer.W)
    const { values: w0 } = runPython(trainingScript({ ...SCRIPT, rng, lrs: [] }), {
      W: '[layer.W[k].tolist() for k in ("Wq", "Wk", "Wv", "Wo")]',
    });
    v.W = w0.W;
    assertExact(t, model.X, v.X, 'X');
    ['Wq', 'Wk', 'Wv', 'Wo'].forEach((k, i) => assertExact(t, model.W[k], v.W[i], k));
    assertExact(t, model.target, v.target, 'target');
    const e = assertLastDigits(losses, v.losses, 'losses');
    t.diagnostic(`losses: ${e.equal} of ${e.n} equal, the others within ${e.rel.toExponential(1)}`);
  });
}

test('positional encoding on: X agrees to the last digit or two (sin, cos, ** differ)', (t) => {
  for (const [n, C] of [
    [8, 64],
    [64, 256],
  ]) {
    const sentence = Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    const tokens = tokenize(sentence);
    const inp = sentenceInput(mha, tokens, { C, pe: true });
    const { values: v } = runPython(xSnippet({ sentence, tokens, C, pe: true }), {
      X: 'X.ravel().tolist()',
    });
    const e = assertLastDigits(inp.X, v.X, `X + PE (T = ${n}, C = ${C})`);
    t.diagnostic(
      `T = ${n}, C = ${C}: ${e.equal} of ${e.n} entries of X equal, largest difference ${e.rel.toExponential(1)} of max |X|`,
    );
  }
});

test('the gradient check in NumPy: its errors agree with the page’s in magnitude only', (t) => {
  const model = sentenceModel(mha, { tokens: TOKENS });
  const layer = layerWith(mha, 64, 4, model.W);
  let report;
  try {
    // the page's tables start with a notebook's convention (two points, ε = 1e-5), as the script
    const { stencil, eps } = DEFAULT_CONVENTION;
    const opts = { B: 1, T: model.T, loss: 'mse', target: model.target, stencil, eps };
    report = layer.gradcheck(model.X, opts);
  } finally {
    layer.free();
  }
  const wk = report.find((r) => r.tensor === 'Wk');
  assert.equal(
    wk.maxRel.toExponential(2),
    CHECK_EXAMPLE.page,
    'the page’s Wk, as its table shows it',
  );
  const { out } = runPython(trainingScript({ ...SCRIPT, lrs: [], check: true }), {});
  const ratios = [];
  for (const r of report) {
    // the script's rows are named by gradient (dWq ... dX), the report's by tensor: max abs,
    // max rel per entry, cs231n, norm-wise
    const m = out.match(
      new RegExp(`^d${r.tensor} +\\([^)]*\\) +(\\S+) +(\\S+) +(\\S+) +(\\S+)`, 'm'),
    );
    assert.ok(m, `no row ${r.tensor} in:\n${out}`);
    // norm-wise within three, as the page says. (Not the per-entry maximum: the tiniest entry
    // sets it, and its last bits, so NumPy's can jump tenfold with the BLAS kernel's order of
    // summation, e.g. Wq 3.6e-5 or 2.3e-4 against the page's 1.5e-5.)
    const numpyNorm = Number(m[4]);
    const ratio = Math.max(numpyNorm / r.normRel, r.normRel / numpyNorm);
    assert.ok(ratio < 3, `${r.tensor}: norm-wise ${r.normRel} here, ${numpyNorm} in NumPy`);
    ratios.push(`${r.tensor} ${r.maxRel.toExponential(2)}/${m[2]} (norm ${ratio.toFixed(2)}×)`);
  }
  t.diagnostic(`max rel error, page/NumPy: ${ratios.join(', ')}`);
  const wkNumpy = ratios.find((x) => x.startsWith('Wk '));
  t.diagnostic(
    `Wk: quoted ${CHECK_EXAMPLE.page} here, ${CHECK_EXAMPLE.numpy} in NumPy; now ${wkNumpy}`,
  );
});
