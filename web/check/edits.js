// edits.js - the search over edits of the course's program (program.js) for a student's array
// that no known mistake reproduces: every single edit of the step that computes it, and of the
// steps before it the student did not save, each run through the layer's graph (pipeline.js) from
// the student's own arrays; an edit is a cause only when it gives their array back within the
// row's tolerance.
//
//   findEdits(pipe, node, yours, opts)   [{ site, edit, variant, param }] the edits that reproduce
//   editMessage(hits, ctx)               the row's diagnosis { id, message }

import { agrees } from './compare.js';
import {
  PROGRAM_NODES,
  editsOf,
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
 * param }] for the nearest site with any (several when edits give the same numbers); the list's
 * `searched` is false when the search was skipped (the layer too large, too many edits).
 */
export function findEdits(pipe, node, yours, opts) {
  const hits = searchEdits(pipe, node, yours, opts);
  return Object.assign(hits ?? [], { searched: hits !== null });
}

// the hits, or null when the search was not run to its end (too large, too many edits)
function searchEdits(pipe, node, yours, opts) {
  const s = pipe.s;
  if (!searchable(s)) return null;
  const trial = { tried: 0, pipe, node, yours, opts };
  for (const site of [node, ...pipe.hiddenAncestors(node)]) {
    const hits = [];
    for (const edit of editsAtSite(pipe, site)) {
      if (dropsOwnMask(pipe, edit)) continue;
      if (++trial.tried > MAX_TRIED) return null;
      const hit = tryEdit(trial, site, edit);
      if (hit) hits.push(hit);
    }
    if (hits.length) return hits;
  }
  // two changes in the step itself, where one does not suffice
  if (s.n * s.C > MAX_PAIR_WORK) return null;
  let pairs = 0;
  for (const edit of pairsAt(pipe, node)) {
    if (dropsOwnMask(pipe, edit.first) || dropsOwnMask(pipe, edit.second)) continue;
    if (++pairs > MAX_PAIRS) break;
    const hit = tryEdit(trial, node, edit);
    if (hit) return [hit];
  }
  return [];
}

// The mask dropped is no cause when the student's own scores hold -inf: they mask in their
// scores step, and their att is the softmax of it as the course's is
function dropsOwnMask(pipe, edit) {
  if (edit.kind !== 'mask' || edit.to?.op === 'mask') return false;
  const given = pipe.given.get('scores');
  return given != null && given.some((x) => x === -Infinity);
}

// { site, edit, variant, param } when the edit at site gives the student's array back, else null
function tryEdit(trial, site, edit) {
  const { pipe, node, yours, opts } = trial;
  const param = `${site}:${edit.kind}:${++trial.tried}`;
  const variant = editVariant(edit, site, pipe.s);
  let mine;
  try {
    mine = pipe.step(node, new Map([[site, { variant, param }]]));
  } catch {
    return null; // NumPy would refuse this edit at these sizes
  }
  if (mine.length !== yours.length || !agrees(yours, mine, opts)) return null;
  return { site, edit, variant, param };
}

// Every pair of edits of node's statements: the second made on the first's statements
function* pairsAt(pipe, node) {
  const at = siteProgram(pipe, node);
  if (!at) return;
  const { statements, names, env } = at;
  const s = pipe.s;
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

const tensors = (p, s) =>
  Object.fromEntries(Object.entries(p).map(([n, data]) => [n, asTensor(n, data, s)]));

/** The kinds of edit the search tries, each with what it changes (the catalogue's records). */
export const EDIT_KINDS = Object.freeze({
  operand: 'another array as an operand',
  'operands-swapped': 'the operands of @ swapped',
  'transpose-added': 'a transpose the course does not have',
  'transpose-dropped': 'a transpose left out',
  'reshape-without-transpose': 'a reshape without its transpose',
  axis: 'a reduction over another axis',
  keepdims: 'keepdims changed in a reduction',
  'term-dropped': 'a term or factor left out',
  'term-added': 'an array added to the result',
  sign: 'a sign changed',
  constant: 'another constant',
  factor: 'a factor the course does not have',
  mask: 'another causal mask',
  'exp-dropped': 'the exponential left out',
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
  const line = printLine(edit.statements[edit.index], say);
  const changes = (edit.pair ? [edit.first, edit.second] : [edit]).map((e) => changeText(e, say));
  const lines = edit.pair && edit.first.index !== edit.index ? firstLine(edit, say) : '';
  const what = edit.pair ? `two changes, ${changes.join(', and ')}` : `one change, ${changes[0]}`;
  let message =
    `Your ${say(node)} is the course's program with ${what}: ${lines}${line}; ` +
    `the course: ${printLine(edit.original, say)}.`;
  const others = rest.slice(0, 2).map((h) => printLine(h.edit.statements[h.edit.index], say));
  if (others.length) {
    message += ` At these sizes ${others.join(' and ')} give the same numbers.`;
  }
  if (first.site !== node && !given.has(first.site)) {
    message += ` (${first.site} is not in your file: recomputed from your own ${from.join(', ')}.)`;
  }
  return { id: first.variant.id, message };
}

function changeText(e, say) {
  if (e.kind === 'float32') return `${say(e.at)} computed in float32 (your inputs are float64)`;
  if (e.kind === 'factor') {
    return `${say(e.at)} ${e.after.op === 'mul' ? 'multiplied' : 'divided'} by ${e.after.b.text}`;
  }
  return `${print(e.after, say)} where the course has ${print(e.before, say)}`;
}

// the line of a pair's first change, when it is in another statement than the second's
const firstLine = (edit, say) => `${printLine(edit.statements[edit.first.index], say)}; `;
