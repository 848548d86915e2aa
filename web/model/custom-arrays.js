// custom-arrays.js - the page's side of the notebook check (DOM-free): the arrays a student has
// loaded, by name; the heads their shapes give; what the check and "Use my arrays in the lessons"
// need from them; and the views of a result row the section shows (first difference, yours −
// expected as a matrix).
//
// A loaded array: { key (lower-case name), name, data: Float64Array (C order), shape, dtype,
// source ('mha_check.npz', 'X.npy', 'pasted'), resolution? (pasted text: per-entry tolerance) }.
// A skipped .npz member (not loaded; the rest of its file is): { name, source, reason, fix }.

import { COURSE } from './defaults.js';
import { weightNames } from './tensors.js';
import { block2d } from './arrays.js';
import { fmt, shapeText } from './format.js';
import { positionLabels } from './labels.js';
import { gradcheckSize } from './gradcheck-report.js';
import { withLayer } from './layers.js';
// the course's names and lesson 5's run, without the rest of the check (a lesson's chunk
// takes these two small modules, not the check: see eslint.config.js)
import {
  HEAD_COLUMN_NAMES,
  LESSON1_NAMES,
  LESSON_KEYS,
  LESSON_SAVES,
  arrayKey,
  courseName,
  lessonName,
  lessonOf,
  lessonSaveLine,
} from '../check/names.js';
import { studentRun } from '../check/training-run.js';
import { MAX_NAME_LENGTH, MAX_NPY_BYTES, MAX_NPZ_BYTES } from '../io/limits.js';
import { MAX_LR, MAX_STEPS } from './settings.js';
import { LESSON5_DEFAULTS } from './training.js';

/** The largest file of each kind the section reads (what the notebook's readers can accept). */
export const MAX_FILE_BYTES = Object.freeze({ npy: MAX_NPY_BYTES, npz: MAX_NPZ_BYTES });

/**
 * What the lessons can draw from a notebook's arrays: T tokens (the attention maps are T×T), width
 * C, every batch item and every head. (The playground's own sentences go further: MAX_PG_TOKENS
 * tokens, C up to 1024.)
 */
export const CUSTOM_LIMITS = Object.freeze({ B: 4, T: 64, C: 128, heads: 16 });

/** The seed of the dY and target drawn when the notebook has none (the course's seed). */
export const CUSTOM_SEED = COURSE.seed;

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
// a member of an .npz saved from a dict of parameters: a Python name, or a module path of them
// ('q_proj.weight', 'h.0.attn.c_attn.weight', 'attn/c_attn/w'), as np.savez(f, **state) writes
const MEMBER_RE = /^[A-Za-z_][A-Za-z0-9_]*([./][A-Za-z0-9_]+)*$/;

/** null when an .npz member's (or .npy file's) name can name an array, else why. */
function memberError(name) {
  const s = String(name ?? '');
  return MEMBER_RE.test(s) && s.length <= MAX_NAME_LENGTH ? null : nameError(s);
}

/** How a name (maybe hostile) is quoted in a message: at most 40 characters, as text. */
export function quoteName(name) {
  const s = String(name);
  return `“${s.length > 40 ? `${s.slice(0, 40)}…` : s}”`;
}

/** null when `name` can name an array (a Python identifier, as np.savez's keywords), else why. */
export function nameError(name) {
  const s = String(name ?? '');
  if (s.trim() === '') return 'Give the array a name, e.g. att or dWq.';
  if (NAME_RE.test(s) && s.length <= MAX_NAME_LENGTH) return null;
  return `${quoteName(s)} is not a Python name (letters, digits and _, at most ${MAX_NAME_LENGTH} characters, not starting with a digit): use the name your notebook gives the array, e.g. att or dWq.`;
}

/** The array name of a .npy file: the file name without '.npy' ('dWq.npy' -> 'dWq'). */
export function npyName(fileName) {
  return String(fileName).replace(/\.npy$/i, '');
}

/** The kind of a file by its name: 'npz', 'npy' or null (anything else). */
export function fileKind(fileName) {
  const m = /\.(npz|npy)$/i.exec(String(fileName));
  return m ? m[1].toLowerCase() : null;
}

/** Why a file is not read before its bytes are (null: read it). file: { name, size }. */
export function fileError(file) {
  if (!fileKind(file.name)) {
    return `${quoteName(file.name)} is neither a .npz nor a .npy file: save your arrays with np.savez('mha_check.npz', …) or np.save('X.npy', X).`;
  }
  const max = MAX_FILE_BYTES[fileKind(file.name)];
  if (file.size > max) {
    const mib = (n) => (n / 2 ** 20).toFixed(0);
    return `${quoteName(file.name)} is ${mib(file.size)} MiB: the check reads such files up to ${mib(max)} MiB (the course's arrays take a few KiB).`;
  }
  return null;
}

/** A member whose name the check cannot use: skipped, with what to save instead. */
const NOT_A_NAME = Object.freeze({
  reason:
    'its name is not one the check reads (ASCII letters, digits and _, no digit first; parts ' +
    "joined by '.' or '/' as in q_proj.weight)",
  fix: "save it under the name the check reads, e.g. np.savez('mha_check.npz', att=att)",
});

/**
 * The arrays of one file, named, for addArrays, and what of it is not loaded: { arrays: [{ name,
 * data, shape, dtype, source }], skipped: [{ name, source, reason, fix }] }. `read` is loadNpz's
 * result (npz: its members by name; those loadNpz skipped and those whose name is not a Python
 * name are skipped) or readNpy's (npy: one array named by the file's stem, which must be a Python
 * name). Throws, loading nothing, when no array of the file can be loaded.
 */
export function fileArrays(fileName, kind, read) {
  const named = (name, a) => ({
    name,
    data: a.data,
    shape: [...a.shape],
    dtype: a.dtype,
    source: fileName,
  });
  if (kind !== 'npz') {
    const bad = memberError(npyName(fileName));
    if (bad) throw new Error(bad);
    return { arrays: [named(npyName(fileName), read)], skipped: [] };
  }
  const arrays = [];
  const skipped = read.skipped.map((s) => ({ ...s, source: fileName }));
  for (const [name, a] of Object.entries(read.arrays)) {
    if (memberError(name)) skipped.push({ name, source: fileName, ...NOT_A_NAME });
    else arrays.push(named(name, a));
  }
  if (!arrays.length) {
    throw new Error(`no array in it can be loaded: ${skipped.map(skippedText).join(' ')}`);
  }
  return { arrays, skipped };
}

