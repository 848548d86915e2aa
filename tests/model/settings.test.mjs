// web/model/, the playground's settings: validateSettings (every field, its limits and its
// message), parseQuery / settingsToQuery and their round trip, divisors, quoteValue. The expected
// values are written out by hand from the rules the page states.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COURSE } from '../../web/model/defaults.js';
import {
  DEFAULTS,
  C_OPTIONS,
  RNG_OPTIONS,
  MAX_STEPS,
  MAX_LR,
  MAX_SEED_DEFAULT,
  MAX_SEED_LEGACY,
  MAX_PG_TOKENS,
  PRESETS,
  presetOf,
  divisors,
  quoteValue,
  validateSettings,
  parseQuery,
  settingsToQuery,
} from '../../web/model/settings.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';

test('the constants: defaults, options and limits', () => {
  assert.deepEqual(
    { ...DEFAULTS },
    {
      s: DEFAULT_SENTENCE,
      C: 64,
      h: 4,
      seed: 42,
      rng: 'default_rng',
      causal: false,
      pe: false,
      lr: 0.1,
      steps: 10,
    },
  );
  assert.ok(Object.isFrozen(DEFAULTS) && Object.isFrozen(COURSE));
  // the course's own numbers (its demo: seed 42, B=2, T=6, C=64, h=4, hs=16; lesson 5's lr 0.1
  // and 10 steps; a notebook's two-point ε 1e-5, the five-point stencil's 1e-3)
  assert.deepEqual(
    { ...COURSE, eps: { ...COURSE.eps } },
    {
      seed: 42,
      rng: 'default_rng',
      B: 2,
      T: 6,
      C: 64,
      heads: 4,
      hs: 16,
      sentence: 'The lanterns of Lantern Bay guide boats home',
      lr: 0.1,
      steps: 10,
      eps: { twoPoint: 1e-5, fivePoint: 1e-3 },
    },
  );
  assert.ok(Object.isFrozen(COURSE.eps));
  assert.equal(DEFAULT_SENTENCE, 'The lanterns of Lantern Bay guide boats home');
  assert.deepEqual(C_OPTIONS, [8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]);
  assert.equal(MAX_PG_TOKENS, 128);
  assert.deepEqual(
    PRESETS.map((p) => [p.key, p.C, p.h]),
    [
      ['course', 64, 4],
      ['gpt2-small', 768, 12],
      ['1024-16', 1024, 16],
    ],
  );
  assert.equal(presetOf('768', '12').label, 'GPT-2 small (C = 768, h = 12)');
  assert.equal(presetOf(768, 8), undefined);
  assert.deepEqual(RNG_OPTIONS, ['default_rng', 'legacy']);
  assert.equal(MAX_STEPS, 100);
  assert.equal(MAX_LR, 10);
  assert.equal(MAX_SEED_DEFAULT, 9007199254740991);
  assert.equal(MAX_SEED_LEGACY, 4294967295);
});

test('divisors', () => {
  assert.deepEqual(divisors(1), [1]);
  assert.deepEqual(divisors(12), [1, 2, 3, 4, 6, 12]);
  assert.deepEqual(divisors(64), [1, 2, 4, 8, 16, 32, 64]);
  assert.deepEqual(divisors(48), [1, 2, 3, 4, 6, 8, 12, 16, 24, 48]);
  assert.deepEqual(divisors(7), [1, 7]);
});

test('quoteValue: quoted, long values cut at 30 characters, blanks called an empty field', () => {
  assert.equal(quoteValue('abc'), '“abc”');
  assert.equal(quoteValue(12), '“12”');
  assert.equal(quoteValue(''), 'an empty field');
  assert.equal(quoteValue('   '), 'an empty field');
  assert.equal(quoteValue(undefined), 'an empty field');
  assert.equal(quoteValue(null), 'an empty field');
  assert.equal(quoteValue('x'.repeat(30)), `“${'x'.repeat(30)}”`);
  assert.equal(quoteValue('y'.repeat(31)), `“${'y'.repeat(30)}…”`);
});

test('validateSettings: no input means the defaults, with the default sentence tokenized', () => {
  for (const raw of [{}, undefined, { ...DEFAULTS }]) {
    const { settings, tokens, errors } = validateSettings(raw);
    assert.deepEqual(errors, {});
    assert.deepEqual(settings, { ...DEFAULTS });
    assert.deepEqual(tokens, tokenize(DEFAULT_SENTENCE));
  }
});

