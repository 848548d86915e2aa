// edits.js - the search over edits of the course's program (program.js) for a student's array:
// every single edit of the step that computes it, and of the steps before it the student did not
// save, then one edit at several of those steps together, then two edits in the step, each run
// through the layer's graph (pipeline.js) from the student's own arrays; an edit is a cause only
// when it gives their array back within the row's tolerance. The catalogue names the edits that
// are known mistakes (catalogue.js: recordOf).
//
//   findEdits(pipe, node, yours, opts)   [{ site, edit, variant, param, extra, parts }]
//   editMessage(hits, ctx)               the row's diagnosis { id, message } (no record names it)
//   namedEdit(site, s, accept)           the first edit of site's step `accept` takes

import { agrees } from './compare.js';
import { isAre } from './analyses/layout.js';
import {
  PROGRAM_NODES,
  constantWhy,
  editsOf,
  likeness,
  print,
  printLine,
  program,
  reads,
  run,
  shapeOf,
} from './program.js';

// the most edits tried for one row (each is one recomputation of a few steps)
const MAX_TRIED = 4000;
// the most entries of a step a search recomputes (beyond, the search is skipped)
const MAX_ENTRIES = 2e5;
// the most sets of sites one change is tried at together
const MAX_SETS = 2000;
// the most pairs of edits tried in the differing step itself
const MAX_PAIRS = 8000;
// the most work of one recomputation (B·T·C·C, a projection's multiply-adds) for the search of
// single edits, and for pairs: one edit costs about one step in JavaScript, so a layer of C = 256,
// T = 32 would take seconds on the page's thread (the course's B = 2, T = 6, C = 64: 49,152)
const MAX_WORK = 6e5;
const MAX_PAIR_WORK = 2e5;

/** Whether the edit search runs at sizes s (else the row says what was measured). */
export const searchable = (s) =>
  s.n <= MAX_ENTRIES && s.B * s.heads * s.T * s.T <= MAX_ENTRIES && s.n * s.C <= MAX_WORK;

// node's value as a tensor of its shape
const asTensor = (node, data, s) => ({ data, shape: shapeOf(node, s) });

/** The nodes in scope before node's step: the inputs and every earlier result, in order. */
function scopeOf(pipe, node) {
  const before = PROGRAM_NODES.slice(0, PROGRAM_NODES.indexOf(node)).filter((n) => pipe.nodes[n]);
  return [...pipe.inputs, ...before.filter((n) => !pipe.inputs.has(n))];
}

// site's statements with what their edits need: { statements, names (the arrays in scope an
// operand may become), env (those and what the statements read, as tensors) }; null: no program
function siteProgram(pipe, site) {
  const s = pipe.s;
  const statements = program(site, s);
  if (!statements) return null;
  const names = scopeOf(pipe, site).filter((n) => shapeOf(n, s));
  const env = {};
  for (const n of new Set([...names, ...reads(statements)])) {
    env[n] = asTensor(n, pipe.value(n), s);
  }
  return { statements, names, env };
}

function* editsAtSite(pipe, site) {
  const at = siteProgram(pipe, site);
  if (at) yield* editsOf(at.statements, pipe.s, at.env, at.names);
  yield* maskAdded(site, pipe.s);
}

// The causal mask a layer that is not causal does not have, added: to the scores (in place), or
// before the softmax (att); filled with -inf or with the -1e9 many notebooks use
function* maskAdded(site, s) {
  if (s.causal || (site !== 'att' && site !== 'scores')) return;
  const scores = { op: 'name', name: 'scores' };
  for (const fill of [-Infinity, -1e9]) {
    const mask = (a) => ({ op: 'mask', a, fill, k: 1, lower: false });
    const [first, ...rest] = program(site, s);
    const statements =
      site === 'att'
        ? [{ name: 'scores', expr: mask(scores), local: true }, first, ...rest]
        : [{ ...first, expr: mask(first.expr) }];
    const original = site === 'att' ? { name: 'scores', expr: scores } : first;
    const before = original.expr;
    const after = statements[0].expr;
    yield {
      kind: 'mask',
      statements,
      at: 'scores',
      before,
      after,
      index: 0,
      original,
      added: true,
    };
  }
}

// An edit as a mistake the pipeline can switch on at its site: its statements run on the arrays
// they read (the step's parents and any other array in scope: `reads`)
export function editVariant(edit, site, s) {
  const shape = shapeOf(site, s);
  return {
    id: edit.pair ? 'edit-pair' : `edit-${edit.kind}`,
    reads: reads(edit.statements).filter((n) => shapeOf(n, s)),
    fn: (p) => {
      const value = run(edit.statements, tensors(p, s), s);
      const same =
        value.shape.length === shape.length && value.shape.every((d, i) => d === shape[i]);
      if (!same) throw new RangeError(`${site}: not its shape`);
      return value.data;
    },
    what: () => printLine(edit.statements[edit.index]),
  };
}