/**
 * A skipped member as the section shows it, one line: "cache (mha_check.npz): skipped — an
 * object array (…); save a dict as its arrays: np.savez('mha_check.npz', **cache)." A name that
 * is not a Python name is quoted, its control characters escaped.
 */
export function skippedText({ name, source, reason, fix }) {
  const s = String(name);
  const shown = MEMBER_RE.test(s) ? s : quoteName(JSON.stringify(s).slice(1, -1));
  return `${shown}${source ? ` (${source})` : ''}: skipped — ${reason}; ${fix}.`;
}

/**
 * The skipped members to show after a drop: `list` without those of the files read again
 * (`fileNames`: a file saved again and dropped again replaces its lines), then `incoming`.
 */
export function addSkipped(list, fileNames, incoming) {
  const again = new Set(fileNames);
  return [...list.filter((s) => !again.has(s.source)), ...incoming];
}

/**
 * `list` with the `incoming` arrays ([{ name, data, shape, dtype, source, resolution? }]) added:
 * an array whose name (in any case) is loaded already replaces it, in its place. Returns
 * { list, replaced: [names] }; `list` itself is not changed.
 */
export function addArrays(list, incoming) {
  const out = [...list];
  const replaced = [];
  for (const a of incoming) {
    const entry = { ...a, key: arrayKey(a.name) };
    const at = out.findIndex((e) => e.key === entry.key);
    if (at >= 0) {
      out[at] = entry;
      replaced.push(a.name);
    } else out.push(entry);
  }
  return { list: out, replaced };
}

/**
 * What a drop replaces that came from another file: one sentence per array (none when a file is
 * dropped again), for `incoming` added to `list` (addArrays). Two lessons' files saved with the
 * course names (X=X in both) lose one X this way; each lesson's own line keeps both.
 */
export function replacedNotices(list, incoming) {
  const seen = new Map(list.map((e) => [e.key, e]));
  const out = [];
  for (const a of incoming) {
    const key = arrayKey(a.name);
    const was = seen.get(key);
    if (was && was.source !== a.source) {
      out.push(
        `${a.name} (${a.source}) replaces ${was.name} (${was.source}): both files name it ${a.name}. To load one lesson’s arrays beside another’s, save each with its lesson’s line (${LESSON_SAVES.lesson1.prefix}X=X, ${LESSON_SAVES.lesson4.prefix}X=X …: step 1 lists them).`,
      );
    }
    seen.set(key, { ...a, key });
  }
  return out;
}

/** `list` without the array of key `key`. */
export function removeArray(list, key) {
  return list.filter((e) => e.key !== key);
}

/**
 * The loaded array of course name `name`: the one of that name in any case, else the first whose
 * name the check reads as it (W_q, attn: see courseName; lesson 1's W_q1, head1_Wq: see
 * lessonName), or null.
 */
export function findArray(list, name) {
  const key = String(name).toLowerCase();
  const named = (e) => courseName(e.name) === name || lessonName(e.name) === name;
  return list.find((e) => e.key === key) ?? list.find(named) ?? null;
}

/**
 * checkNotebook's `arrays` argument: { name: { data, shape, dtype, resolution?, printedDtype? } }
 * (pasted text: its per-entry resolution and the dtype it was computed in).
 */
export function checkArgs(list) {
  const out = {};
  for (const e of list) {
    out[e.name] = { data: e.data, shape: e.shape, dtype: e.dtype };
    if (e.resolution) out[e.name].resolution = e.resolution;
    if (e.printedDtype) out[e.name].printedDtype = e.printedDtype;
  }
  return out;
}

// Whether a (B, h, T, x) array fits X's sizes: x·h = C (split Q, K, V, head outputs) or x = T with
// h dividing C (scores, att and their gradients); any 4-D array when X is not loaded (yet)
function fitsX(e, X) {
  const [B, h, T, x] = e.shape;
  if (!X || (X.shape.length !== 2 && X.shape.length !== 3)) return true;
  const [XB, XT, C] = X.shape.length === 3 ? X.shape : [1, ...X.shape];
  return B === XB && T === XT && (x * h === C || (x === T && C % h === 0));
}

/**
 * The heads the 4-D arrays give (split Q, K, V, head outputs, scores, att and their gradients are
 * all (B, h, T, ·)): { heads, from } from the first one that fits X (an array left from another
 * notebook does not), or null when there is none.
 */
export function inferHeads(list) {
  const X = findArray(list, 'X');
  const split = list.find((e) => e.shape.length === 4 && e.shape[1] >= 1 && fitsX(e, X));
  return split ? { heads: split.shape[1], from: split.name } : null;
}

/** The inputs the check cannot run without that are not loaded: X and the four weights. */
export function missingInputs(mha, list) {
  return ['X', ...weightNames(mha)].filter((n) => !findArray(list, n));
}

/**
 * The inputs the notebook check still needs: missingInputs, less those the file's layout gives
 * (per-head weights WQ_0_h …, a fused qkv, Wo from WO_0: the check's reading of the arrays,
 * adaptLayout from web/check.js, given by the check's section so that this module needs not it).
 */
export function missingForCheck(mha, list, adaptLayout) {
  const { read } = adaptLayout(checkArgs(list), {}).reading;
  return missingInputs(mha, list).filter((n) => !read[n]?.length);
}

const prod = (shape) => shape.reduce((a, b) => a * b, 1);

/** The index (C order) of flat position i in an array of shape `shape`. */
export function unravel(i, shape) {
  const index = new Array(shape.length);
  let rest = i;
  for (let k = shape.length - 1; k >= 0; k--) {
    index[k] = rest % shape[k];
    rest = Math.floor(rest / shape[k]);
  }
  return index;
}