test('validateSettings: strings from the controls or the URL are parsed', () => {
  const raw = {
    s: 'Hi there',
    C: ' 32 ',
    h: '+8',
    seed: '7',
    rng: 'legacy',
    causal: 'on',
    pe: 'TRUE',
    lr: '5e-1',
    steps: '100',
  };
  const { settings, tokens, errors } = validateSettings(raw);
  assert.deepEqual(errors, {});
  assert.deepEqual(settings, {
    s: 'Hi there',
    C: 32,
    h: 8,
    seed: 7,
    rng: 'legacy',
    causal: true,
    pe: true,
    lr: 0.5,
    steps: 100,
  });
  assert.deepEqual(tokens, ['Hi', 'there']);
  // every spelling of a boolean
  for (const [v, b] of [
    ['1', true],
    ['true', true],
    ['on', true],
    ['yes', true],
    [' Yes ', true],
    [true, true],
    ['0', false],
    ['false', false],
    ['off', false],
    ['no', false],
    ['', false],
    [false, false],
  ]) {
    const r = validateSettings({ causal: v, pe: v });
    assert.deepEqual(r.errors, {}, `causal = ${JSON.stringify(v)}`);
    assert.equal(r.settings.causal, b, `causal = ${JSON.stringify(v)}`);
    assert.equal(r.settings.pe, b, `pe = ${JSON.stringify(v)}`);
  }
  // numbers in every accepted form
  for (const [lr, v] of [
    ['.5', 0.5],
    ['5.', 5],
    ['1e-3', 0.001],
    ['1E+1', 10],
    ['+2', 2],
    [' 0.25 ', 0.25],
    [10, 10],
    ['1e-300', 1e-300],
    ['10.0', 10],
    ['.25', 0.25],
    ['1e0', 1],
    ['2.5E-1', 0.25],
  ]) {
    const r = validateSettings({ lr });
    assert.deepEqual(r.errors, {}, `lr ${lr}`);
    assert.equal(r.settings.lr, v, `lr ${lr}`);
  }
  for (const C of C_OPTIONS) {
    assert.deepEqual(validateSettings({ C: String(C), h: '1' }).errors, {}, `C ${C}`);
  }
  assert.deepEqual(validateSettings({ h: '64' }).errors, {});
  assert.deepEqual(validateSettings({ s: 'w '.repeat(128), C: '1024', h: '16' }).errors, {});
  assert.deepEqual(validateSettings({ seed: '0' }).errors, {});
  assert.deepEqual(validateSettings({ seed: String(2 ** 53 - 1) }).errors, {});
  assert.deepEqual(validateSettings({ seed: String(2 ** 32 - 1), rng: 'legacy' }).errors, {});
  assert.deepEqual(validateSettings({ steps: '1' }).errors, {});
});

