// The playground at GPT-2 sizes: undrawnModel (a large model's tokens, vocabulary and sizes as
// sentenceModel's, its arrays left to the compute engine), gridHeads (one head at a time above
// GRID_MAX_T tokens), and the settings that allow C up to 1024 and T up to 128 (presets).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GRID_MAX_T, gridCount, gridHeads } from '../../web/model/playground.js';
import { sentenceModel, sentenceSpec, undrawnModel } from '../../web/model/sentence-model.js';
import { PRESETS, validateSettings } from '../../web/model/settings.js';
import { tokenize } from '../../web/model/tokens.js';
import { loadMHA } from '../helpers.mjs';

const mha = await loadMHA();

test('undrawnModel: the tokens, vocabulary rows and sizes of sentenceModel, no arrays', () => {
  const tokens = tokenize(Array(8).fill('The lanterns of Lantern Bay guide boats home').join(' '));
  for (const s of [
    { tokens, C: 768, heads: 12, seed: 42 },
    {
      tokens: tokenize('a b A c'),
      C: 96,
      heads: 3,
      seed: 7,
      rng: 'legacy',
      pe: true,
      causal: true,
    },
  ]) {
    const spec = sentenceSpec(s);
    assert.deepEqual(JSON.parse(JSON.stringify(spec)), spec, 'the spec is JSON-able');
    const light = undrawnModel(spec);
    const drawn = sentenceModel(mha, spec);
    for (const k of ['tokens', 'C', 'heads', 'hs', 'seed', 'rng', 'pe', 'causal', 'T']) {
      assert.deepEqual(light[k], drawn[k], `${k}`);
    }
    assert.deepEqual(light.vocab, drawn.vocab);
    assert.deepEqual(Array.from(light.ids), Array.from(drawn.ids));
    for (const k of ['X', 'W', 'target', 'E']) assert.equal(light[k], undefined, `no ${k}`);
    assert.deepEqual(light.spec, spec);
  }
});

test('gridHeads: the grid up to GRID_MAX_T tokens, one head at a time (picked) above', () => {
  assert.equal(GRID_MAX_T, 32);
  for (const [T, h] of [
    [8, 4],
    [8, 12],
    [32, 16],
    [16, 16],
  ]) {
    assert.equal(gridHeads(T, h), gridCount(T, h), `T=${T} h=${h}`);
  }
  assert.equal(gridHeads(8, 12), 12);
  assert.equal(gridHeads(33, 4), 0);
  assert.equal(gridHeads(64, 12), 0);
  assert.equal(gridHeads(128, 16), 0);
});

test('the presets are valid settings; the largest size is accepted', () => {
  for (const p of PRESETS) {
    const r = validateSettings({ C: String(p.C), h: String(p.h) });
    assert.deepEqual(r.errors, {}, p.key);
  }
  const big = validateSettings({ s: 'w '.repeat(128), C: '1024', h: '16' });
  assert.deepEqual(big.errors, {});
  assert.equal(big.tokens.length, 128);
});