/** Why an input array cannot feed the lessons: a NaN or ∞ entry (null: all finite). */
function finiteError(e) {
  const i = e.data.findIndex((v) => !Number.isFinite(v));
  if (i < 0) return null;
  return `${e.name}[${unravel(i, e.shape).join(', ')}] is ${fmt(e.data[i])}: the lessons need finite numbers.`;
}

/**
 * A loaded array's NaN and ∞ entries, as a notice (null when every entry is finite): the array
 * is loaded and checked as it is, but the lessons cannot run on such inputs.
 */
export function nonFiniteNotice(e) {
  let n = 0;
  let first = -1;
  for (let i = 0; i < e.data.length; i++) {
    if (Number.isFinite(e.data[i])) continue;
    n += 1;
    if (first < 0) first = i;
  }
  if (!n) return null;
  const at = e.shape.length ? `[${unravel(first, e.shape).join(', ')}]` : '';
  return `${e.name} (${e.source}) has ${n} NaN or ∞ ${n === 1 ? 'entry' : 'entries'}, the first ${e.name}${at} = ${fmt(e.data[first])}: it is loaded and checked as it is, but the lessons need finite inputs.`;
}

/** X's sizes: { B, T, C } from (B, T, C) or (T, C), or { error }. */
function xSizes(X) {
  const s = X.shape;
  if (s.length === 3) return { B: s[0], T: s[1], C: s[2] };
  if (s.length === 2) return { B: 1, T: s[0], C: s[1] };
  return { error: `X has shape ${shapeText(s)}: it must be (B, T, C) or (T, C).` };
}

/** The messages for sizes the lessons cannot draw (see CUSTOM_LIMITS). */
function limitErrors({ B, T, C, heads }) {
  const L = CUSTOM_LIMITS;
  const errors = [];
  if (B < 1 || B > L.B) errors.push(`B = ${B}: the lessons draw every batch item, at most ${L.B}.`);
  if (T < 1 || T > L.T) {
    errors.push(`T = ${T}: the lessons take your arrays with 1 to ${L.T} tokens.`);
  }
  if (C < 1 || C > L.C) {
    errors.push(`C = ${C}: the lessons take your arrays with C from 1 to ${L.C}.`);
  }
  if (!Number.isInteger(heads) || heads < 1 || C % heads) {
    errors.push(`heads = ${heads} does not divide C = ${C}: each head gets C / heads columns.`);
  } else if (heads > L.heads) {
    errors.push(`heads = ${heads}: the lessons draw every head, at most ${L.heads}.`);
  }
  return errors;
}

/** An optional (B, T, C) input (dY, target) when loaded with X's number of entries, else null. */
function sameSizeAs(list, name, n) {
  const e = findArray(list, name);
  return e && e.data.length === n ? e : null;
}

/** Checks of the inputs X, Wq…Wo, dY, target for the lessons: the messages, or []. */
function inputErrors(mha, list, dims) {
  const errors = [];
  for (const name of ['X', ...weightNames(mha)]) {
    const e = findArray(list, name);
    if (!e) {
      errors.push(`${name} is not loaded: the lessons need X and Wq, Wk, Wv, Wo.`);
      continue;
    }
    if (name !== 'X' && (e.shape.length !== 2 || e.data.length !== dims.C * dims.C)) {
      errors.push(`${name} has shape ${shapeText(e.shape)}, expected (${dims.C}, ${dims.C}).`);
    }
    const bad = finiteError(e);
    if (bad) errors.push(bad);
  }
  return errors;
}

/**
 * The student's arrays for lessons 3, 4, 5 and the playground, or why they cannot be used:
 * { custom } or { errors: [messages] }. custom = { X (B·T·C), W: { Wq, Wk, Wv, Wo } (C·C),
 * dY (B·T·C), target (T·C: batch item 0), B, T, C, heads, given: { dY, target } }; dY and target
 * are the student's when loaded with X's size, else drawn from default_rng(CUSTOM_SEED): dY =
 * standard_normal((B, T, C)), then target = standard_normal((1, T, C)).
 */
function mainArrays(mha, list, heads) {
  const X = findArray(list, 'X');
  if (!X) return { errors: ['X is not loaded: the lessons need X and Wq, Wk, Wv, Wo.'] };
  const dims = xSizes(X);
  if (dims.error) return { errors: [dims.error] };
  const errors = [...limitErrors({ ...dims, heads }), ...inputErrors(mha, list, dims)];
  const n = dims.B * dims.T * dims.C;
  const dY = sameSizeAs(list, 'dY', n);
  const target = sameSizeAs(list, 'target', n);
  for (const e of [dY, target]) if (e && finiteError(e)) errors.push(finiteError(e));
  if (errors.length) return { errors };
  const W = {};
  for (const k of weightNames(mha)) W[k] = Float64Array.from(findArray(list, k).data);
  const rng = mha.rng(CUSTOM_SEED, COURSE.rng);
  try {
    const drawnDY = rng.standardNormal(n);
    const drawnTarget = rng.standardNormal(dims.T * dims.C);
    const custom = {
      ...dims,
      heads,
      X: Float64Array.from(X.data),
      W,
      dY: dY ? Float64Array.from(dY.data) : drawnDY,
      target: target ? target.data.slice(0, dims.T * dims.C) : drawnTarget,
      given: { dY: !!dY, target: !!target },
      names: [X, ...weightNames(mha).map((k) => findArray(list, k)), dY, target]
        .filter(Boolean)
        .map(savedName),
    };
    return { custom };
  } finally {
    rng.free();
  }
}

/** The sizes of a lesson's X or x within the lessons' limits: { B, T, C } or { errors }. */
function lessonSizes(e) {
  const dims = xSizes(e);
  if (dims.error) return { errors: [dims.error.replace(/^X\b/, e.name)] };
  const errors = limitErrors({ ...dims, heads: 1 });
  return errors.length ? { errors } : dims;
}

/** Shape and finiteness errors of arrays that must all have `shape`. */
function shapeErrors(entries, shape) {
  const errors = [];
  for (const e of entries) {
    if (e.shape.length !== 2 || e.shape[0] !== shape[0] || e.shape[1] !== shape[1]) {
      errors.push(`${e.name} has shape ${shapeText(e.shape)}, expected ${shapeText(shape)}.`);
    } else if (finiteError(e)) errors.push(finiteError(e));
  }
  return errors;
}

