// web/model/numpy-scripts.js's playgroundScript: the playground's "Copy as NumPy" prints the
// attention its maps show, as the toggle has it: at the initial weights (drawn again from the
// seed) or after the steps taken. Each script runs in python3 + NumPy; its `att` (and the losses
// it prints) are compared with the page's model: the attention at the initial weights
// (playgroundForward) and after k steps (trainedAttention, which equals the Trainer's).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { playgroundScript } from '../../web/model/numpy-scripts.js';
import { playgroundForward, stepCount, trainedAttention } from '../../web/model/playground.js';
import { trainAtOnce } from '../../web/model/training.js';
import { tokenize } from '../../web/model/tokens.js';
import { PYTHON, loadMHA, maxRelErr } from '../helpers.mjs';

const mha = await loadMHA();
const SENTENCE = 'The cat saw the other cat, didn’t it?';
const TOKENS = tokenize(SENTENCE);
// computed values agree to the last digit or two (web/model/agreement.js); with the positional
// encoding on, X itself is computed too
const TOL = 1e-13;

function runPython(script) {
  const extra = 'import json as _j\nprint("JSON", _j.dumps({"att": att.tolist(), "label": label}))';
  const out = execFileSync(PYTHON, ['-'], {
    input: `${script}\n${extra}\n`,
    encoding: 'utf8',
    env: { ...process.env, PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 64 << 20,
  });
  const line = out.split('\n').find((l) => l.startsWith('JSON '));
  assert.ok(line, `no JSON line in:\n${out}`);
  return { out, ...JSON.parse(line.slice(5)) };
}

const CASES = [
  { C: 16, h: 4, seed: 7, rng: 'default_rng', pe: false, causal: false, lr: 0.5 },
  { C: 12, h: 3, seed: 1, rng: 'legacy', pe: true, causal: true, lr: 0.25 },
];

for (const s of CASES) {
  for (const steps of [0, 1, 3]) {
    const what = `${s.rng}, C ${s.C}, h ${s.h}, pe ${s.pe}, causal ${s.causal}`;
    for (const weights of steps ? ['initial', 'trained'] : ['initial']) {
      test(`playgroundScript (${what}), ${stepCount(steps)} taken: prints the ${weights} attention`, () => {
        const { model, att: initial } = playgroundForward(mha, s, TOKENS);
        const attSteps = weights === 'trained' ? steps : 0;
        const script = playgroundScript({
          title: 'test',
          sentence: SENTENCE,
          tokens: TOKENS,
          C: s.C,
          heads: s.h,
          seed: s.seed,
          rng: s.rng,
          pe: s.pe,
          causal: s.causal,
          lrs: new Array(steps).fill(s.lr),
          check: false,
          attSteps,
        });
        const got = runPython(script);
        const want = attSteps ? trainedAttention(mha, s, model, steps) : initial;
        const label = attSteps ? `after ${stepCount(steps)}` : 'initial weights';
        assert.equal(got.label, label);
        const flat = Float64Array.from(got.att.flat(Infinity));
        assert.equal(flat.length, s.h * TOKENS.length ** 2);
        const err = maxRelErr(flat, want);
        assert.ok(err <= TOL, `${what}: att differs by ${err}`);
        const heads = [...got.out.matchAll(/^head (\d+) attention, (.*) \(query row/gm)];
        assert.deepEqual(
          heads.map((m) => [Number(m[1]), m[2]]),
          Array.from({ length: s.h }, (_, i) => [i, label]),
          'one printed map per head, each labelled',
        );
        assert.match(got.out, new RegExp(`^mean over heads, ${label}:`, 'm'));
        const losses = [...got.out.matchAll(/^step +(\d+) +loss = (\S+)$/gm)];
        assert.deepEqual(
          losses.map((m) => Number(m[1])),
          Array.from({ length: steps + 1 }, (_, k) => k),
          'the losses before any step and after each step taken',
        );
        const page = trainAtOnce(mha, { ...s, steps }, model).losses;
        const printed = Float64Array.from(losses.map((m) => Number(m[2])));
        assert.ok(maxRelErr(printed, page) <= TOL, `${what}: losses`);
      });
    }
  }
}