// One bad field at a time: [raw settings, field, exact message]
const BAD = [
  [
    { C: '33' },
    'C',
    'C must be one of 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024; got “33”.',
  ],
  [
    { C: '' },
    'C',
    `C must be one of 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024; got an empty field.`,
  ],
  [
    { C: '64.0' },
    'C',
    'C must be one of 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024; got “64.0”.',
  ],
  [
    { C: '1025' },
    'C',
    'C must be one of 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024; got “1025”.',
  ],
  [
    { C: '-64' },
    'C',
    'C must be one of 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024; got “-64”.',
  ],
  [{ h: '0' }, 'h', 'The number of heads must be a whole number ≥ 1; got “0”.'],
  [{ h: 'two' }, 'h', 'The number of heads must be a whole number ≥ 1; got “two”.'],
  [{ h: '2.5' }, 'h', 'The number of heads must be a whole number ≥ 1; got “2.5”.'],
  [
    { h: '5' },
    'h',
    `C = 64 is not divisible by 5 heads: each head gets C / heads columns, so heads must divide C (1, 2, 4, 8, 16, 32, 64).`,
  ],
  [
    { C: '48', h: '32' },
    'h',
    `C = 48 is not divisible by 32 heads: each head gets C / heads columns, so heads must divide C (1, 2, 3, 4, 6, 8, 12, 16, 24, 48).`,
  ],
  [{ rng: 'mt' }, 'rng', 'The generator must be default_rng or legacy; got “mt”.'],
  [{ rng: 'Legacy' }, 'rng', 'The generator must be default_rng or legacy; got “Legacy”.'],
  [{ seed: '-1' }, 'seed', 'The seed must be a whole number from 0 to 2⁵³−1; got “-1”.'],
  [{ seed: '1e3' }, 'seed', 'The seed must be a whole number from 0 to 2⁵³−1; got “1e3”.'],
  [
    { seed: String(2 ** 53) },
    'seed',
    'The seed must be a whole number from 0 to 2⁵³−1; got “9007199254740992”.',
  ],
  [
    { seed: '99999999999999999999999999999999999' },
    'seed',
    'The seed must be a whole number from 0 to 2⁵³−1; got “999999999999999999999999999999…”.',
  ],
  [
    { seed: String(2 ** 32), rng: 'legacy' },
    'seed',
    'The seed must be a whole number from 0 to 2³²−1 (np.random.seed’s range); got “4294967296”.',
  ],
  [{ causal: 'maybe' }, 'causal', 'causal must be 0 or 1; got “maybe”.'],
  [{ causal: '2' }, 'causal', 'causal must be 0 or 1; got “2”.'],
  [{ pe: 'y' }, 'pe', 'pe must be 0 or 1; got “y”.'],
  [{ lr: '0' }, 'lr', 'The learning rate must be a number greater than 0 and at most 10; got “0”.'],
  [
    { lr: '-0.1' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “-0.1”.',
  ],
  [
    { lr: '10.0001' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “10.0001”.',
  ],
  [
    { lr: 'Infinity' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “Infinity”.',
  ],
  [
    { lr: '0x10' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “0x10”.',
  ],
  [
    { lr: '' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got an empty field.',
  ],
  [
    { lr: '0x1' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “0x1”.',
  ],
  [
    { lr: '0b1' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “0b1”.',
  ],
  [
    { lr: '1e' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “1e”.',
  ],
  [
    { lr: '1.2.3' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “1.2.3”.',
  ],
  [
    { lr: '1e999' },
    'lr',
    'The learning rate must be a number greater than 0 and at most 10; got “1e999”.',
  ],
  [{ steps: '0' }, 'steps', 'Training steps must be a whole number from 1 to 100; got “0”.'],
  [{ steps: '101' }, 'steps', 'Training steps must be a whole number from 1 to 100; got “101”.'],
  [{ steps: '1.5' }, 'steps', 'Training steps must be a whole number from 1 to 100; got “1.5”.'],
  [{ steps: 'ten' }, 'steps', 'Training steps must be a whole number from 1 to 100; got “ten”.'],
  [{ s: '' }, 's', 'The sentence is empty: type at least one word (1 to 128 tokens).'],
  [{ s: undefined }, 's', 'The sentence is empty: type at least one word (1 to 128 tokens).'],
  [{ s: null }, 's', 'The sentence is empty: type at least one word (1 to 128 tokens).'],
  [
    { s: 'w '.repeat(129) },
    's',
    `The sentence has 129 tokens; the page accepts 1 to 128 (attention is T×T, so 129×129 would be unreadable).`,
  ],
  [
    { C: '768', h: '10' },
    'h',
    `C = 768 is not divisible by 10 heads: each head gets C / heads columns, so heads must divide C (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768).`,
  ],
  [
    { s: '<i>x</i>' },
    's',
    `The sentence contains HTML (<i>). Type plain words: markup is not read here, and the page never renders it.`,
  ],
];

test('validateSettings: each bad field gets exactly its own message', (t) => {
  for (const [raw, field, message] of BAD) {
    const { errors } = validateSettings(raw);
    assert.deepEqual(errors, { [field]: message }, JSON.stringify(raw));
  }
  t.diagnostic(`${BAD.length} bad values, each reported on its own field only`);
});

test('validateSettings: an invalid C is reported once (heads are not checked against it)', () => {
  const { errors } = validateSettings({ C: '100', h: '3' });
  assert.deepEqual(Object.keys(errors), ['C']);
  const all = validateSettings({ C: 'x', h: '0', seed: 'x', rng: 'x', lr: 'x', steps: 'x' });
  assert.deepEqual(Object.keys(all.errors).sort(), ['C', 'h', 'lr', 'rng', 'seed', 'steps']);
  // an unknown generator checks the seed against the default_rng range
  assert.equal(validateSettings({ rng: 'x', seed: String(2 ** 40) }).errors.seed, undefined);
});

test('parseQuery: only the known keys, as strings, the first of repeated keys', () => {
  assert.deepEqual(parseQuery('?s=hello%20world&C=32&x=1&C=64'), { s: 'hello world', C: '32' });
  assert.deepEqual(parseQuery('s=a+b&causal=1&pe=0&lr=0.5&steps=3&seed=9&rng=legacy&h=2'), {
    s: 'a b',
    causal: '1',
    pe: '0',
    lr: '0.5',
    steps: '3',
    seed: '9',
    rng: 'legacy',
    h: '2',
  });
  assert.deepEqual(parseQuery(''), {});
  assert.deepEqual(parseQuery(undefined), {});
  assert.deepEqual(parseQuery(null), {});
});

test('settingsToQuery: the documented form; parse(query(s)) == s for valid settings', () => {
  assert.equal(
    settingsToQuery(DEFAULTS),
    `?s=The+lanterns+of+Lantern+Bay+guide+boats+home&C=64&h=4&seed=42&rng=default_rng&causal=0&pe=0&lr=0.1&steps=10`,
  );
  const cases = [
    { ...DEFAULTS },
    {
      s: 'Ça va? 1 & 2 = 3 🙂',
      C: 48,
      h: 6,
      seed: 2 ** 53 - 1,
      rng: 'default_rng',
      causal: true,
      pe: true,
      lr: 1e-7,
      steps: 100,
    },
    { s: 'x', C: 8, h: 8, seed: 0, rng: 'legacy', causal: false, pe: true, lr: 10, steps: 1 },
  ];
  for (const s of cases) {
    const q = settingsToQuery(s);
    const back = validateSettings(parseQuery(q));
    assert.deepEqual(back.errors, {}, q);
    assert.deepEqual(back.settings, s, q);
  }
  assert.match(settingsToQuery(cases[1]), /&causal=1&pe=1&/);
});