/**
 * Lesson 1's part of custom arrays: { part } = { X (T·C, batch item 0), B, T, C, hs, W1, W2
 * ({ Wq, Wk, Wv }, each C·hs), tokens (t0, t1, …) }; { missing: [names] } when X or a head's
 * weight is not loaded (aliases: see lessonName); or { errors } for shapes and values it can't use.
 */
export function lesson1Part(list) {
  const X = findArray(list, 'X');
  const W = LESSON1_NAMES.map((n) => findArray(list, n));
  const missing = [X ? null : 'X', ...LESSON1_NAMES.filter((n, i) => !W[i])].filter(Boolean);
  if (missing.length) return { missing };
  const dims = lessonSizes(X);
  if (dims.errors) return dims;
  const hs = W[0].shape.length === 2 ? W[0].shape[1] : 0;
  const errors = shapeErrors(W, [dims.C, hs]);
  if (hs < 1) errors.unshift(`${W[0].name} has shape ${shapeText(W[0].shape)}, expected (C, hs).`);
  if (finiteError(X)) errors.push(finiteError(X));
  if (errors.length) return { errors };
  const { B, T, C } = dims;
  const w = (i) => Float64Array.from(W[i].data);
  return {
    part: {
      B,
      T,
      C,
      hs,
      X: Float64Array.from(X.data.subarray(0, T * C)),
      W1: { Wq: w(0), Wk: w(1), Wv: w(2) },
      W2: { Wq: w(3), Wk: w(4), Wv: w(5) },
      tokens: positionLabels(T),
      names: [X, ...W].map(savedName),
    },
  };
}

/**
 * Lesson 2's part of custom arrays: { part } = { x (B·T·C), Wq (C·C), B, T, C, heads } from the
 * array named exactly x (lesson 2's, told apart from X by its case) and Wq; `heads` (the check's)
 * when it divides C. { missing: [names] } when x or Wq is not loaded, or { errors }.
 */
export function lesson2Part(list, heads) {
  const x = list.find((e) => e.name === 'x') ?? null;
  const Wq = findArray(list, 'Wq');
  const missing = [x ? null : 'x', Wq ? null : 'Wq'].filter(Boolean);
  if (missing.length) return { missing };
  const dims = lessonSizes(x);
  if (dims.errors) return dims;
  const errors = shapeErrors([Wq], [dims.C, dims.C]);
  if (finiteError(x)) errors.push(finiteError(x));
  if (!Number.isInteger(heads) || heads < 1 || dims.C % heads || heads > CUSTOM_LIMITS.heads) {
    errors.push(`h = ${heads} does not divide C = ${dims.C}: lesson 2 cuts q into h heads.`);
  }
  if (errors.length) return { errors };
  const part = { ...dims, heads, x: Float64Array.from(x.data), Wq: Float64Array.from(Wq.data) };
  return { part: { ...part, names: [x, Wq].map(savedName) } };
}

/** Why a lesson keeps the course's arrays (lesson1Part's or lesson2Part's answer): a sentence. */
function partWhy(which, r) {
  const needs =
    which === 'lesson1'
      ? 'X and the two heads’ weights Wq1, Wk1, Wv1, Wq2, Wk2, Wv2 (each (C, hs))'
      : 'x (B, T, C) and Wq (C, C)';
  const lesson = which === 'lesson1' ? 'Lesson 1' : 'Lesson 2';
  if (r.missing) {
    return `${lesson} shows the course’s arrays: it needs ${needs}; not loaded: ${r.missing.join(', ')}.`;
  }
  return `${lesson} shows the course’s arrays: ${r.errors.join(' ')}`;
}

// ------------------------------------------------------------------------------------------------
// which lesson each loaded array feeds (issue 34): a lesson's own file saves its names with the
// lesson's prefix (LESSON_SAVES: l1_X is lesson 1's X, l4_X lesson 4's), so several lessons'
// files load side by side; a name with no prefix is a course name (the check, a whole layer)

/** The name an array was saved under (a lesson's l4_X; else its name). */
const savedName = (e) => e.saved ?? e.name;

/** The loaded arrays no lesson's prefix claims: the check's and the whole layer's course names. */
export function plainArrays(list) {
  return list.filter((e) => !lessonOf(e.name));
}

/**
 * The arrays lesson `key` reads, each under the name the lesson reads it as (`saved`: the name
 * in the file, l4_X): its own, saved with its prefix, when any is loaded; else the plain ones (a
 * file of course names feeds every lesson, as before lessons had files of their own).
 * Returns { list, own }.
 */
export function lessonArrays(list, key) {
  const own = [];
  for (const e of list) {
    const l = lessonOf(e.name);
    if (l?.lesson === key) own.push({ ...e, name: l.name, key: arrayKey(l.name), saved: e.name });
  }
  return own.length ? { list: own, own: true } : { list: plainArrays(list), own: false };
}

/** "Lesson 4" for 'lesson4'. */
const lessonTitle = (key) => key.replace('lesson', 'Lesson ');

/**
 * What the loaded arrays give each lesson, grouped as the check section lists them: one group a
 * lesson with arrays of its own (in LESSON_KEYS order), then the plain ones. Each group:
 * { lesson (null: plain), arrays: [{ key, saved, name, shape, source }] (name: what the lesson
 * reads it as; null: no lesson reads it), missing: [names it needs, not loaded], unused: [saved
 * names it does not read], feeds: [lesson keys and 'playground' it feeds], text: a sentence }.
 */
