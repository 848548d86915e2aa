// web/model/, sentence -> tokens -> rows: tokenize, vocabulary (case-insensitive), checkSentence,
// positionalEncoding, drawScaled and buildInput, against Python's re.findall / str.lower and NumPy
// (tests/reference/page_reference.py -> build/reference/page.json) and hand-derived cases.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { positionalEncoding, drawScaled, buildInput } from '../../web/model/input.js';
import {
  DEFAULT_SENTENCE,
  MAX_TOKENS,
  tokenize,
  vocabulary,
  checkSentence,
} from '../../web/model/tokens.js';
import { loadMHA, loadPageFixture, f64, bitEqual, maxAbsDiff } from '../helpers.mjs';

const mha = await loadMHA();
const page = loadPageFixture();

test(`tokenize and vocabulary equal Python (re.findall, str.lower) on every fixture sentence`, (t) => {
  for (const { text, tokens, vocab, ids } of page.tokenize) {
    assert.deepEqual(tokenize(text), tokens, `tokenize(${JSON.stringify(text)})`);
    assert.deepEqual(vocabulary(tokens), { vocab, ids }, `vocabulary of ${JSON.stringify(text)}`);
    t.diagnostic(`${JSON.stringify(text)}: ${tokens.length} tokens, ${vocab.length} rows`);
  }
});

test('tokenize: words, apostrophes, punctuation and emoji; whitespace only separates', () => {
  assert.deepEqual(tokenize('Hello, world!'), ['Hello', ',', 'world', '!']);
  assert.deepEqual(tokenize("it's o'clock"), ["it's", "o'clock"]);
  assert.deepEqual(tokenize('a_b'), ['a', '_', 'b']); // underscore is not a word character
  assert.deepEqual(tokenize('x2 42'), ['x2', '42']);
  assert.deepEqual(tokenize('🙂🙂'), ['🙂', '🙂']); // one token per code point, not per UTF-16 unit
  assert.deepEqual(tokenize(' \t\n '), []);
  assert.deepEqual(tokenize(''), []);
  assert.deepEqual(tokenize(null), []);
  assert.deepEqual(tokenize(undefined), []);
  assert.deepEqual(tokenize(12.5), ['12', '.', '5']);
  assert.deepEqual(tokenize(DEFAULT_SENTENCE), DEFAULT_SENTENCE.split(' '));
});

test(`vocabulary is case-insensitive: one row per word whatever its case, in order of appearance`, () => {
  const { vocab, ids } = vocabulary(['The', 'cat', 'saw', 'THE', 'Cat', 'the']);
  assert.deepEqual(vocab, ['the', 'cat', 'saw']);
  assert.deepEqual(ids, [0, 1, 2, 0, 1, 0]);
  assert.deepEqual(vocabulary([]), { vocab: [], ids: [] });
  assert.deepEqual(vocabulary(['Ünter', 'ünter']), { vocab: ['ünter'], ids: [0, 0] });
  // the default sentence: Lantern and lanterns are different words, the/The would be one
  const d = vocabulary(tokenize(DEFAULT_SENTENCE));
  assert.equal(d.vocab.length, 8);
  assert.deepEqual(d.ids, [0, 1, 2, 3, 4, 5, 6, 7]);
});

test(`checkSentence: tokens for plain text; an error for HTML, an empty or a too long sentence`, () => {
  assert.deepEqual(checkSentence('Hello there.'), { tokens: ['Hello', 'there', '.'] });
  assert.deepEqual(checkSentence('a < b > c'), { tokens: ['a', '<', 'b', '>', 'c'] });
  assert.deepEqual(checkSentence('x & y; 5 &c'), { tokens: ['x', '&', 'y', ';', '5', '&', 'c'] });
  const html = [
    ['<b>bold</b>', '<b>'],
    ['say </p> now', '</p>'],
    ['<!-- hidden -->', '<!-- hidden -->'],
    ['<?xml version="1.0"?>', '<?xml version="1.0"?>'],
    ['Tom &amp; Jerry', '&amp;'],
    ['&#39;', '&#39;'],
    ['&#x27;', '&#x27;'],
    ['&#X27;', '&#X27;'],
    ['<IMG SRC=x onerror=alert(1)>', '<IMG SRC=x onerror=alert…'],
  ];
  for (const [text, shown] of html) {
    assert.deepEqual(
      checkSentence(text),
      {
        error: `The sentence contains HTML (${shown}). Type plain words: markup is not read here, and the page never renders it.`,
      },
      text,
    );
  }
  // the markup is shown up to 24 characters; longer is cut there with an ellipsis
  const tag24 = `<b title="${'x'.repeat(12)}">`;
  const tag25 = `<b title="${'x'.repeat(13)}">`;
  assert.equal(tag24.length, 24);
  assert.ok(checkSentence(tag24).error.includes(`(${tag24})`));
  assert.ok(checkSentence(tag25).error.includes(`(${tag25.slice(0, 24)}…)`));
  const empty = { error: 'The sentence is empty: type at least one word (1 to 64 tokens).' };
  assert.deepEqual(checkSentence(''), empty);
  assert.deepEqual(checkSentence('   \n'), empty);
  assert.deepEqual(checkSentence(undefined), empty);
  const words = (k) => Array.from({ length: k }, (_, i) => `w${i}`).join(' ');
  assert.equal(MAX_TOKENS, 64);
  assert.equal(checkSentence(words(64)).tokens.length, 64);
  assert.deepEqual(checkSentence(words(65)), {
    error: `The sentence has 65 tokens; the page accepts 1 to 64 (attention is T×T, so 65×65 would be unreadable).`,
  });
  assert.equal(checkSentence('x').tokens.length, 1);
});