/**
 * The edits at node (the differing result) and at the steps before it the student did not save,
 * nearest first, that reproduce `yours` (the row's compare options): [{ site, edit, variant,
 * param, extra, parts }] for the nearest site with any (several when edits give the same
 * numbers), else one change made at several of those steps together (Q and K both split without
 * the transpose), else two changes in node's own step. `extra`: the choices (site -> { variant,
 * param }) the hit switches on; `parts`: its [{ site, edit }]. The list's `searched` is false when
 * the search was skipped (the layer too large, too many edits). opts.pairs = false: no pairs.
 */
export function findEdits(pipe, node, yours, opts) {
  const hits = searchEdits(pipe, node, yours, opts);
  return Object.assign(hits ?? [], { searched: hits !== null });
}

// the hits, or null when the search was not run to its end (too large, too many edits)
function searchEdits(pipe, node, yours, opts) {
  const s = pipe.s;
  if (!searchable(s)) return null;
  const trial = { tried: 0, sets: 0, pipe, node, yours, opts };
  const bySite = new Map();
  for (const site of [node, ...pipe.hiddenAncestors(node)]) {
    const hits = [];
    const edits = [...editsAtSite(pipe, site)].filter((edit) => !dropsOwnMask(pipe, edit));
    bySite.set(site, edits);
    for (const edit of edits) {
      if (++trial.tried > MAX_TRIED) return null;
      const hit = tryEdit(trial, [[site, edit]]);
      if (hit) hits.push(hit);
    }
    if (hits.length) return hits;
  }
  const together = sameAtSeveral(trial, bySite);
  if (together === null) return null;
  if (together) return [together];
  if (opts.pairs === false) return [];
  // two changes in the step itself, where one does not suffice
  if (s.n * s.C > MAX_PAIR_WORK) return null;
  let pairs = 0;
  const at = siteProgram(pipe, node);
  for (const edit of at ? pairsOf(at.statements, s, at.env, at.names) : []) {
    if (dropsOwnMask(pipe, edit.first) || dropsOwnMask(pipe, edit.second)) continue;
    if (++pairs > MAX_PAIRS) break;
    const hit = tryEdit(trial, [[node, edit]]);
    if (hit) return [hit];
  }
  return [];
}

// One change made at two or more of the sites together (edits of one likeness: Wq.T at Q and
// Wk.T at K): the first set that reproduces, false when none does, null past the bound of work
function sameAtSeveral(trial, bySite) {
  for (const list of likeGroups(bySite)) {
    for (const set of siteSets(list)) {
      if (++trial.sets > MAX_SETS) return null;
      const hit = tryEdit(trial, set);
      if (hit) return hit;
    }
  }
  return false;
}

/**
 * The edits of bySite (Map site -> [edit]) grouped by likeness (`key`: the same change at like
 * places), one edit per site: [[[site, edit]]] (pairs and replaced operands left out).
 */
export function likeGroups(bySite, key = likenessKey) {
  const groups = new Map();
  for (const [site, edits] of bySite) {
    for (const edit of edits) {
      if (edit.pair || edit.kind === 'operand') continue;
      const k = key(edit);
      if (!groups.has(k)) groups.set(k, []);
      const list = groups.get(k);
      if (!list.some(([other]) => other === site)) list.push([site, edit]);
    }
  }
  return [...groups.values()];
}
const likenessKey = (edit) =>
  `${likeness(edit.kind, edit.before, edit.after)}|${edit.everywhere ?? 1}`;

// The sets of two or more sites to try one change at together: every subset of up to three
// sites, smaller first; of more, all of them and the projections (or splits) Q, K, V
function siteSets(list) {
  if (list.length < 2) return [];
  if (list.length > 3) {
    const qkv = list.filter(([site]) => /^[QKV]m?$/.test(site));
    return qkv.length > 1 && qkv.length < list.length ? [list, qkv] : [list];
  }
  const sets = [];
  for (let mask = 1; mask < 1 << list.length; mask++) {
    const set = list.filter((_, i) => mask & (1 << i));
    if (set.length >= 2) sets.push(set);
  }
  return sets.sort((a, b) => a.length - b.length);
}