export function lessonGroups(list) {
  const owners = LESSON_KEYS.filter((k) => lessonArrays(list, k).own);
  const groups = owners.map((key) => {
    const own = lessonArrays(list, key).list;
    const { names, needs, also } = LESSON_SAVES[key];
    const reads = new Set([...names, ...also]);
    const arrays = own.map((e) => ({ ...e, name: reads.has(e.name) ? e.name : null }));
    const missing = needs.filter((n) => !own.some((e) => e.name === n));
    return { lesson: key, arrays, missing, feeds: [key] };
  });
  const plain = plainArrays(list).map((e) => ({ ...e, saved: e.name }));
  if (plain.length) {
    const feeds = [...LESSON_KEYS.filter((k) => !owners.includes(k)), 'playground'];
    groups.push({ lesson: null, arrays: plain, missing: [], feeds });
  } else if (owners.length) {
    // the playground takes lesson 5's file, else 4's, else 3's (see customArrays)
    const pg = ['lesson5', 'lesson4', 'lesson3'].find((k) => owners.includes(k));
    groups.find((g) => g.lesson === pg)?.feeds.push('playground');
  }
  return groups.map((g) => ({ ...g, unused: unusedOf(g), text: groupText(g) }));
}

const unusedOf = (g) => g.arrays.filter((e) => e.name === null).map((e) => e.saved);

/**
 * A group's sentence: "Lesson 4 (lesson4.npz): l4_X read as X, …, l4_dY as dY; still needed: Wo;
 * not read: l4_foo." or, for the plain ones, "Course names (mha_check.npz): the check's, and
 * lessons 3, 5 and the playground's, which have no file of their own here."
 */
function groupText(g) {
  const files = [...new Set(g.arrays.map((e) => e.source))].join(', ');
  const parts = [];
  if (g.lesson) {
    const read = g.arrays.filter((e) => e.name !== null);
    const pairs = read.map((e, i) => `${e.saved} ${i === 0 ? 'read as' : 'as'} ${e.name}`);
    const also = g.feeds.includes('playground') ? ' (and the playground)' : '';
    parts.push(`${lessonTitle(g.lesson)}${also} (${files}): ${pairs.join(', ') || 'nothing read'}`);
    const { names } = LESSON_SAVES[g.lesson];
    const optional = names.filter((n) => !g.arrays.some((e) => e.name === n));
    const needed = g.missing.length ? g.missing : null;
    if (needed) parts.push(`still needed: ${needed.join(', ')}`);
    else if (optional.length) parts.push(`not given, the page’s used: ${optional.join(', ')}`);
  } else {
    const feeds = g.feeds.map((k) => (k === 'playground' ? k : k.replace('lesson', ''))).join(', ');
    parts.push(`Course names (${files}): the check’s, and what lessons ${feeds} use`);
  }
  const unused = unusedOf(g);
  if (unused.length) parts.push(`not read by ${lessonTitle(g.lesson)}: ${unused.join(', ')}`);
  return `${parts.join('; ')}.`;
}

/** Why lesson `key` (3, 4 or 5) keeps the course's arrays: a sentence. */
function mainWhy(mha, key, r, list) {
  const title = lessonTitle(key);
  if (r.own) return `${title} shows the course’s arrays: ${r.main.errors.join(' ')}`;
  const missing = missingInputs(mha, list);
  const what = missing.length
    ? `no file of its own (${lessonSaveLine(key)}) and, with course names, not loaded: ${missing.join(', ')}.`
    : r.main.errors.join(' ');
  return `${title} shows the course’s arrays: ${what}`;
}

/** Lessons 3, 4 and 5 take the whole layer's inputs; the playground lesson 5's, 4's or 3's. */
const MAIN_LESSONS = Object.freeze(['lesson3', 'lesson4', 'lesson5']);

/**
 * The student's arrays for the lessons, or why none can be used: { custom } or { errors:
 * [messages] }. Each lesson reads its own file's arrays (saved with its prefix, l4_X …) when any
 * is loaded, else the course names (lessonArrays). custom = { main, lesson1 … lesson5, playground,
 * why } and, with main, the playground's arrays at the top as before: { X (B·T·C), W: { Wq, Wk,
 * Wv, Wo } (C·C), dY (B·T·C), target (T·C: batch item 0), B, T, C, heads, given: { dY, target },
 * training }; dY and target are the student's when loaded with X's size, else drawn from
 * default_rng(CUSTOM_SEED): dY = standard_normal((B, T, C)), then target = standard_normal((1, T,
 * C)); training: lesson 5's run (lesson5Run). lesson1, lesson2: lesson1Part's and lesson2Part's
 * part, or null; lesson3, lesson4, lesson5, playground: the same fields as the top for that
 * section (with main: true), or null. The playground takes the course names, else lesson 5's
 * file, else 4's, else 3's. why: { lesson1 … lesson5, main }: why a lesson keeps the course's
 * arrays (null: it uses yours; main: the playground's).
 */
export function customArrays(mha, list, heads) {
  const from = Object.fromEntries(LESSON_KEYS.map((k) => [k, lessonArrays(list, k)]));
  const l1 = lesson1Part(from.lesson1.list);
  const l2 = lesson2Part(from.lesson2.list, heads);
  const m = mainSections(mha, list, from, heads);
  if (!m.playground && !l1.part && !l2.part) {
    const own = MAIN_LESSONS.filter((k) => m.mains[k].own);
    const main = own.length
      ? own.map((k) => `${lessonTitle(k)}: ${m.mains[k].main.errors.join(' ')}`)
      : m.plainMain.errors;
    return { errors: [...main, ...(l1.errors ?? []), ...(l2.errors ?? [])] };
  }
  const why = {
    main: m.playground ? null : plainWhy(mha, m),
    lesson1: l1.part ? null : partWhy('lesson1', l1),
    lesson2: l2.part ? null : partWhy('lesson2', l2),
  };
  // with no lesson file for lessons 3-5, each says why as they all did before lessons had files
  const anyOwn = MAIN_LESSONS.some((k) => m.mains[k].own);
  for (const k of MAIN_LESSONS) {
    if (m.sections[k]) why[k] = null;
    else why[k] = anyOwn ? mainWhy(mha, k, m.mains[k], m.plain) : plainWhy(mha, m);
  }
  const parts = {
    lesson1: l1.part ?? null,
    lesson2: l2.part ?? null,
    ...m.sections,
    playground: m.playground,
    why,
  };
  if (!m.playground) return { custom: { main: false, ...parts } };
  return { custom: { ...m.playground, ...parts } };
}