test('positionalEncoding equals NumPy (sin/cos of t / 10000**(2i/C)), odd C included', (t) => {
  for (const { T, C, pe } of page.positional_encoding) {
    const got = positionalEncoding(T, C);
    assert.ok(got instanceof Float64Array);
    assert.equal(got.length, T * C);
    // the angle t / 10000**(2i/C) may differ in its last bit (Math.pow vs NumPy's power), which
    // moves sin/cos by up to ~t ulps: allow 1e-15 per unit of t
    const d = maxAbsDiff(got, f64(pe));
    assert.ok(d <= 1e-15 * Math.max(1, T), `T=${T} C=${C}: max |diff| ${d}`);
    t.diagnostic(`T=${T} C=${C}: max |JS - NumPy| = ${d}`);
  }
  // hand-derived: row 0 is sin(0), cos(0), ...; (t=1, c=0) is sin(1), (t=1, c=1) cos(1)
  const pe = positionalEncoding(2, 4);
  assert.deepEqual(Array.from(pe.subarray(0, 4)), [0, 1, 0, 1]);
  assert.deepEqual(Array.from(pe.subarray(4, 6)), [Math.sin(1), Math.cos(1)]);
  assert.deepEqual(Array.from(pe.subarray(6)), [Math.sin(1 / 100), Math.cos(1 / 100)]);
  assert.deepEqual(Array.from(positionalEncoding(1, 3)), [0, 1, 0]);
});

test('drawScaled: the stream divided by sqrt(C), like standard_normal(n) / np.sqrt(C)', () => {
  const r = mha.rng(5);
  const got = drawScaled(r, 10, 16);
  r.free();
  const z = mha.standardNormal(10, { seed: 5 });
  assert.ok(
    bitEqual(
      got,
      z.map((v) => v / 4),
    ),
  );
});

test('buildInput: E from the stream, X = E[ids], + PE when asked; equal to NumPy', (t) => {
  for (const m of page.models) {
    const tokens = tokenize(m.sentence);
    assert.deepEqual(tokens, m.tokens);
    const rng = mha.rng(m.seed, m.rng);
    const got = buildInput(rng, tokens, m.C, { pe: m.pe });
    rng.free();
    assert.deepEqual(got.vocab, m.vocab);
    assert.deepEqual(got.ids, m.ids);
    assert.ok(bitEqual(got.E, f64(m.E)), `${m.name}: E`);
    if (m.pe) {
      const tol = 1e-15 * tokens.length;
      assert.ok(maxAbsDiff(got.PE, f64(m.PE)) <= tol, `${m.name}: PE`);
      assert.ok(maxAbsDiff(got.X, f64(m.X)) <= tol, `${m.name}: X = E[ids] + PE`);
    } else {
      assert.equal(got.PE, undefined);
      assert.ok(bitEqual(got.X, f64(m.X)), `${m.name}: X = E[ids]`);
    }
    t.diagnostic(`${m.name}: ${tokens.length} tokens, ${m.vocab.length} rows of E, pe ${m.pe}`);
  }
  // without options: no PE; repeated words share their row exactly
  const rng = mha.rng(1);
  const { X, E, ids } = buildInput(rng, ['a', 'B', 'A', 'b'], 3);
  rng.free();
  assert.deepEqual(ids, [0, 1, 0, 1]);
  assert.equal(E.length, 6);
  assert.deepEqual(Array.from(X), [
    ...E.subarray(0, 3),
    ...E.subarray(3),
    ...E.subarray(0, 3),
    ...E.subarray(3),
  ]);
});