// The mask dropped is no cause when the student's own scores hold -inf: they mask in their
// scores step, and their att is the softmax of it as the course's is
function dropsOwnMask(pipe, edit) {
  if (edit.kind !== 'mask' || edit.to?.op === 'mask') return false;
  const given = pipe.given.get('scores');
  return given != null && given.some((x) => x === -Infinity);
}

/**
 * The hit (as findEdits gives them) when the edits `parts` ([[site, edit]]) made together give
 * `yours` back at node (the row's compare options), else null.
 */
export const editHit = (pipe, node, yours, opts, parts) =>
  tryEdit({ tried: 0, pipe, node, yours, opts }, parts);

// The hit when the edits (parts: [[site, edit]]) give the student's array back, else null
function tryEdit(trial, parts) {
  const { pipe, node, yours, opts } = trial;
  const extra = new Map();
  for (const [site, edit] of parts) {
    const param = `${site}:${edit.kind}:${++trial.tried}`;
    extra.set(site, { variant: editVariant(edit, site, pipe.s), param });
  }
  let mine;
  try {
    mine = pipe.step(node, extra);
  } catch {
    return null; // NumPy would refuse this edit at these sizes
  }
  if (mine.length !== yours.length || !agrees(yours, mine, opts)) return null;
  const [[site, edit]] = parts;
  const { variant, param } = extra.get(site);
  return {
    site,
    edit,
    variant,
    param,
    extra,
    parts: parts.map(([at, e]) => ({ site: at, edit: e })),
  };
}

// Every pair of edits of a step's statements: the second made on the first's statements
function* pairsOf(statements, s, env, names) {
  for (const first of editsOf(statements, s, env, names)) {
    let seconds;
    try {
      seconds = editsOf(first.statements, s, env, names);
    } catch {
      continue; // the first edit is refused by NumPy at these sizes
    }
    for (const second of seconds) {
      if (printLine(second.statements[second.index]) === printLine(statements[second.index])) {
        continue; // the second undoes the first
      }
      const original = statements[second.index];
      yield {
        ...second,
        kind: `${first.kind}+${second.kind}`,
        first,
        second,
        original,
        pair: true,
      };
    }
  }
}

/**
 * The first edit of site's step at sizes s that `accept` takes (the catalogue's name for it):
 * single edits, the mask added, then pairs; null when none is. The step's arrays are zeros (the
 * edits depend on their shapes only).
 */
export function namedEdit(site, s, accept) {
  const at = shapedProgram(site, s);
  if (!at) return null;
  const { statements, env, names } = at;
  for (const edit of [...editsOf(statements, s, env, names), ...maskAdded(site, s)]) {
    if (accept(edit)) return edit;
  }
  for (const edit of pairsOf(statements, s, env, names)) if (accept(edit)) return edit;
  return null;
}

// site's statements with the arrays in scope as zeros of their shapes (an edit needs their
// shapes only): { statements, env, names }, or null
function shapedProgram(site, s) {
  const statements = program(site, s);
  if (!statements) return null;
  const earlier = PROGRAM_NODES.slice(0, Math.max(PROGRAM_NODES.indexOf(site), 0));
  const names = [...new Set([...INPUTS, ...earlier])].filter((n) => n !== site && shapeOf(n, s));
  const env = {};
  for (const n of new Set([...names, ...reads(statements)])) {
    const shape = shapeOf(n, s);
    if (shape) env[n] = { data: new Float64Array(shape.reduce((a, b) => a * b, 1)), shape };
  }
  return { statements, env, names };
}

/** The single edits of site's step at sizes s (for a replay that has no array of the step). */
export function programEdits(site, s) {
  const at = shapedProgram(site, s);
  return at ? [...editsOf(at.statements, s, at.env, at.names), ...maskAdded(site, s)] : [];
}
const INPUTS = ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', 'dY'];

const tensors = (p, s) =>
  Object.fromEntries(Object.entries(p).map(([n, data]) => [n, asTensor(n, data, s)]));

/** The kinds of edit the search tries, each with what it changes (the catalogue's records). */
export const EDIT_KINDS = Object.freeze({
  operand: 'another array as an operand',
  'operands-swapped': 'the operands of @ swapped',
  'transpose-added': 'a transpose the course does not have',
  'transpose-dropped': 'a transpose left out',
  'transpose-axes':
    'a transpose over other axes: x.T on an array of three or more axes reverses them all',
  'reshape-without-transpose': 'a reshape without its transpose',
  axis: 'a reduction over another axis',
  keepdims: 'keepdims changed in a reduction',
  'term-dropped': 'a term or factor left out',
  'term-added': 'an array added to the result',
  sign: 'a sign changed',
  inverted: 'multiplied by a number where the course divides by it',
  constant: 'another constant',
  factor: 'a factor the course does not have',
  mask: 'another causal mask',
  'exp-dropped': 'the exponential left out',
  reduction: 'np.sum where the course takes np.mean, or the reverse',
  power:
    'another power where the course squares (** 1, or squared again: ** 4), or the square ' +
    'of the mean where the course takes the mean of the squares',
  stepped: 'a weight read after its update (W - lr * dW) where the course reads it before',
  float32: 'computed in float32',
  pair: 'two of these changes in one step, where one does not suffice',
});