/** Why lessons 3-5 and the playground keep the course's arrays (no file feeds any of them). */
function plainWhy(mha, { plain, plainMain }) {
  const missing = missingInputs(mha, plain);
  const why = missing.length
    ? `they need X and Wq, Wk, Wv, Wo; not loaded: ${missing.join(', ')}.`
    : plainMain.errors.join(' ');
  return `Lessons 3, 4, 5 and the playground show the course’s arrays: ${why}`;
}

/**
 * Lessons 3-5's and the playground's arrays: { plain, plainMain (mainArrays of the course
 * names), mains: { lesson3 …: { main, own, list } }, sections: { lesson3 …: section or null },
 * playground }.
 * A section: mainArrays' custom, main: true, and a run (lesson5Run) from lesson 5's file or the
 * course names (a lesson 3 or 4 file has no lr or steps: null).
 */
function mainSections(mha, list, from, heads) {
  const plain = plainArrays(list);
  const plainMain = mainArrays(mha, plain, heads);
  const section = (m, run) => {
    if (!m.main.custom) return null;
    const training = run ? lesson5Run(mha, m.list, m.main.custom) : null;
    return { ...m.main.custom, main: true, training };
  };
  const plainSection = section({ main: plainMain, list: plain }, true);
  const mains = {};
  const sections = {};
  for (const k of MAIN_LESSONS) {
    const main = from[k].own ? mainArrays(mha, from[k].list, heads) : plainMain;
    mains[k] = { main, own: from[k].own, list: from[k].list };
    sections[k] = from[k].own ? section(mains[k], k === 'lesson5') : plainSection;
  }
  const pgFrom = plainSection ? null : ['lesson5', 'lesson4', 'lesson3'].find((k) => sections[k]);
  const playground = pgFrom ? sections[pgFrom] : plainSection;
  return { plain, plainMain, mains, sections, playground };
}

/**
 * The arrays section `key` (lesson1 … lesson5, playground) computes from, of customArrays' custom
 * (null: none loaded): its own entry, or null where it shows the course's.
 */
export function sectionArrays(custom, key) {
  if (!custom) return null;
  if (key in custom) return custom[key] ?? null;
  return custom.main ? custom : null;
}

/**
 * Lesson 5's run from the student's file (studentRun): the lr and steps saved, else found from
 * the losses or Wq_after, else the page's (LESSON5_DEFAULTS), within MAX_LR and MAX_STEPS.
 */
export function lesson5Run(mha, list, custom) {
  const limits = { maxLr: MAX_LR, maxSteps: MAX_STEPS, ...LESSON5_DEFAULTS };
  return studentRun(mha, checkArgs(list), customModel(custom), limits);
}

/** Lessons 3 and 4's data from custom arrays: { X, W, dY, B, T, C, heads } (as courseData). */
export function lessonData(custom) {
  const { X, W, dY, B, T, C, heads } = custom;
  return { X, W, dY, B, T, C, heads };
}

/**
 * Lesson 5's and the playground's model (as sentenceModel's) from custom arrays: batch item 0 of
 * X, the weights, the target; tokens are positions t0, t1, … (each its own "word").
 */
export function customModel(custom, { causal = false } = {}) {
  const { T, C, heads } = custom;
  const tokens = positionLabels(T);
  return Object.freeze({
    tokens,
    C,
    heads,
    hs: C / heads,
    seed: null,
    rng: null,
    pe: false,
    causal,
    T,
    X: custom.X.slice(0, T * C),
    vocab: tokens,
    ids: tokens.map((_, t) => t),
    W: Object.freeze({ ...custom.W }),
    target: custom.target,
    custom: true,
  });
}

/**
 * The playground's view of custom arrays (as playgroundForward's): the model of batch item 0 and
 * its forward pass with the settings' causal mask: { model, att (1, h, T, T), Y (1, T, C) }.
 */
export function customForward(mha, custom, { causal = false } = {}) {
  const model = customModel(custom, { causal });
  const { attention: att, Y } = withLayer(mha, model.C, model.heads, model.W, (layer) =>
    layer.forward(model.X, { B: 1, T: model.T, causal }),
  );
  return { model, att, Y };
}

/** The limits of CUSTOM_LIMITS in words: "T ≤ 64, C ≤ 128, at most 4 batch items and 16 heads". */
export function customLimitsText(L = CUSTOM_LIMITS) {
  return `T ≤ ${L.T}, C ≤ ${L.C}, at most ${L.B} batch items and ${L.heads} heads`;
}

/** The sizes line of custom arrays: "B = 2, T = 6, C = 64, h = 4 (hs = 16)". */
export function customSizesText({ B, T, C, heads }) {
  return `B = ${B}, T = ${T}, C = ${C}, h = ${heads} (hs = ${C / heads})`;
}

/**
 * Entries per tensor of a gradient check at these sizes: 0 (every entry) when a full check takes
 * about as long as lesson 4's at course size, else a sample (`samples` entries per tensor).
 */
export function checkSamples(mha, { B = 1, T, C, heads }, samples = 32) {
  const small = B * T * C * C <= 16 * 64 * 64 && gradcheckSize(mha, { B, T, C, heads }) <= 25000;
  return small ? 0 : samples;
}

/**
 * The (rows, cols) matrix of an array of `shape` shown for batch item b and head h: 2-D as is;
 * 3-D (B, T, ·) at [b]; 4-D (B, h, T, ·) at [b, h]; 1-D as one row; a scalar as 1 × 1; more axes:
 * the last two at the first index of the others. Returns { data, rows, cols, where }.
 */
export function matrixView(data, shape, b = 0, h = 0) {
  const s = shape;
  if (s.length === 0) return { data, rows: 1, cols: 1, where: '' };
  if (s.length === 1) return { data, rows: 1, cols: s[0], where: '' };
  const rows = s[s.length - 2];
  const cols = s[s.length - 1];
  if (s.length === 2) return { data, rows, cols, where: '' };
  const bb = Math.min(b, s[0] - 1);
  if (s.length === 3) return { data: block2d(data, bb, rows, cols), rows, cols, where: `[${bb}]` };
  const hh = Math.min(h, s[1] - 1);
  const index = bb * prod(s.slice(1, -2)) + hh * prod(s.slice(2, -2));
  return { data: block2d(data, index, rows, cols), rows, cols, where: `[${bb}, ${hh}]` };
}

