// web/model/playground.js at GPT-2 sizes: modelDraws (the model drawn in steps is sentenceModel's,
// bit for bit, for both generators, with and without positional encoding, whatever the step
// size), gridHeads (one head at a time above GRID_MAX_T tokens), isLarge, and the settings that
// allow C up to 1024 and T up to 128 (presets).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DRAW_CHUNK,
  GRID_MAX_T,
  gridCount,
  gridHeads,
  isLarge,
  modelDraws,
} from '../../web/model/playground.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { PRESETS, validateSettings } from '../../web/model/settings.js';
import { tokenize } from '../../web/model/tokens.js';
import { loadMHA, bitEqual } from '../helpers.mjs';

const mha = await loadMHA();

/** The last value modelDraws yields (its model) and how many steps it took. */
function drawAll(settings, tokens, chunk) {
  let last = null;
  let steps = 0;
  for (const p of modelDraws(mha, settings, tokens, chunk)) {
    last = p;
    steps += 1;
  }
  return { model: last.model, steps, last };
}

function assertSameModel(a, b, what) {
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${what}: fields`);
  for (const k of ['tokens', 'C', 'heads', 'hs', 'seed', 'rng', 'pe', 'causal', 'T']) {
    assert.deepEqual(a[k], b[k], `${what}: ${k}`);
  }
  assert.deepEqual(a.vocab, b.vocab, `${what}: vocab`);
  assert.deepEqual(a.ids, b.ids, `${what}: ids`);
  for (const k of ['X', 'E', 'target']) assert.ok(bitEqual(a[k], b[k]), `${what}: ${k}`);
  if (b.PE) assert.ok(bitEqual(a.PE, b.PE), `${what}: PE`);
  for (const k of Object.keys(b.W)) assert.ok(bitEqual(a.W[k], b.W[k]), `${what}: ${k}`);
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.W), `${what}: frozen like sentenceModel's`);
}

test('modelDraws: sentenceModel bit for bit, in steps of any size', () => {
  const tokens = tokenize('The lanterns of Lantern Bay guide boats home, home');
  for (const [C, h, rng, pe, chunk] of [
    [64, 4, 'default_rng', false, 1000],
    [96, 3, 'legacy', true, 777],
    [48, 6, 'legacy', false, 1],
    [192, 12, 'default_rng', true, DRAW_CHUNK],
  ]) {
    const settings = { C, h, seed: 7, rng, pe, causal: false };
    const ref = sentenceModel(mha, { tokens, C, heads: h, seed: 7, rng, pe, causal: false });
    const { model, steps, last } = drawAll(settings, tokens, chunk);
    assertSameModel(model, ref, `C=${C} ${rng} pe=${pe} chunk=${chunk}`);
    assert.equal(steps, 4 * Math.ceil((C * C) / chunk) + 1, 'a step per chunk of each weight');
    assert.equal(last.done, last.total);
  }
});

test('modelDraws at GPT-2 small: the same model, 64 tokens, steps of at most DRAW_CHUNK', () => {
  const tokens = tokenize(Array(8).fill('The lanterns of Lantern Bay guide boats home').join(' '));
  assert.equal(tokens.length, 64);
  const settings = { C: 768, h: 12, seed: 42, rng: 'default_rng', pe: false, causal: false };
  const ref = sentenceModel(mha, { tokens, C: 768, heads: 12, seed: 42 });
  const { model, steps } = drawAll(settings, tokens);
  assertSameModel(model, ref, 'GPT-2 small');
  assert.equal(steps, 4 * Math.ceil((768 * 768) / DRAW_CHUNK) + 1);
});

test('modelDraws: return() part-way frees the stream (no leak, no throw)', () => {
  const tokens = tokenize('a b c');
  const it = modelDraws(mha, { C: 64, h: 4, seed: 1, rng: 'default_rng', pe: false }, tokens, 100);
  it.next();
  it.next();
  assert.deepEqual(it.return(), { value: undefined, done: true });
  assert.equal(it.next().done, true);
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

test('isLarge: GPT-2 widths and long sentences, not the course sizes', () => {
  assert.equal(isLarge(8, 64), false);
  assert.equal(isLarge(64, 128), false); // the largest before this issue
  assert.equal(isLarge(64, 768), true);
  assert.equal(isLarge(8, 768), true);
  assert.equal(isLarge(128, 1024), true);
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
