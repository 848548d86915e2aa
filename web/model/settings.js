// settings.js - the playground's settings, their limits and the URL that holds them (DOM-free).
//
//   validateSettings(raw)  raw strings (controls or URL) -> { settings, tokens, errors }
//   parseQuery(search)     '?s=...&C=64...' -> raw settings
//   settingsToQuery(s)     valid settings -> '?s=...&C=64&h=4&seed=42&rng=...&steps=10'

import { COURSE } from './defaults.js';
import { checkSentence } from './tokens.js';

/** The widths C the playground offers: the course's sizes, then up to GPT-2's 768 and 1024. */
export const C_OPTIONS = [8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
/** The playground's longest sentence (lesson 1 takes MAX_TOKENS = 64). */
export const MAX_PG_TOKENS = 128;
/** Widths and head counts one click away (the course's, real models'): { key, label, C, h }. */
export const PRESETS = Object.freeze([
  Object.freeze({
    key: 'course',
    label: `the course (C = ${COURSE.C}, h = ${COURSE.heads})`,
    C: COURSE.C,
    h: COURSE.heads,
  }),
  Object.freeze({ key: 'gpt2-small', label: 'GPT-2 small (C = 768, h = 12)', C: 768, h: 12 }),
  Object.freeze({ key: '1024-16', label: '1024 / 16 (C = 1024, h = 16)', C: 1024, h: 16 }),
]);
export const RNG_OPTIONS = ['default_rng', 'legacy'];
export const MAX_STEPS = 100;
export const MAX_LR = 10;
export const MAX_SEED_DEFAULT = 2 ** 53 - 1; // what mha.js accepts for default_rng
export const MAX_SEED_LEGACY = 2 ** 32 - 1; // np.random.seed takes 0 ... 2**32 - 1

/** The playground's defaults (also the state an empty query string means). */
export const DEFAULTS = Object.freeze({
  s: COURSE.sentence,
  C: COURSE.C,
  h: COURSE.heads,
  seed: COURSE.seed,
  rng: COURSE.rng,
  causal: false,
  pe: false,
  lr: COURSE.lr,
  steps: COURSE.steps,
});

/** The settings' keys, in the order of the controls, the messages and the query string. */
export const SETTING_KEYS = ['s', 'C', 'h', 'seed', 'rng', 'causal', 'pe', 'lr', 'steps'];

/** Every d with C % d === 0, ascending (the head counts a width allows). */
export function divisors(C) {
  const out = [];
  for (let d = 1; d <= C; d++) if (C % d === 0) out.push(d);
  return out;
}

function parseIntStrict(v) {
  const s = String(v).trim();
  if (!/^[+]?\d+$/.test(s)) return NaN;
  return Number(s);
}

function parseNumber(v) {
  const s = String(v).trim();
  if (s === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) return NaN;
  return Number(s);
}

/** true / false for the spellings a URL or a checkbox gives; undefined for anything else. */
export function parseBool(v) {
  if (typeof v === 'boolean') return v;
  const s = String(v).trim().toLowerCase();
  if (s === '1' || s === 'true' || s === 'on' || s === 'yes') return true;
  if (s === '0' || s === 'false' || s === 'off' || s === 'no' || s === '') return false;
  return undefined;
}

/** How a bad raw value is quoted in a message. */
export function quoteValue(v) {
  const s = String(v ?? '');
  if (s.trim() === '') return 'an empty field';
  return `“${s.length > 30 ? `${s.slice(0, 30)}…` : s}”`;
}

// Each check reads raw field(s) of r, writes the parsed value(s) to settings and a message to
// errors when the value is refused.

function checkWidth(r, settings, errors) {
  settings.C = parseIntStrict(r.C);
  if (!C_OPTIONS.includes(settings.C)) {
    errors.C = `C must be one of ${C_OPTIONS.join(', ')}; got ${quoteValue(r.C)}.`;
  }
}

function checkHeads(r, settings, errors) {
  settings.h = parseIntStrict(r.h);
  if (!Number.isInteger(settings.h) || settings.h < 1) {
    errors.h = `The number of heads must be a whole number ≥ 1; got ${quoteValue(r.h)}.`;
  } else if (!errors.C && settings.C % settings.h !== 0) {
    errors.h = `C = ${settings.C} is not divisible by ${settings.h} heads: each head gets C / heads columns, so heads must divide C (${divisors(settings.C).join(', ')}).`;
  }
}

function checkGenerator(r, settings, errors) {
  settings.rng = String(r.rng);
  if (!RNG_OPTIONS.includes(settings.rng)) {
    errors.rng = `The generator must be default_rng or legacy; got ${quoteValue(settings.rng)}.`;
  }
  settings.seed = parseIntStrict(r.seed);
  const maxSeed = settings.rng === 'legacy' ? MAX_SEED_LEGACY : MAX_SEED_DEFAULT;
  if (!Number.isSafeInteger(settings.seed) || settings.seed < 0 || settings.seed > maxSeed) {
    errors.seed = `The seed must be a whole number from 0 to ${maxSeed === MAX_SEED_LEGACY ? '2³²−1 (np.random.seed’s range)' : '2⁵³−1'}; got ${quoteValue(r.seed)}.`;
  }
}

function checkFlags(r, settings, errors) {
  settings.causal = parseBool(r.causal);
  if (settings.causal === undefined) {
    errors.causal = `causal must be 0 or 1; got ${quoteValue(r.causal)}.`;
  }
  settings.pe = parseBool(r.pe);
  if (settings.pe === undefined) errors.pe = `pe must be 0 or 1; got ${quoteValue(r.pe)}.`;
}

/** The message for a refused learning rate (`got` already quoted). */
export function learningRateError(got) {
  return `The learning rate must be a number greater than 0 and at most ${MAX_LR}; got ${got}.`;
}

function checkTraining(r, settings, errors) {
  settings.lr = parseNumber(r.lr);
  if (!Number.isFinite(settings.lr) || settings.lr <= 0 || settings.lr > MAX_LR) {
    errors.lr = learningRateError(quoteValue(r.lr));
  }
  settings.steps = parseIntStrict(r.steps);
  if (!Number.isInteger(settings.steps) || settings.steps < 1 || settings.steps > MAX_STEPS) {
    errors.steps = `Training steps must be a whole number from 1 to ${MAX_STEPS}; got ${quoteValue(r.steps)}.`;
  }
}

/**
 * Validates raw settings (strings from the controls or the URL, or typed values). Returns
 * { settings, tokens, errors } where errors maps a field (s, C, h, seed, rng, causal, pe, lr,
 * steps) to a message; settings is complete only when errors is empty.
 */
export function validateSettings(raw) {
  const r = { ...DEFAULTS, ...raw };
  const errors = {};
  const settings = {};
  settings.s = String(r.s ?? '');
  const sc = checkSentence(settings.s, MAX_PG_TOKENS);
  if (sc.error) errors.s = sc.error;
  for (const check of [checkWidth, checkHeads, checkGenerator, checkFlags, checkTraining]) {
    check(r, settings, errors);
  }
  return { settings, tokens: sc.tokens, errors };
}

/** Raw settings from a query string ('?s=...&C=64...'); absent keys keep their defaults. */
export function parseQuery(search) {
  const p = new URLSearchParams(search ?? '');
  const raw = {};
  for (const k of SETTING_KEYS) if (p.has(k)) raw[k] = p.get(k);
  return raw;
}

/**
 * The query string for valid settings:
 * ?s=<sentence>&C=64&h=4&seed=42&rng=default_rng&causal=0&pe=0&lr=0.1&steps=10
 */
export function settingsToQuery(s) {
  const p = new URLSearchParams();
  p.set('s', s.s);
  p.set('C', String(s.C));
  p.set('h', String(s.h));
  p.set('seed', String(s.seed));
  p.set('rng', s.rng);
  p.set('causal', s.causal ? '1' : '0');
  p.set('pe', s.pe ? '1' : '0');
  p.set('lr', String(s.lr));
  p.set('steps', String(s.steps));
  return `?${p.toString()}`;
}

/** Whether two settings draw the same model (X, weights, attention): all but lr and steps. */
export function sameModel(a, b) {
  const key = (x) => JSON.stringify([x.s, x.C, x.h, x.seed, x.rng, x.causal, x.pe]);
  return key(a) === key(b);
}

/** The preset with this width and number of heads (undefined: none). */
export function presetOf(C, h) {
  return PRESETS.find((p) => p.C === Number(C) && p.h === Number(h));
}

/** Whether two settings are the same view (the same query string). */
export function sameSettings(a, b) {
  return settingsToQuery(a) === settingsToQuery(b);
}