/**
 * yours − expected of a compared row, entry by entry; entries equal as numbers or both the same
 * infinity (masked scores: −∞ in both) give 0. Returns { data, maxAbs (finite entries) }.
 */
export function difference(row) {
  const d = new Float64Array(row.yours.length);
  let m = 0;
  for (let i = 0; i < d.length; i++) {
    const a = row.yours[i];
    const e = row.expected[i];
    d[i] = a === e ? 0 : a - e;
    if (Number.isFinite(d[i]) && Math.abs(d[i]) > m) m = Math.abs(d[i]);
  }
  return { data: d, maxAbs: m };
}

/** Two numbers with just enough significant digits (4 to 17) to tell them apart. */
export function distinctPair(a, b) {
  for (let digits = 4; digits < 17; digits++) {
    const [x, y] = [fmt(a, digits), fmt(b, digits)];
    if (x !== y || Object.is(a, b)) return [x, y];
  }
  return [String(a), String(b)];
}

/** 'att[0, 1, 2, 3]: yours 0.1234, expected 0.2345' for a row's first differing entry, or ''. */
export function firstDifferenceText(row) {
  if (!row.first) return '';
  const [y, e] = distinctPair(row.first.yours, row.first.expected);
  const at = row.first.index.length ? `[${row.first.index.join(', ')}]` : ''; // a scalar: none
  return `${row.name}${at}: yours ${y}, expected ${e}`;
}

/** A status's text (symbol + words: never colour alone). */
export const STATUS_TEXT = Object.freeze({
  match: '✓ matches',
  differs: '✗ differs',
  shape: '✗ wrong shape',
  missing: '– not given',
});

/** Whether a differing row's diagnosis says it only follows from an earlier one. */
export const followsOn = (r) => r.status === 'differs' && r.diagnosis?.id === 'follows-from';

/**
 * The rows to look at first: wrong shapes, and differing rows with a mistake of their own (any
 * diagnosis but "follows from"), in the course's order.
 */
export function rootCauses(rows) {
  return rows.filter((r) => r.status === 'shape' || (r.status === 'differs' && !followsOn(r)));
}

/** k as the page prints a factor: at most 6 significant digits (0.25, 0.176777). */
export const factorNumber = (k) => fmt(Number(k.toPrecision(6)), 6);

/** The factor of a diagnosis (yours = k × expected), or null when it has none. */
export const diagnosisFactor = (d) => (Number.isFinite(d?.factor) ? d.factor : null);

// Diagnoses that name no cause: nothing reproduces the array, or only what was measured is said
const NO_CAUSE = new Set(['step-differs', 'attention-invariant', 'measured']);

/**
 * A few words for what is wrong with a root row (never its diagnosis id): "wrong shape",
 * "yours = 0.25 × expected", "no known mistake reproduces it", "what was measured is in its row",
 * "its cause is named in its row".
 */
function rootWords(r) {
  if (r.status === 'shape') return 'wrong shape';
  const d = r.diagnosis;
  const k = diagnosisFactor(d);
  if (k !== null) return `yours = ${factorNumber(k)} × expected`;
  if (!d || d.id === 'step-differs') return 'no known mistake reproduces it';
  if (NO_CAUSE.has(d.id) || d.measured) return 'what was measured is in its row';
  return 'its cause is named in its row';
}

/**
 * "Where to look first: att (its cause is named in its row), dK (wrong shape). 16 other
 * differences follow from them." (null when nothing differs). Words only: diagnosis ids stay out.
 */
export function rootCauseText(rows) {
  const roots = rootCauses(rows);
  if (!roots.length) return null;
  let text = `Where to look first: ${roots.map((r) => `${r.name} (${rootWords(r)})`).join(', ')}.`;
  const rest = rows.filter(followsOn).length;
  if (rest) {
    const them = roots.length === 1 ? 'it' : 'them';
    text += ` ${rest} other ${rest === 1 ? 'difference follows' : 'differences follow'} from ${them}.`;
  }
  return text;
}

/**
 * A diagnosis message in words: an id quoted inside it ("with the same weights-transposed as
 * your Q") becomes "the same mistake".
 */
export function diagnosisText(d) {
  return String(d?.message ?? '').replace(
    /\bthe same [a-z0-9]+(?:-[a-z0-9]+)+ as your\b/g,
    'the same mistake as your',
  );
}

/**
 * "12 match, 1 differs, 1 wrong shape, 7 not given" for a result's rows; counts.checked: the rows
 * compared entry by entry (match or differs).
 */
export function statusSummary(rows) {
  const n = { match: 0, differs: 0, shape: 0, missing: 0 };
  for (const r of rows) n[r.status] = (n[r.status] ?? 0) + 1;
  const parts = [`${n.match} match`];
  if (n.differs) parts.push(`${n.differs} ${n.differs === 1 ? 'differs' : 'differ'}`);
  if (n.shape) parts.push(`${n.shape} with the wrong shape`);
  if (n.missing) parts.push(`${n.missing} not given`);
  const counts = { ...n, checked: n.match + n.differs };
  return { counts, text: `${parts.join(', ')} (of ${rows.length}).` };
}

/**
 * The status line after a check: how many arrays were compared entry by entry (not the inputs,
 * not the ones not given or of another shape), of how many loaded.
 */
export function checkedText(rows, loaded) {
  const n = statusSummary(rows).counts.checked;
  const arrays = `${n} ${n === 1 ? 'array' : 'arrays'}`;
  return `Checked ${arrays} of the ${loaded} loaded: the results with a course name and an accepted shape (X, the weights, dY and target are inputs).`;
}

// ------------------------------------------------------------------------------------------------
// the tolerance rules

/**
 * A tolerance text without its numbers ("float64: 1e-10 × max|expected|"): the row's rule (a
 * scalar's "|expected|" is its max|expected|: the same rule).
 */
export function toleranceRule(text) {
  return String(text)
    .replace(/\s*=\s*[^\s+;]+/g, '')
    .replace(/\s*\(up to [^)]*\)/g, '')
    .replace(/× \|expected\|/g, '× max|expected|')
    .trim();
}