/**
 * The diagnosis of a row that edits reproduce. ctx: { node (the row's), nameOf (course name -> the
 * student's), given (the course's names of the arrays in the student's file), from (the arrays
 * the step was recomputed from) }.
 */
export function editMessage(hits, { node, nameOf, given, from }) {
  const say = nameOf; // the file's key of an array it holds, the course's name of one it does not
  const [first, ...rest] = hits;
  const { edit } = first;
  const parts = first.parts ?? [{ site: first.site, edit }];
  const changes = (edit.pair ? [edit.first, edit.second] : [edit]).map((e) => changeText(e, say));
  const lines = edit.pair && edit.first.index !== edit.index ? firstLine(edit, say) : '';
  const where = parts.length > 1 ? ` at ${listed(parts.map((p) => say(p.site)))}` : '';
  const what = edit.pair
    ? `two changes, ${changes.join(', and ')}`
    : `one change${where}, ${changes[0]}${edit.everywhere ? ` (at each of its ${edit.everywhere} places)` : ''}`;
  let message =
    `Your ${say(node)} ${isAre(say(node))} the course's program with ${what}: ${lines}${studentLines(parts, say)}; ` +
    `the course: ${courseLines(parts, say)}.`;
  const others = rest.slice(0, 2).map((h) => printLine(h.edit.statements[h.edit.index], say));
  if (others.length) {
    message += ` At these sizes ${others.join(' and ')} give the same numbers.`;
  }
  const hidden = parts.map((p) => p.site).filter((site) => site !== node && !given.has(site));
  if (hidden.length) {
    const verb = hidden.length > 1 ? 'are' : 'is';
    message += ` (${listed(hidden)} ${verb} not in your file: recomputed from your own ${from.join(', ')}.)`;
  }
  return { id: first.variant.id, message };
}

/**
 * The lines of a hit's edits as the student wrote them (a pair's two lines when they are two; the
 * mask left out said so), and as the course has them.
 */
export const studentLines = (parts, say, target = say) =>
  parts.map(({ edit }) => studentLine(edit, say, target)).join('; ');

// (target: how the line's own name is said)
function studentLine(edit, say, target) {
  const st = edit.statements[edit.index];
  const line = `${target(st.name)} = ${print(st.expr, say)}`;
  if (edit.kind === 'mask' && !edit.added && edit.after.op !== 'mask') {
    return `${say('att')} = softmax(${say('scores')}, axis=-1) with no mask (no np.where(mask, -np.inf, ${say('scores')}))`;
  }
  return edit.pair && edit.first.index !== edit.index ? `${firstLine(edit, say)}${line}` : line;
}
export const courseLines = (parts, say) =>
  parts.map(({ edit }) => printLine(edit.original, say)).join('; ');

// "Q and K", "Q, K and V"
const listed = (items) =>
  items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)}` : items[0];

function changeText(e, say) {
  if (e.kind === 'float32') return `${say(e.at)} computed in float32 (your inputs are float64)`;
  if (e.kind === 'factor') {
    return `${say(e.at)} ${e.after.op === 'mul' ? 'multiplied' : 'divided'} by ${e.after.b.text}`;
  }
  if (e.kind === 'inverted') {
    return `${say(e.at)} multiplied by ${print(e.after.b, say)} where the course divides by it`;
  }
  const text = `${print(e.after, say)} where the course has ${print(e.before, say)}`;
  const why = e.kind === 'constant' ? constantWhy(e.after.key) : '';
  if (why) return `${text} (${why} in Python: the power binds before the division)`;
  if (e.kind !== 'transpose-axes') return text;
  const which = e.after.perm[0] === 0 ? 'your arrays without the batch axis' : 'the 4-D array';
  return `${text} (${say(e.after.a.name ?? 'x')}.T on ${which}: .T reverses every axis)`;
}

// the line of a pair's first change, when it is in another statement than the second's
const firstLine = (edit, say) => `${printLine(edit.statements[edit.first.index], say)}; `;