/**
 * The distinct rules of the compared rows' tolerances, each once, in row order: { rules: [text],
 * ruleOf: Map(row name -> index in rules) }.
 */
export function toleranceRules(rows) {
  const rules = [];
  const ruleOf = new Map();
  for (const r of rows) {
    const text = r.compared ? String(r.tolerance?.text ?? '') : '';
    if (!text || r.tolerance?.abs == null) continue;
    const rule = toleranceRule(text);
    if (!rules.includes(rule)) rules.push(rule);
    ruleOf.set(r.name, rules.indexOf(rule));
  }
  return { rules, ruleOf };
}

// ------------------------------------------------------------------------------------------------
// the maps of a differing row: yours, expected, yours − expected, yours / expected

// The results whose (B, T, C) form holds the heads side by side, hs columns each (names.js)
const HEAD_COLUMNS = new Set(HEAD_COLUMN_NAMES);

/** The width of a head block when a row's columns are head blocks (a (B, T, C) form), else 0. */
export function headBlockWidth(row, { C, heads, hs }) {
  const s = row.expectedShape ?? [];
  const btc = s.length >= 2 && s[s.length - 1] === C && s.length <= 3;
  return HEAD_COLUMNS.has(row.name) && btc && heads > 1 ? hs : 0;
}

/** Entry i of a row is not compared: a masked score (expected −∞ under the causal mask). */
const maskedAt = (row, i) => row.name === 'scores' && row.expected[i] === -Infinity;

/**
 * The entries that are not numbers in a differing row, outside masked scores and where yours and
 * expected are not the same value: { yours: { nan, inf }, expected: { nan, inf } }.
 */
export function nonFiniteCounts(row) {
  const out = { yours: { nan: 0, inf: 0 }, expected: { nan: 0, inf: 0 } };
  for (let i = 0; i < row.yours.length; i++) {
    const y = row.yours[i];
    const e = row.expected[i];
    if (maskedAt(row, i) || y === e || (Number.isNaN(y) && Number.isNaN(e))) continue;
    if (!Number.isFinite(y)) out.yours[Number.isNaN(y) ? 'nan' : 'inf'] += 1;
    else if (!Number.isFinite(e)) out.expected[Number.isNaN(e) ? 'nan' : 'inf'] += 1;
  }
  return out;
}

/** "3 NaN and 1 infinite entries" ('' when both are 0). */
function nonFiniteWords({ nan, inf }) {
  const parts = [];
  if (nan) parts.push(`${nan} NaN`);
  if (inf) parts.push(`${inf} infinite`);
  if (!parts.length) return '';
  return `${parts.join(' and ')} ${nan + inf === 1 ? 'entry' : 'entries'}`;
}

/**
 * The header of a row's yours − expected map, agreeing with the table's max abs error:
 * "yours has 3 NaN and 1 infinite entries; max |yours − expected| over the finite ones = 0.02;
 * colours symmetric, −0.02 to +0.02" (without non-finite entries: "max |yours − expected| = …").
 */
export function diffHeader(row, maxAbs) {
  const n = nonFiniteCounts(row);
  const said = [];
  if (nonFiniteWords(n.yours)) said.push(`yours has ${nonFiniteWords(n.yours)}`);
  if (nonFiniteWords(n.expected)) said.push(`the expected has ${nonFiniteWords(n.expected)}`);
  const m = fmt(maxAbs, 3);
  const max = said.length
    ? `max |yours − expected| over the finite ones = ${m}`
    : `max |yours − expected| = ${m}`;
  return [...said, max, `colours symmetric, −${m} to +${m}`].join('; ');
}

/**
 * The maps of a differing row, over the whole arrays (matrixView then picks a batch item and a
 * head): yours − expected as difference(), its blank entries (masked scores, not compared), the
 * largest |finite entry| of yours and expected (their shared scale) and, with a factor, yours /
 * expected with its blank entries (expected 0, or masked). Returns { diff, diffMax, blank, scale,
 * ratio?: { data, blank, factor } }.
 */
export function rowMaps(row) {
  const d = difference(row);
  const n = row.yours.length;
  const blank = new Uint8Array(n);
  let scale = 0;
  for (let i = 0; i < n; i++) {
    if (maskedAt(row, i)) blank[i] = 1;
    for (const v of [row.yours[i], row.expected[i]]) {
      if (Number.isFinite(v) && Math.abs(v) > scale) scale = Math.abs(v);
    }
  }
  const out = { diff: d.data, diffMax: d.maxAbs, blank, scale };
  const k = diagnosisFactor(row.diagnosis);
  if (k === null) return out;
  const ratio = new Float64Array(n);
  const ratioBlank = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    ratioBlank[i] = blank[i] || row.expected[i] === 0 ? 1 : 0;
    ratio[i] = ratioBlank[i] ? NaN : row.yours[i] / row.expected[i];
  }
  return { ...out, ratio: { data: ratio, blank: ratioBlank, factor: k } };
}

/**
 * The np.savez lines for lesson 5's class MultiHeadAttention, the course's or the page's
 * (web/model/numpy-scripts.js): one forward and backward at the layer's current weights (its
 * cache and gradients then belong to them), then every array the layer holds, as attributes (the
 * course's class: layer.Wq, layer.q, layer.att, layer.dWq …) or in dicts (the page's: layer.W,
 * layer.cache, layer.grads; a name two dicts share, params and grads both holding W_q, is
 * saved the second time under its dict's name, grads.W_q, never over the first), and the
 * target.
 */
export const LAYER_SAVE_LINE = [
  'Y = layer.forward(X); layer.backward(2 * (Y - target) / Y.size)',
  'arrays = {k: v for k, v in vars(layer).items() if isinstance(v, np.ndarray)}',
  'for name, d in vars(layer).items():',
  '    for k, v in (d.items() if isinstance(d, dict) else ()):',
  "        if isinstance(v, np.ndarray): arrays[f'{name}.{k}' if k in arrays else k] = v",
  "np.savez('mha_check.npz', **arrays, target=target)",
].join('\n');
