// check.js - checkNotebook: a student's NumPy arrays (from their .npz, .npy or printed text)
// against the engine's, one row per course result, with a proven diagnosis of what went wrong.
//
//   const report = checkNotebook(mha, readNpz(bytes), { heads: 4, causal: false });
//   report.rows[i] = { name, status, maxAbs, maxRel, normRel, tolerance, first, diagnosis, ... }
//
// Expected values come from the engine (a layer with the student's weights, forward, mseLoss,
// backward). Each differing result is recomputed from the student's own earlier arrays; if that
// reproduces it, it "follows from" the earlier difference; otherwise the edits of the course's
// program are searched at its step and at the steps before it the student did not save
// (edits.js), and one is a cause only if it reproduces their array within tolerance; the
// catalogue (catalogue.js) names the edits that are known mistakes, the analyses the relations.

import {
  aboveDiagonal,
  agrees,
  comparedRow,
  precisionOf,
  relativeResolution,
  shapesText,
  uncomparedRow,
} from './compare.js';
import { MISTAKES, analysesOf, namesEdit, recordOf, rightLine } from './catalogue.js';
import { Pipeline } from './pipeline.js';
import {
  editHit,
  editMessage,
  findEdits,
  programEdits,
  searchable,
  studentLines,
} from './edits.js';
import { PROGRAM_NODES } from './program.js';
import { changedInput, changedUpstream, changedWeight } from './state.js';
import { STEPS, courseLine, tensorPlan } from './steps.js';
import { analysisContext, firstFound, measuredFacts } from './analyses/index.js';
import { shownName } from './analyses/layout.js';
import { START_MARKS, acceptedShapes, courseName, matchNames, shapeText } from './names.js';
import { adaptLayout, layoutRole, readingNote } from './layouts.js';
import {
  checkTraining,
  initialAsWeights,
  initialKeys,
  initialWeights,
  toArray,
  trainingKeys,
} from './training.js';
import { explainLoop } from './loop.js';
import * as ops from './ops.js';

const FN = 'checkNotebook';
const WEIGHTS = ['Wq', 'Wk', 'Wv', 'Wo'];
// Printed (text) arrays carry only their digits: what is computed from them may be off by their
// relative resolution grown through the steps. A comparison that starts from printed arrays
// allows TEXT_GROWTH times that (a mistake changes a result by far more).
const TEXT_GROWTH = 1e3;

const textSlack = (arrays) => TEXT_GROWTH * Math.max(0, ...arrays.map(relativeResolution));

// ------------------------------------------------------------------------------------------------
// inputs

// A readNpy-style array { data, shape, dtype? } with data as a Float64Array; throws if malformed.
function asArray(name, a) {
  const ok =
    a != null &&
    typeof a === 'object' &&
    Array.isArray(a.shape) &&
    a.shape.every((d) => Number.isInteger(d) && d >= 0) &&
    a.data != null &&
    typeof a.data.length === 'number';
  if (!ok) {
    throw new Error(`${FN}: ${name} is not an array: expected { data, shape } as readNpy returns`);
  }
  const size = a.shape.reduce((x, y) => x * y, 1);
  if (a.data.length !== size) {
    throw new Error(
      `${FN}: ${name} has ${a.data.length} values for shape ${shapeText(a.shape)} (${size})`,
    );
  }
  const data = a.data instanceof Float64Array ? a.data : Float64Array.from(a.data);
  return { ...a, data, shape: [...a.shape] };
}

function requireFinite(name, a) {
  const i = a.data.findIndex((x) => !Number.isFinite(x));
  if (i >= 0) {
    throw new Error(
      `${FN}: ${name} has a non-finite entry (${a.data[i]}) at flat index ${i}: ` +
        'the check needs finite inputs',
    );
  }
}

function requireInput(found, name) {
  if (!found[name]) {
    throw new Error(
      `${FN}: ${name} is missing: save X and the four weights, e.g. ` +
        "np.savez('mha_check.npz', X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, ...)",
    );
  }
  return asArray(name, found[name].array);
}

// X, the weights and heads -> sizes; notes gets "X is (T, C): B = 1 assumed"
function readSizes(found, heads, causal, notes) {
  const X = requireInput(found, 'X');
  if (X.shape.length !== 3 && X.shape.length !== 2) {
    throw new Error(`${FN}: X has shape ${shapeText(X.shape)}; expected (B, T, C) or (T, C)`);
  }
  const [B, T, C] = X.shape.length === 3 ? X.shape : [1, ...X.shape];
  if (X.shape.length === 2) notes.push('X is (T, C): B = 1 assumed');
  if (!(B >= 1 && T >= 1 && C >= 1)) {
    throw new Error(`${FN}: X has shape ${shapeText(X.shape)}: every size must be at least 1`);
  }
  if (!Number.isInteger(heads) || heads < 1 || C % heads !== 0) {
    throw new Error(
      `${FN}: heads must be a whole number >= 1 that divides C = ${C}, got ${String(heads)}`,
    );
  }
  if (typeof causal !== 'boolean') {
    throw new Error(`${FN}: causal must be true or false, got ${String(causal)}`);
  }
  requireFinite('X', X);
  const inputs = { X };
  for (const w of WEIGHTS) {
    const W = requireInput(found, w);
    if (W.shape.length !== 2 || W.shape[0] !== C || W.shape[1] !== C) {
      throw new Error(
        `${FN}: ${w} has shape ${shapeText(W.shape)}; expected (C, C) = (${C}, ${C}) ` +
          `with C = ${C} from X`,
      );
    }
    requireFinite(w, W);
    inputs[w] = W;
  }
  const hs = C / heads;
  return { inputs, sizes: { B, T, C, heads, hs, N: B * T, n: B * T * C, causal } };
}

// dY (loss = sum(dY * Y)) or target (the MSE loss): the same shape as X
function readLoss(found, sizes, inputs, notes) {
  if (!found.target && !found.dY) return null;
  const name = found.target ? 'target' : 'dY';
  const a = asArray(name, found[name].array);
  const rows = [sizes.B * sizes.T, sizes.C]; // .reshape(-1, C)
  const ok = [inputs.X.shape, [sizes.B, sizes.T, sizes.C], rows].some(
    (shape) => shape.length === a.shape.length && shape.every((d, i) => d === a.shape[i]),
  );
  // (an array of another shape under the name, or read as dY or target by another name, is
  // another array: left out, said, and the backward is checked from the other one or not at all)
  const { key } = found[name];
  if (!ok) {
    notes.push(
      key === name
        ? `${name} has shape ${shapeText(a.shape)}; expected ${shapeText(inputs.X.shape)} like X ` +
            `and Y (or ${shapeText(rows)}, reshaped to (B·T, C)): not read as the ${name} of the ` +
            'loss'
        : `${key} ${shapeText(a.shape)} not read as ${name}: ${name} is shaped like X`,
    );
    delete found[name];
    return readLoss(found, sizes, inputs, notes);
  }
  requireFinite(name, a);
  inputs[name] = a;
  return name === 'target' ? 'mse' : 'dot';
}

// ------------------------------------------------------------------------------------------------
// expected values from the engine

// A layer of the engine with the student's weights; a clear Error if the engine cannot run it.
function createLayer(mha, inputs, s) {
  let layer = null;
  try {
    layer = mha.createLayer({ C: s.C, heads: s.heads });
    const w = layer.weights;
    for (const name of WEIGHTS) w[name].set(inputs[name].data);
    layer.forward(inputs.X.data, { B: s.B, T: s.T, causal: s.causal });
    return layer;
  } catch (e) {
    layer?.free();
    const size = `B = ${s.B}, T = ${s.T}, C = ${s.C}, heads = ${s.heads}`;
    throw new Error(`${FN}: the engine could not run this layer (${size}): ${e.message}`, {
      cause: e,
    });
  }
}

// { [node]: Float64Array } for every node of the check's graph (steps.js), from the layer's
// forward and backward; the merged Qm … of the split results by merge_heads
function engineExpected(mha, layer, inputs, s, plan) {
  const out = {};
  for (const name of plan.forward) {
    out[name] = layer.tensor(name).data;
    if (STEPS.some((r) => r.name === `${name}m`)) out[`${name}m`] = ops.mergeHeads(out[name], s);
  }
  if (s.loss == null) return out;
  let dY = inputs.dY?.data;
  if (s.loss === 'mse') {
    const mse = mha.mseLoss(out.Y, inputs.target.data);
    dY = mse.dY;
    out.loss = Float64Array.of(mse.loss);
    out.dY = dY;
  } else {
    out.loss = Float64Array.of(ops.dot(dY, out.Y));
  }
  layer.zeroGrad();
  layer.backward(dY);
  for (const name of plan.backward) out[name] = layer.tensor(name).data;
  return out;
}

// ------------------------------------------------------------------------------------------------
// rows

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * The result rows in report order, from the engine's tensor table: the forward's results, then
 * (with a loss) loss, dY for the MSE loss, and the backward's results in lesson 4's order.
 */
export function resultOrder(plan, loss) {
  if (loss == null) return [...plan.forward];
  return [...plan.forward, ...(loss === 'mse' ? ['loss', 'dY'] : ['loss']), ...plan.results];
}

// A result read under another name (attention_output as Y) whose shape is none of the result's:
// another array of the author's, left out with a note rather than a row of the wrong shape
function dropMisshapen(found, s, plan, notes) {
  for (const name of resultOrder(plan, s.loss)) {
    const entry = found[name];
    const shape = entry?.array?.shape;
    const alias = entry && entry.key.toLowerCase().replaceAll('_', '') !== name.toLowerCase();
    if (!alias || !Array.isArray(shape)) continue;
    if (acceptedShapes(name, s).some((f) => sameShape(f.shape, shape))) continue;
    notes.push(`${entry.key} ${shapeText(shape)} not read as ${name}: none of ${name}'s shapes`);
    delete found[name];
  }
}

// One row per result; `item`s (the compared ones) carry what the diagnosis needs.
function buildRows(found, s, expected, inputs, plan) {
  const items = [];
  const slack = textSlack(Object.values(inputs));
  const rows = resultOrder(plan, s.loss).map((name) => {
    const forms = acceptedShapes(name, s);
    const entry = found[name];
    if (!entry || (name === 'dY' && s.loss !== 'mse')) {
      return uncomparedRow(name, 'missing', { expectedShape: forms[0].shape });
    }
    const array = asArray(name, entry.array);
    const form = forms.find((f) => sameShape(f.shape, array.shape));
    if (!form) {
      const args = { shape: array.shape, expectedShape: forms[0].shape, note: shapesText(forms) };
      return uncomparedRow(name, 'shape', args);
    }
    const skip = name === 'scores' && s.causal && s.T > 1 ? aboveDiagonal(s.T) : null;
    const lowered = loweredPrecision(array, inputs);
    const raised = lowered ? null : raisedPrecision(array, inputs);
    const notes = [
      skip ? scoresNote(s) : null,
      lowered ? loweredNote(array, inputs) : null,
      raised ? raisedNote(raised) : null,
    ];
    const note = notes.filter(Boolean).join('; ') || null;
    const scalar = name === 'loss';
    // an array saved in less precision than the inputs is held to the inputs' tolerance
    // and one saved in more precision than its inputs to theirs
    let held = array;
    if (lowered) held = { ...array, dtype: inputs.X.dtype ?? '<f8' };
    else if (raised) held = { ...array, dtype: raised.dtype };
    const row = comparedRow(name, held, expected[form.node], { skip, note, scalar, slack });
    const { dtype, resolution, printedDtype } = held;
    const opts = { dtype, resolution, printedDtype, scalar, skip, slack };
    items.push({ row, node: form.node, array, opts, lowered });
    return row;
  });
  return { rows, items };
}

// The array's dtype ('<f4', '<f2') when it is float32 or float16 while X and the weights are
// float64 (saved from arrays, not printed): a step computed in less precision. null otherwise.
function loweredPrecision(array, inputs) {
  const kind = precisionOf(array.dtype);
  if (kind !== 'f4' && kind !== 'f2') return null;
  const all = ['X', ...WEIGHTS].map((n) => inputs[n]);
  const float64 = all.every((a) => a.dtype !== 'text' && precisionOf(a.dtype) === 'f8');
  return float64 ? array.dtype : null;
}

// { dtype, names } when the array is float64 while some of X and the weights were saved in less
// precision (float32, float16): a float64 result computed from them (or cast up from a float32
// step) carries their rounding, so it is held to their tolerance. null otherwise.
function raisedPrecision(array, inputs) {
  if (array.dtype === 'text' || precisionOf(array.dtype) !== 'f8') return null;
  const names = ['X', ...WEIGHTS];
  const low = names.filter((n) => ['f4', 'f2'].includes(precisionOf(inputs[n].dtype)));
  if (!low.length) return null;
  const f2 = low.find((n) => precisionOf(inputs[n].dtype) === 'f2');
  return { dtype: inputs[f2 ?? low[0]].dtype, names: low };
}

const raisedNote = ({ dtype, names }) =>
  `yours is float64, computed from ${names.join(', ')} saved as ${LABELS[precisionOf(dtype)]}: ` +
  `compared at ${LABELS[precisionOf(dtype)]}'s tolerance`;

const LABELS = { f4: 'float32', f2: 'float16' };
const loweredNote = (array) =>
  `yours is ${LABELS[precisionOf(array.dtype)]} while X and the weights are float64: ` +
  "compared at float64's tolerance";

function scoresNote(s) {
  const count = (s.B * s.heads * s.T * (s.T - 1)) / 2;
  return (
    `causal: the ${count} entries above the diagonal are masked and not compared ` +
    '(yours may hold -inf, a large negative number or the unmasked score)'
  );
}

// ------------------------------------------------------------------------------------------------
// diagnoses

// The row names of the differing results (and adopted mistakes) node's value comes from, the
// latest first.
function rootsOf(pipe, node, rootOf, order) {
  const roots = new Set();
  for (const n of [node, ...pipe.hiddenAncestors(node)]) {
    for (const p of [n, ...pipe.nodes[n].parents]) {
      if (p !== node && rootOf.has(p)) rootOf.get(p).forEach((r) => roots.add(r));
    }
  }
  return [...roots].sort((a, b) => order.indexOf(b) - order.indexOf(a));
}

// "follows from dK and att: dX, recomputed from your own dQ, dK, dV, Wq, Wk, Wv, matches your
// array." (`same`: a mistake found before, at this step too; `grows`: no earlier difference)
function followsFrom(name, roots, from, { same = null, grows = false } = {}) {
  const sameText = same ? ` (with the same ${same.label ?? same.id} as your ${same.row})` : '';
  const growsText = grows ? " (your arrays' small differences grow in this step)" : '';
  return {
    id: 'follows-from',
    roots,
    message:
      `follows from ${roots.join(' and ')}: ${name}, recomputed from your own ` +
      `${from.join(', ')}${sameText}, matches your array${growsText}.`,
  };
}

const PROGRAM_NAMES = new Set([...PROGRAM_NODES, 'X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', 'dY']);

// A catalogued mistake's message: the student's lines (their names) and the course's for the
// step, with the record's id
function mistakeMessage(hit, record, item, pipe, { from, given, say, keyOf }) {
  const { node } = item;
  const rights = [];
  const hidden = [];
  // the course's line in the student's names (their keys for the arrays their file holds)
  const theirs = (text) =>
    text.replace(/\b[A-Za-z]\w*\b/g, (w) => (PROGRAM_NAMES.has(w) ? (say(w) ?? w) : w));
  for (const { site } of hit.parts) {
    const right = theirs(rightLine(record.id, site, pipe.s));
    if (!rights.includes(right)) rights.push(right);
    const shown = shownName(site);
    if (site !== node && shown !== item.row.name && !given.has(shown)) hidden.push(shown);
  }
  // the student's key of an array, or for a projection they did not save, its line: (X @ Wq)
  const shownSay = (n) =>
    say(n) ??
    (/^[QKV]m$/.test(n) ? `(${shownSay('X')} @ ${shownSay(`W${n[0].toLowerCase()}`)})` : n);
  // a line's own name: the student's key when their file holds it, else the course's
  const target = (n) => keyOf.get(n) ?? (/^[QKV]m$/.test(n) ? shownName(n) : n);
  let message = `You computed ${studentLines(hit.parts, shownSay, target)}; the course uses ${rights.join('; ')}.`;
  if (hit.parts.every(({ site }) => site === 'dQ' || site === 'dK')) {
    message += sameScale(record.id, pipe.s);
  }
  if (hidden.length) {
    const list = [...new Set(hidden)].join(', ');
    const verb = hidden.length > 1 ? 'are' : 'is';
    message += ` (${list} ${verb} not in your file: reproduced from your own ${from.join(', ')}.)`;
  }
  return { id: record.id, message };
}

// A scale mistake of dQ and dK whose factor is also a size of the layer gives the same numbers as
// dividing by that size: said, so that a layer that divides by B (a batch mean) reads its own
// mistake too
function sameScale(id, s) {
  const k = Math.sqrt(s.C / s.hs);
  if (id !== 'scale-sqrt-C') return '';
  const sizes = [
    [s.B, 'B'],
    [s.T, 'T'],
  ].filter(([q]) => q > 1 && Math.abs(q / k - 1) < 1e-12);
  if (!sizes.length) return '';
  const names = sizes.map(([, n]) => n).join(' = ');
  return ` (Here np.sqrt(C) / np.sqrt(hs) = ${k} = ${names}: the course's step divided by ${names} gives the same numbers.)`;
}

// The diagnosis of one differing result (see the file comment); updates pipe and the maps.
function explain(item, pipe, state) {
  const { row, node, array } = item;
  const data = array.data;
  const { rootOf, adopted, order, nameOf, arrays } = state;
  const from = () => pipe.frontier(node).map((n) => nameOf.get(n) ?? n);
  // recomputed from printed arrays: their resolution, grown
  const used = [array, ...pipe.frontier(node).map((n) => arrays.get(n))];
  const slack = Math.max(item.opts.slack, textSlack(used.filter(Boolean)));
  const opts = { ...item.opts, slack, slackText: 'printed arrays' };
  const lowered = loweredStep(item, pipe, opts, from);
  if (lowered) {
    rootOf.set(node, [row.name]);
    const step = pipe.nodes[node].step;
    const variant = { id: 'edit-float32', fn: (p) => step(p).map(Math.fround) };
    state.causes.set(node, { variant, param: 'float32' });
    return lowered;
  }
  // a mistake adopted in a step this row reads, that this row shows to be the course's: it was
  // in the earlier row's own line (dWk = X.T @ dQm, while dX uses dKm): no longer used
  const disproved = pipe.disproved(node, data, (a, b) => agrees(a, b, opts));
  for (const site of disproved ?? []) {
    pipe.unadopt(site);
    state.causes.delete(site);
    rootOf.delete(site);
  }
  if (agrees(data, pipe.step(node), opts)) {
    const roots = rootsOf(pipe, node, rootOf, order);
    rootOf.set(node, roots.length ? roots : [row.name]);
    // no earlier difference: the given arrays matched within tolerance, and this step grew it
    if (!roots.length) return followsFrom(row.name, from(), from(), { grows: true });
    return followsFrom(row.name, roots, from());
  }
  const biased = withBiases(item, pipe, state, { opts, from });
  if (biased) return biased;
  const ctx = analysisContext({
    pipe,
    node,
    name: row.name,
    yours: data,
    opts,
    biases: state.biases,
    saved: state.saved,
    matched: state.matched,
    lineOf: (n) => courseLine(n, pipe.s),
    courseLine: courseLine(node, pipe.s),
  });
  // a mistake an earlier row showed, in a step this row reads that was not saved, before a new
  // cause of the same numbers (dQ divided by √C as the scores were, not a dY without its 2)
  const prior = adoptedEdit(pipe, node, data, { opts, adopted });
  const early = prior ? null : firstFound(analysesOf('early'), ctx);
  if (early) return causeOrFacts(early, item, pipe, { ...state, from, opts });
  // the edits of the course's program that reproduce the row: one a record names is the cause
  const edits = prior?.edits ?? findEdits(pipe, node, data, opts);
  const named = prior?.named ?? catalogued(edits, node, adopted);
  if (!named) {
    const found = firstFound(analysesOf('late'), ctx) ?? measuredFacts(ctx, row);
    return causeOrFacts(found, item, pipe, { ...state, from, opts, edits });
  }
  const { hit, record } = named;
  const frontier = from();
  for (const [site, choice] of hit.extra) {
    state.causes.set(site, choice);
    if (site === node) continue;
    pipe.adopt(site, choice);
    if (!adopted.has(record.id)) rootOf.set(site, [row.name]);
  }
  if (adopted.has(record.id)) {
    const roots = [...new Set([...rootsOf(pipe, node, rootOf, order), adopted.get(record.id)])];
    rootOf.set(node, roots);
    return followsFrom(row.name, roots, frontier, {
      same: { id: record.id, label: 'mistake', row: adopted.get(record.id) },
    });
  }
  adopted.set(record.id, row.name);
  rootOf.set(node, [row.name]);
  const given = new Set(nameOf.values());
  const say = (n) => state.keyOf.get(n) ?? nameOf.get(n);
  return mistakeMessage(hit, record, item, pipe, {
    from: frontier,
    given,
    say,
    keyOf: state.keyOf,
  });
}

// A mistake already adopted (a record an earlier row proved) made at the steps this row reads
// that were not saved (each alone, then all together) and reproducing the row: { edits: [hit],
// named: { hit, record } }, or null
function adoptedEdit(pipe, node, data, { opts, adopted }) {
  if (!adopted.size || !searchable(pipe.s)) return null;
  const records = MISTAKES.filter((m) => adopted.has(m.id) && m.edits);
  const parts = [];
  for (const site of pipe.hiddenAncestors(node)) {
    for (const edit of programEdits(site, pipe.s)) {
      const record = records.find((m) => namesEdit(m, site, edit));
      if (record) parts.push({ site, edit, record });
    }
  }
  const sets = [...parts.map((p) => [p]), ...(parts.length > 1 ? [parts] : [])];
  for (const set of sets) {
    if (set.some((p) => p.record !== set[0].record)) continue;
    const hit = editHit(
      pipe,
      node,
      data,
      opts,
      set.map(({ site, edit }) => [site, edit]),
    );
    if (hit) return { edits: [hit], named: { hit, record: set[0].record } };
  }
  return null;
}

// The first hit of the edit search a record of the catalogue names, with the record; at dQ and
// dK not the scale mistakes unless an earlier row has them (the scores'), whose factor the
// factor analysis reads against the arrays that match (a batch mean gives the same number)
function catalogued(edits, node, adopted) {
  for (const hit of edits) {
    const record = recordOf(hit, { searched: true });
    if (!record) continue;
    const scale = SCALE_IDS.includes(record.id) && !adopted.has(record.id);
    if (/^d[QK]m?$/.test(node) && scale) continue;
    return { hit, record };
  }
  return null;
}

// The rows' statuses against the course's layer with the file's biases (bq … bo) added, when it
// has any: a reading of a biased layer is screened by the rows its biases explain
function biasedStatuses({ rows, items }, s, inputs, biases = {}) {
  const choices = biasChoices(s, inputs, biases);
  if (!choices.size) return rows;
  const data = Object.fromEntries(Object.entries(inputs).map(([k, a]) => [k, a.data]));
  const pipe = new Pipeline(s, data);
  for (const [site, choice] of choices) pipe.adopt(site, choice);
  const explained = new Set(
    items
      .filter(
        ({ row, node, array, opts }) =>
          row.status === 'differs' && agrees(array.data, pipe.value(node), opts),
      )
      .map(({ row }) => row),
  );
  return rows.map((row) => (explained.has(row) ? { ...row, status: 'match' } : row));
}

// The file's biases as the pipeline's choices at their sites: Map site -> { variant, param }
function biasChoices(s, inputs, biases = {}) {
  const data = Object.fromEntries(Object.entries(inputs).map(([k, a]) => [k, a.data]));
  const { nodes } = new Pipeline(s, data);
  const out = new Map();
  for (const [b, site] of Object.entries(BIAS_SITES)) {
    if (!biases[b]) continue;
    const step = nodes[site].step;
    const fn = (p) => step(p).map((v, i) => v + biases[b][i % biases[b].length]);
    out.set(site, { variant: { id: 'bias', fn }, param: b });
  }
  return out;
}

// The layer's causes for the training run: the rows' own, and the file's biases at the sites no
// row reached (a file of a training run alone has no rows to find them)
function trainingCauses(causes, s, inputs, biases) {
  const out = new Map(causes);
  for (const [site, choice] of biasChoices(s, inputs, biases)) {
    if (!out.has(site)) out.set(site, choice);
  }
  return out;
}

// The learning rate the file saved (a finite scalar), or undefined: an edit may read a weight
// after its update, W - lr * dW
function savedLr(arrays) {
  const key = trainingKeys(arrays).keys.lr;
  const a = key && arrays[key];
  const x = a?.data?.length === 1 ? Number(a.data[0]) : NaN;
  return Number.isFinite(x) ? x : undefined;
}

// The file's biases (bq, bk, bv: Q = X @ Wq + bq …; bo: Y = concat @ Wo + bo) in the steps the
// row is computed from that were not saved (or the row's own step), those not applied yet: when,
// all applied, they give the student's array, the row is the course's layer with the student's
// biases; later rows are recomputed with them.
const BIAS_SITES = { bq: 'Qm', bk: 'Km', bv: 'Vm', bo: 'Y' };
function withBiases(item, pipe, state, { opts, from }) {
  const { node, row, array } = item;
  const reach = new Set([node, ...pipe.hiddenAncestors(node)]);
  const sites = Object.entries(BIAS_SITES).filter(
    ([b, n]) => state.biases[b] && reach.has(n) && !state.causes.has(n),
  );
  if (!sites.length) return null;
  const biased = (transB) =>
    new Map(
      sites.map(([b, site]) => {
        const bias = state.biases[b];
        const step = transB ? transposedStep(site, pipe.s) : pipe.nodes[site].step;
        const fn = (p) => step(p).map((v, i) => v + bias[i % bias.length]);
        // (the pipeline keeps values by variant id: each reading its own)
        return [site, { variant: { id: transB ? 'bias-transposed' : 'bias', fn }, param: b }];
      }),
    );
  let extra = biased(false);
  if (!agrees(array.data, pipe.step(node, extra), opts)) {
    // (weights that fit only as X @ W.T, course-named: the transpose with the file's biases)
    if (state.offered !== 'out-in') return null;
    extra = biased(true);
    if (!agrees(array.data, pipe.step(node, extra), opts)) return null;
    return transposedWithBiases(item, pipe, state, { sites, extra, from });
  }
  adoptAll(extra, item, pipe, state);
  const key = (b) => state.keyOf.get(b) ?? b;
  const yours = sites.map(([b, site]) => `${SITE_LINES[site]} + ${key(b)}`);
  return {
    id: 'bias',
    lines: yours.join('; '),
    message:
      `Your ${row.name} is the course's layer with your biases added (${yours.join('; ')}), ` +
      `recomputed from your own ${from().join(', ')}. The course's layer has none: ` +
      `${sites.map(([, site]) => SITE_LINES[site]).join('; ')}.`,
  };
}
const SITE_LINES = { Qm: 'Q = X @ Wq', Km: 'K = X @ Wk', Vm: 'V = X @ Wv', Y: 'Y = concat @ Wo' };
const SITE_OPERANDS = { Qm: ['X', 'Wq'], Km: ['X', 'Wk'], Vm: ['X', 'Wv'], Y: ['concat', 'Wo'] };

// a bias site's step with its weight used as W.T
function transposedStep(site, s) {
  const [x, w] = SITE_OPERANDS[site];
  return (p) => ops.matmul(p[x], p[w], { m: s.N, k: s.C, n: s.C, transB: true });
}

// extra's choices as the causes of the row, adopted at the steps before it, the row their root
function adoptAll(extra, { node, row }, pipe, state) {
  for (const [site, choice] of extra) {
    if (site !== node) pipe.adopt(site, choice);
    state.causes.set(site, choice);
    state.rootOf.set(site, [row.name]);
  }
  state.rootOf.set(node, [row.name]);
}

// The row is the layer with the file's biases and its weights used as X @ W.T (the file's weights
// course-named, read (in, out): the transpose is the forward's mistake): named, adopted
function transposedWithBiases(item, pipe, state, { sites, extra, from }) {
  adoptAll(extra, item, pipe, state);
  const key = (n) => state.keyOf.get(n) ?? n;
  const yours = sites.map(([b, site]) => {
    const [x, w] = SITE_OPERANDS[site];
    return `${SITE_LINES[site].split(' = ')[0]} = ${x} @ ${key(w)}.T + ${key(b)}`;
  });
  return {
    id: 'weights-transposed',
    lines: yours.join('; '),
    message:
      `You computed ${yours.join('; ')}, recomputed from your own ${from().join(', ')}: your ` +
      'weights used as X @ W.T, with your biases. The course computes ' +
      `${sites.map(([, site]) => SITE_LINES[site]).join('; ')} (weights (in, out), no bias); ` +
      'if your weights are stored (out, in) on purpose, read them so with the option "weights ' +
      'stored (out, in)".',
  };
}

// The scale mistakes, left to the factor analysis at dQ and dK (catalogued, above)
const SCALE_IDS = ['missing-scale', 'scale-sqrt-C'];
// what a row says when no edit of the course's program reproduces it
const RULED_OUT =
  "Ruled out: every single edit of the course's lines at this step and at the steps before it " +
  'you did not save (another operand, a transpose added or dropped, a reshape without its ' +
  'transpose, another axis or keepdims, another constant, a term dropped or added, a sign, the ' +
  'mask, float32).';
// the readings of an array that holds another step's values (a later step's, a projection's
// input gradient): not this step's, so the rows after it read the course's
const OTHER_STEP = new Set(['overwritten', 'input-gradient']);
// the analyses' findings that name no cause (what was measured)
const UNNAMED = new Set(['step-differs', 'attention-invariant']);

// An analysis's finding as the row's diagnosis; a cause in a step not saved is used from now on.
// The same relation found at an earlier row (a scale in scores and in dQ, one reshape in Q and K)
// makes this row follow from that one.
function analysed(found, item, pipe, state) {
  const { row, node } = item;
  const earlier = found.same && state.sameAs.get(found.same.key);
  if (earlier) {
    const roots = [...new Set([...rootsOf(pipe, node, state.rootOf, state.order), earlier])];
    state.rootOf.set(node, roots);
    return followsFrom(row.name, roots, state.from(), {
      same: { label: found.same.label, row: earlier },
    });
  }
  if (found.same) state.sameAs.set(found.same.key, row.name);
  if (found.site && found.variant) {
    pipe.adopt(found.site, { variant: found.variant });
    state.causes.set(found.site, { variant: found.variant });
    state.rootOf.set(found.site, [row.name]);
  }
  for (const [site, choice] of found.adopt ?? []) {
    pipe.adopt(site, choice);
    state.causes.set(site, choice);
    state.rootOf.set(site, [row.name]);
  }
  state.rootOf.set(node, [row.name]);
  const { id, message, factor, measured } = found;
  // a catalogued cause proven here: later steps with the same mistake follow from this row
  if (MISTAKES.some((m) => m.id === id) && !state.adopted.has(id)) state.adopted.set(id, row.name);
  const diagnosis = { id, message };
  if (factor != null) diagnosis.factor = factor;
  if (measured) diagnosis.measured = true; // facts, no cause
  return diagnosis;
}

// A result saved in float32 (or float16) in a float64 notebook that matches its step, recomputed
// from the student's own arrays, to that precision: the step was computed in it.
function loweredStep(item, pipe, opts, from) {
  const { lowered: dtype, node, row, array } = item;
  if (!dtype || !agrees(array.data, pipe.step(node), { ...opts, dtype })) return null;
  const label = LABELS[precisionOf(dtype)];
  const name = row.name;
  return {
    id: 'edit-float32',
    message:
      `Your ${name} is ${label} (dtype ${dtype}) while X and the weights are float64: it equals ` +
      `the course's step, recomputed from your own ${from().join(', ')}, to ${label}'s precision ` +
      `and no further. The step was computed in ${label} (an .astype(np.${label}) or a ` +
      `${label} array on the way); keep every array float64, as the course does.`,
  };
}

// An analysis's finding; when it only measured what is wrong (a broken invariant, the errors), an
// edit of the course's program that reproduces the row says why instead.
function causeOrFacts(found, item, pipe, state) {
  const cause = !found.measured && !UNNAMED.has(found.id);
  if (cause && !found.unexplained) return analysed(found, item, pipe, state);
  const edits = state.edits ?? findEdits(pipe, item.node, item.array.data, state.opts);
  if (edits.searched && edits.length) return edited(edits, item, pipe, state);
  if (cause) return analysed(found, item, pipe, state);
  const input = changedInput(pipe, item.node, item.array.data, state.opts, state.saved);
  if (input) return inputChanged(input, item, pipe, state);
  const weight =
    changedWeight(pipe, item.node, item.array.data, state.opts) ??
    changedUpstream(pipe, item.node, item.array.data, state.opts, state.saved);
  if (weight) return weightChanged(weight, item, pipe, state);
  const ruledOut = edits.searched ? ` ${RULED_OUT}` : '';
  return analysed({ ...found, message: found.message + ruledOut }, item, pipe, state);
}

// X changed after the projections (state.js): the first projection it shows in names it, the
// others follow from that row
function inputChanged(input, item, pipe, state) {
  const { row, node } = item;
  const earlier = state.sameAs.get('state:X');
  if (earlier) {
    const roots = [...new Set([...rootsOf(pipe, node, state.rootOf, state.order), earlier])];
    state.rootOf.set(node, roots);
    return followsFrom(row.name, roots, state.from(), {
      same: { label: 'X changed after use', row: earlier },
    });
  }
  state.sameAs.set('state:X', row.name);
  state.rootOf.set(node, [row.name]);
  return { id: 'input-changed', message: input.message };
}

// A weight changed after it was used (state.js): the weight as used is the pipeline's from now on
// (the later steps that read it follow from this row); the first row it shows in names it, the
// others (another weight changed the same way) are the same mistake
function weightChanged(weight, item, pipe, state) {
  const { row, node } = item;
  pipe.provide(weight.W, weight.used);
  const earlier = state.sameAs.get(weight.same);
  state.rootOf.set(weight.W, [earlier ?? row.name]);
  if (earlier) {
    const roots = [...new Set([...rootsOf(pipe, node, state.rootOf, state.order), earlier])];
    state.rootOf.set(node, roots);
    const label = weight.W === 'dY' ? 'dY changed after use' : 'weights changed after use';
    return followsFrom(row.name, roots, state.from(), { same: { label, row: earlier } });
  }
  state.sameAs.set(weight.same, row.name);
  state.rootOf.set(node, [row.name]);
  return { id: weight.W === 'dY' ? 'upstream-changed' : 'weight-changed', message: weight.message };
}

// Edits of the course's program that reproduce the row (edits.js) as its diagnosis; an edit in a
// step the student did not save is used from now on.
function edited(hits, item, pipe, state) {
  const { row, node } = item;
  const frontier = state.from();
  for (const [site, choice] of hits[0].extra) {
    state.causes.set(site, choice);
    if (site === node) continue;
    pipe.adopt(site, choice);
    state.rootOf.set(site, [row.name]);
  }
  state.rootOf.set(node, [row.name]);
  const given = new Set(pipe.given.keys());
  // the student's own names: the keys of their file
  const nameOf = (n) => state.keyOf.get(n) ?? state.nameOf.get(n) ?? n;
  return editMessage(hits, { node, nameOf, given, from: frontier });
}

/**
 * An engine layer (the student's weights, after a forward) as pipeline.js's Pipeline.useEngine
 * wants it: the course's steps from tensors set in its cache. A run is skipped when the cache
 * already holds its result (the same arrays set as the last time).
 */
export function engineSteps(layer) {
  let last = null;
  const run = (key, set, more, go) => {
    const refs = [...Object.values(set), more];
    const same = last && last.key === key && last.refs.every((r, i) => r === refs[i]);
    if (!same) {
      for (const [name, data] of Object.entries(set)) layer.setTensor(name, data);
      go();
      last = { key, refs };
    }
  };
  return {
    forward(from, set, node) {
      run(`forward ${from}`, set, null, () => layer.forwardFrom(from));
      return layer.tensor(node).data;
    },
    backward(set, dY, node) {
      run('backward', set, dY, () => {
        layer.zeroGrad();
        layer.backward(dY);
      });
      return layer.tensor(node).data;
    },
  };
}

function diagnose(items, s, args) {
  const { inputs, expected, layer, plan, biases = {}, keyOf = new Map(), offered = null } = args;
  const data = Object.fromEntries(Object.entries(inputs).map(([k, a]) => [k, a.data]));
  const pipe = new Pipeline(s, data);
  pipe.seed(expected);
  pipe.useEngine(engineSteps(layer), plan);
  const state = {
    rootOf: new Map(),
    adopted: new Map(),
    order: items.map((it) => it.row.name),
    nameOf: new Map(Object.keys(inputs).map((k) => [k, keyOf.get(k) ?? k])), // in their words
    arrays: new Map(Object.entries(inputs)),
    saved: new Map(items.map((it) => [it.node, it.array.data])),
    matched: new Set(items.filter((it) => it.row.status === 'match').map((it) => it.node)),
    sameAs: new Map(), // an analysis's relation (its `same` key) -> the row it was found at
    causes: new Map(), // node -> { variant, param }: every cause found that can be replayed
    keyOf, // node -> the key of the student's file it was read from
    biases,
    offered, // 'out-in' when the file's weights fit only as X @ W.T (course-named: a mistake)
  };
  const unnamed = [];
  for (const item of items) {
    if (item.row.status === 'differs') {
      item.row.diagnosis = explain(item, pipe, state);
      if (UNNAMED.has(item.row.diagnosis.id)) unnamed.push({ item, causes: state.causes.size });
    }
    // (an array holding a later step's values is not this step's: later rows read the course's,
    // and do not follow from it)
    if (!OTHER_STEP.has(item.row.diagnosis?.id)) pipe.provide(item.node, item.array.data);
    else state.rootOf.delete(item.node);
    state.arrays.set(item.node, item.array);
    state.nameOf.set(item.node, keyOf.get(item.node) ?? item.row.name);
  }
  // a row no cause explained, diagnosed again when a later row found causes in steps not saved
  // (dconcat = dY @ Wo found at dX also shapes dWq): with them, one edit may do
  for (const { item, causes } of unnamed) {
    if (state.causes.size === causes) continue;
    // (the causes found after this row's first pass that it reads: said with its diagnosis)
    const reads = new Set(pipe.hiddenAncestors(item.node));
    const later = [...state.causes.keys()].slice(causes).filter((site) => reads.has(site));
    const again = explain(item, pipe, state);
    if (UNNAMED.has(again.id)) continue;
    if (later.length && again.id !== 'follows-from') {
      const rows = [...new Set(later.flatMap((site) => state.rootOf.get(site) ?? []))];
      again.message +=
        ` This is with the mistake your ${rows.join(', ')} show${rows.length > 1 ? '' : 's'}` +
        ` in ${later.join(', ')} (not in your file), which this row reads too: see there.`;
    }
    item.row.diagnosis = again;
  }
  biasReading(items, s, data, state);
  return state.causes;
}

// The saved initial weights are the trained ones (the loop updated them in place): the layer's
// rows, computed before the training from the weights as they were, cannot be recomputed from
// the file; a row no cause explained says so instead of a search that could not succeed
function aliasedLayer(rows, trainingRows) {
  const aliased = trainingRows.find((r) => r.diagnosis?.id === 'loop-weights-aliased');
  if (!aliased) return;
  for (const r of rows) {
    if (r.status !== 'differs' || !UNNAMED.has(r.diagnosis?.id)) continue;
    r.diagnosis = {
      id: 'follows-from',
      message:
        `follows from ${aliased.name}: your file's weights are the weights after training ` +
        `(see ${aliased.name}), while your ${r.name} was computed before it from the weights ` +
        'as they were; save copies of the initial weights to have it checked.',
    };
  }
}

// Biases are a reading of the file (issue 35, item 2): when the file's own biases explain every
// differing row (each the layer with them, or following from one that is), those rows are
// compared again with the layer with the biases, recomputed from X and the weights: a match,
// said in the row's note. The course's layer has none, as the note says.
function biasReading(items, s, data, state) {
  const biased = [...state.causes].filter(([, c]) => c.variant.id === 'bias');
  if (!biased.length) return;
  // the rows the biases alone explain: each the layer with them, or following from those only
  // (another cause's rows, and an array holding a later step's values, are said as they are)
  const biasRows = new Set(
    items.filter((it) => it.row.diagnosis?.id === 'bias').map((it) => it.row.name),
  );
  const fromBias = (d) => d?.id === 'follows-from' && d.roots?.every((r) => biasRows.has(r));
  const explained = (d) => d?.id === 'bias' || fromBias(d);
  const differing = items.filter((it) => it.row.status === 'differs');
  const pipe = new Pipeline(s, data);
  for (const [site, choice] of biased) pipe.adopt(site, choice);
  const names = BIAS_ORDER.filter((b) => state.biases[b]).map((b) => state.keyOf.get(b) ?? b);
  const none = "the course's layer has none";
  for (const { row, node, array, opts } of differing) {
    if (!explained(row.diagnosis)) continue;
    const lines = row.diagnosis.lines;
    const note = lines
      ? `read with your biases (${lines}); ${none}`
      : `compared with your layer with its biases (${names.join(', ')}); ${none}`;
    const again = comparedRow(row.name, { ...array, dtype: opts.dtype }, pipe.value(node), {
      skip: opts.skip,
      scalar: opts.scalar,
      slack: opts.slack,
      note: [row.note, note].filter(Boolean).join('; '),
    });
    if (again.status === 'match') Object.assign(row, again);
  }
}
const BIAS_ORDER = ['bq', 'bk', 'bv', 'bo'];

// A file that holds a layer but not all of X and the four weights: no rows, and what was read
// as what and what is missing (never a thrown error: the page says it as the check's status)
function notChecked(adapted, lacking, { notes, unknown, causal }) {
  const read = adapted.reading ? readingNote(adapted.reading) : null;
  const what = read ?? `missing: ${lacking.join(', ')} (the check needs X and the four weights)`;
  return {
    rows: [],
    sizes: null,
    causal,
    weights: { read: 'in-out', offered: null },
    loss: null,
    inputs: {},
    ignored: unknown,
    notes: [
      ...notes,
      `Not checked: ${what}; save them, e.g. np.savez('mha_check.npz', X=X, Wq=Wq, Wk=Wk, ` +
        'Wv=Wv, Wo=Wo, ...)',
    ],
    missing: lacking,
  };
}

// fn(), its Error saying also how the file was read and what the layer lacks (readingNote)
function withReading(adapted, fn) {
  try {
    return fn();
  } catch (e) {
    const note = adapted.reading ? readingNote(adapted.reading) : null;
    if (note) e.message += ` (${note})`;
    throw e;
  }
}

// node -> the key of the student's file it was read from (the inputs and the compared results)
function fileKeys(found, inputs, items) {
  const out = new Map();
  for (const name of Object.keys(inputs)) if (found[name]?.key) out.set(name, found[name].key);
  for (const it of items) if (found[it.row.name]?.key) out.set(it.node, found[it.row.name].key);
  return out;
}

/** How the file's weights may be read (checkNotebook's option `weights`). */
export const WEIGHT_READINGS = Object.freeze(['auto', 'in-out', 'out-in']);

// ------------------------------------------------------------------------------------------------

/**
 * Check a student's arrays against the engine (docs/notebook-check.md: the report’s shape).
 * arrays: { [name]: { data, shape, dtype?, resolution? } }, names matched to the course's
 * case-insensitively; options: { heads, causal = false, weights = 'auto' } (heads may be left out
 * when a split array shows it; weights: how the file's weights are read, 'in-out' (X @ W, the
 * course's), 'out-in' (X @ W.T, PyTorch's nn.Linear) or 'auto': as its arrays show, the course's
 * first for the course's names). The report's weights: { read, offered } (offered: 'out-in' when
 * that reading also fits, else null). Throws an Error with a one-line message when X or Wq,
 * Wk, Wv is missing or mis-shaped, heads is not a whole number >= 1 or does not divide C, or an
 * input is not finite.
 */
export function checkNotebook(mha, arrays, options = {}) {
  const named = namesReading(mha, arrays, options);
  const fused = fusedReading(mha, named.arrays, options);
  const read = fused ? { arrays: fused.arrays, notes: [...named.notes, ...fused.notes] } : named;
  const positional = positionalReading(mha, read.arrays, options);
  const chosen = positional
    ? { arrays: positional.arrays, notes: [...read.notes, ...positional.notes] }
    : read;
  const other = otherReading(mha, chosen.arrays, options);
  const final = other ? { arrays: other.arrays, notes: [...chosen.notes, ...other.notes] } : chosen;
  const report = checkHeads(mha, final.arrays, options);
  report.notes.unshift(...final.notes);
  return report;
}

// The other readings of a file's names, each tried when the first does not explain every row:
// another array of the file under a name two of its keys give (scaled_scores beside scores, the
// product before its scale), or an array no name reads, of X's shape, as X (the input after a
// LayerNorm the file keeps beside its own input). [{ arrays, note }]
function readingCandidates(arrays) {
  const { found, ignored } = matchNames(arrays);
  const out = [];
  const byName = new Map();
  for (const key of Object.keys(arrays)) {
    const name = courseName(key);
    if (name && found[name] && found[name].key !== key) byName.set(key, name);
  }
  for (const [key, name] of byName) {
    const winner = found[name].key;
    out.push({
      arrays: without(arrays, winner),
      note:
        `${key} and ${winner} both name ${name}: ${key} was read, the reading that explains more ` +
        `of your arrays (${winner}, not compared, may be a step before it)`,
    });
  }
  // (two maps of one shape under each other's names: attn the scores, scores the weights)
  for (const [a, b] of SWAPPABLE) {
    if (!found[a] || !found[b]) continue;
    const [ka, kb] = [found[a].key, found[b].key];
    // (under the course's names: each key would read as its own name again)
    const swapped = without(without(arrays, ka), kb);
    out.push({
      arrays: { ...swapped, [a]: arrays[kb], [b]: arrays[ka] },
      note:
        `${kb} read as ${a} and ${ka} as ${b}, the reading that explains more of your arrays ` +
        `(the rows say ${a} for your ${kb}, ${b} for your ${ka})`,
    });
  }
  const x = found.X && toArray(found.X.array);
  for (const key of ignored) {
    const a = toArray(arrays[key]);
    if (!x || !a || a.shape.length !== x.shape.length || a.shape.some((d, i) => d !== x.shape[i])) {
      continue;
    }
    out.push({
      arrays: { ...without(arrays, key), [found.X.key]: a },
      note:
        `${key} read as X, the input your attention computes from: your ${found.X.key} does ` +
        `not give your other arrays (it is the input before ${key}), and the rows say X for ${key}`,
    });
  }
  return out;
}

// the course's arrays of one shape a file may hold under each other's names
const SWAPPABLE = Object.freeze([
  ['scores', 'att'],
  ['dscores', 'datt'],
]);

const without = (arrays, key) =>
  Object.fromEntries(Object.entries(arrays).filter(([k]) => k !== key));

// The first other reading that explains more of the file's rows than the names do: { arrays,
// notes }, or null
function otherReading(mha, arrays, options) {
  if (arrays == null || typeof arrays !== 'object') return null;
  const candidates = readingCandidates(arrays);
  if (!candidates.length) return null;
  const probe = withFirstLoss(arrays);
  const base = screened(mha, probe, options);
  if (base.differs <= 0) return null;
  let best = null;
  for (const c of candidates.slice(0, 8)) {
    const tried = screened(mha, withFirstLoss(c.arrays), options);
    if (tried.match > (best?.tried.match ?? base.match) && tried.differs < base.differs) {
      best = { ...c, tried };
    }
  }
  return best && { arrays: best.arrays, notes: [best.note] };
}

// The rows of a reading alone: { match, differs } (-1 each when it cannot be checked)
function screened(mha, arrays, options) {
  let r = null;
  try {
    r = checkOnce(mha, arrays, { ...options, screen: true });
  } catch {
    // (this reading cannot be checked)
  }
  const count = (status) => (r?.rows ? r.rows.filter((row) => row.status === status).length : -1);
  return { match: count('match'), differs: count('differs') };
}

// A positional table the layer adds to its input (pe, pos_emb, wpe …: (T, C) or (1, T, C)) read
// as part of X, X + pe, when that reading explains more of the file's arrays: { arrays, notes },
// or null
function positionalReading(mha, arrays, options) {
  if (arrays == null || typeof arrays !== 'object') return null;
  const xKey = matchNames(arrays).found.X?.key;
  const X = xKey && toArray(arrays[xKey]);
  const key = Object.keys(arrays).find((k) => POSITIONAL.has(k.toLowerCase().replace(/[_.]/g, '')));
  const pe = key && toArray(arrays[key]);
  if (!X || !pe || X.shape.length < 2) return null;
  const [T, C] = X.shape.slice(-2);
  const rows = pe.shape.filter((d, i) => !(d === 1 && i === 0));
  if (rows.length !== 2 || rows[0] !== T || rows[1] !== C) return null;
  // (a training run's first loss, the loss at its initial weights, screened as the layer's)
  const probe = withFirstLoss(arrays);
  const base = screened(mha, probe, options);
  if (base.differs <= 0) return null;
  const sum = X.data.map((x, i) => x + pe.data[i % (T * C)]);
  const moved = { ...arrays, [xKey]: { ...arrays[xKey], data: sum } };
  const tried = screened(mha, { ...probe, [xKey]: moved[xKey] }, options);
  if (tried.match <= base.match) return null;
  return {
    arrays: moved,
    notes: [
      `${xKey} read as ${xKey} + ${key}: your layer adds ${key} ${shapeText(pe.shape)}, a ` +
        `positional table, to its input, under which ${tried.match} of your arrays match ` +
        `(against ${base.match} with ${xKey} alone); the course's layer takes X as it is`,
    ],
  };
}
const POSITIONAL = new Set(
  ['pe', 'pos', 'wpe', 'posemb', 'posembed', 'posembedding', 'posenc', 'positional'].concat([
    'positionalencoding',
    'positionalembedding',
    'positionembedding',
    'positionembeddings',
  ]),
);

// the orders of the three blocks (q, k, v), and of a fused axis's three factors: the block, the
// head, the head's entry (einops' "(d k h)": entry, then block, then head fastest)
const ORDERS = ['012', '021', '102', '120', '201', '210'];
const AXES = ['phd', 'hpd', 'pdh', 'dph', 'hdp', 'dhp'];
const AXIS_WORDS = { p: 'block', h: 'head', d: 'entry' };

// A fused projection (Wq, Wk, Wv in one (3C, C) or (C, 3C) array, and its gradient and bias)
// whose blocks are in another order (q, v, k …) or interleaved with the heads: each arrangement,
// rewritten to the course's q, k, v blocks, is tried, the rows alone; one under which strictly
// more of the file matches than as read is used, said in a note.
function fusedReading(mha, arrays, options) {
  const fused = fusedAxis(arrays, options.heads);
  if (!fused) return null;
  const base = screened(mha, arrays, options);
  if (base.differs <= 0) return null;
  let best = null;
  for (const order of ORDERS) {
    for (const axes of AXES) {
      if (order === '012' && axes === 'phd') continue;
      const moved = movedFused(arrays, fused, fusedFrom(fused, order, axes));
      const tried = { ...screened(mha, moved, options), order, axes, moved };
      if (!best || tried.match > best.match) best = tried;
    }
  }
  if (best.match <= base.match) return null;
  const names = [...best.order].map((i) => ['q', 'k', 'v'][i]).join(', ');
  const words = [...best.axes].map((ax) => AXIS_WORDS[ax]).join(', then ');
  const how =
    best.axes === 'phd'
      ? `in the order ${names}`
      : `as ${names} interleaved with the heads (ordered by ${words})`;
  return {
    arrays: best.moved,
    notes: [
      `${fused.weight}: its blocks read ${how}, under which ${best.match} of your arrays ` +
        `match (against ${base.match} read as q, k, v blocks)`,
    ],
  };
}

// The file's fused weight (one, 2-d, 3C along one axis), its gradients and biases, or null
function fusedAxis(arrays, heads) {
  const keys = Object.keys(arrays ?? {}).filter((k) => layoutRole(k)?.kind === 'fused');
  const weight = keys.find((k) => !layoutRole(k).grad);
  const a = weight && arrays[weight];
  if (!a?.shape || a.shape.length !== 2 || !Number.isInteger(heads)) return null;
  const [r, c] = a.shape;
  const alongRows = r === 3 * c;
  const C = alongRows ? c : r;
  if ((!alongRows && c !== 3 * r) || C % heads !== 0) return null;
  const biases = Object.keys(arrays).filter(
    (k) => layoutRole(k)?.kind === 'fusedBias' && arrays[k]?.data?.length === 3 * C,
  );
  return { weight, a, C, hs: C / heads, heads, alongRows, keys, biases };
}

// the file's position along the fused axis of the course's position i (block·C + head·hs + d)
function fusedFrom({ C, hs, heads }, order, axes) {
  const size = { p: 3, h: heads, d: hs };
  return (i) => {
    const at = { p: Number(order[Math.floor(i / C)]), h: Math.floor((i % C) / hs), d: i % hs };
    return [...axes].reduce((acc, ax) => acc * size[ax] + at[ax], 0);
  };
}

// the arrays with the fused weight, gradient and bias rearranged to the course's q, k, v blocks
function movedFused(arrays, fused, from) {
  const { a, C, alongRows, keys, biases } = fused;
  const moved = { ...arrays };
  for (const k of keys.filter((x) => sameShapeAs(arrays[x], a))) {
    moved[k] = rearranged(arrays[k], from, alongRows, C);
  }
  for (const k of biases) {
    const data = Float64Array.from({ length: 3 * C }, (_, i) => arrays[k].data[from(i)]);
    moved[k] = withData(arrays[k], data);
  }
  return moved;
}

// an array with new data (moved entries: a printed array's resolution does not follow them)
function withData(a, data) {
  const out = { ...a, data };
  delete out.resolution;
  return out;
}

const sameShapeAs = (x, a) =>
  x?.shape?.length === a.shape.length && x.shape.every((d, i) => d === a.shape[i]);

// a (3C, C) array's rows (alongRows) or a (C, 3C) array's columns, entry i taken from from(i)
function rearranged(a, from, alongRows, C) {
  const data = new Float64Array(a.data.length);
  for (let i = 0; i < 3 * C; i++) {
    for (let j = 0; j < C; j++) {
      if (alongRows) data[i * C + j] = a.data[from(i) * C + j];
      else data[j * 3 * C + i] = a.data[j * 3 * C + from(i)];
    }
  }
  return withData(a, data);
}

// Two or more of the file's keys naming one course name (attention_output and output both read
// as Y): each is tried as it, the rows alone, and the one under which more of the file matches
// (fewer differ) is used, said in a note; the others are left out. The course's own spelling
// is never in question (it wins as matchNames has it).
function namesReading(mha, arrays, options) {
  const groups = new Map();
  for (const key of Object.keys(arrays ?? {})) {
    const name = courseName(key);
    if (name == null) continue;
    // (an array named att whose last two axes differ is no (T, T) map: the layer's output)
    const shape = arrays[key]?.shape;
    if (['att', 'datt'].includes(name) && shape?.at(-1) !== shape?.at(-2)) continue;
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(key);
  }
  let best = { arrays, notes: [] };
  for (const [name, keys] of groups) {
    if (keys.length < 2) continue;
    const tried = keys.map((key) => {
      const rest = Object.fromEntries(
        Object.entries(best.arrays).filter(([k]) => k === key || !keys.includes(k)),
      );
      let r = null;
      try {
        r = checkOnce(mha, rest, { ...options, screen: true });
      } catch {
        // (this reading cannot be checked)
      }
      // (a reading that leaves this key out, of another shape, is none)
      const unread = r?.notes?.some((n) => n.startsWith(`${key} `) && n.includes(' not read as '));
      if (unread) r = null;
      const count = (...st) => (r ? r.rows.filter((row) => st.includes(row.status)).length : -1);
      // (a row of another shape is a reading that fits worse, as a row that differs)
      const exact = key.toLowerCase() === name.toLowerCase();
      const shaped = r?.rows.find((row) => row.name === name)?.status === 'shape';
      const fit = { match: count('match'), differs: count('differs', 'shape') };
      return { key, rest, exact, shaped, course: key === name, ...fit };
    });
    // (the course's own name is used unless its array has another shape than the name's)
    if (tried.some((t) => t.course && !t.shaped)) continue;
    // (more rows that match, then fewer that differ, then the course's spelling in another case)
    tried.sort((a, b) => b.match - a.match || a.differs - b.differs || b.exact - a.exact);
    const [win, next] = tried;
    const tie = win.match === next.match && win.differs === next.differs;
    if (win.match < 0 || (tie && win.exact === next.exact)) continue;
    const others = keys.filter((k) => k !== win.key);
    best = {
      arrays: win.rest,
      notes: [
        ...best.notes,
        `${keys.join(' and ')} ${keys.length > 2 ? 'all' : 'both'} name ${name}: ${win.key} was used, ` +
          `${whyUsed(win, next, name)}; ${others.join(', ')} left out`,
      ],
    };
  }
  return best;
}

// why one reading of a name won over the next
function whyUsed(win, next, name) {
  if (win.match > next.match) {
    return `under which more of your arrays match (${win.match}, against ${next.match} with ${next.key})`;
  }
  if (win.differs < next.differs) {
    return `under which fewer of your arrays differ or have another shape (${win.differs}, against ${next.differs} with ${next.key})`;
  }
  return `the course's own name ${name} in another case (with ${next.key} as many of your arrays match)`;
}

function checkHeads(mha, arrays, options) {
  const report = headsReading(mha, arrays, options) ?? checkOnce(mha, arrays, options);
  if (!report.sizes) return report; // (not checked: X or a weight missing)
  const maps = headlessMaps(report);
  if (!maps.length || report.sizes.heads === 1) return report;
  // a head's maps saved without the head axis, (B, T, T): the reading of one head, used when
  // it explains more of the file (more rows match, none more differ)
  let one;
  try {
    one = checkOnce(mha, arrays, { ...options, heads: 1 });
  } catch {
    return report;
  }
  const count = (r, status) => r.rows.filter((row) => row.status === status).length;
  if (count(one, 'match') <= count(report, 'match')) return report;
  if (count(one, 'differs') > count(report, 'differs')) return report;
  one.notes.unshift(
    `${headlessText(maps, report.sizes.heads)}: checked as one head (h = 1), which explains ` +
      `more of your arrays (${count(one, 'match')} match, against ${count(report, 'match')} ` +
      `with h = ${report.sizes.heads})`,
  );
  return one;
}

// "your att has no head axis, and with h = 4 (as set) it is no head's layout"
const headlessText = (maps, heads) =>
  `your ${maps.join(', ')} ${maps.length > 1 ? 'have' : 'has'} no head axis, and with h = ` +
  `${heads} (as set) ${maps.length > 1 ? 'they are' : 'it is'} no head's layout`;

// The number of heads as a reading: when the check with the heads set finds differences, every
// other h that divides C is tried on the rows alone; one under which every result of the file
// matches (one that depends on h among them: not only Q, K, V) is used, said in a note. null
// when none or several do (the report with the heads set is made then).
function headsReading(mha, arrays, options) {
  const compared = (r) => r.rows.filter((row) => row.status !== 'missing');
  const read = screenedSet(mha, arrays, options, compared);
  if (!read) return null;
  const { set, probe } = read;
  if (!set.sizes || compared(set).every((row) => row.status === 'match')) return null;
  const { B, T, C, heads } = set.sizes;
  // (each h tried reads the file again: beyond the edit search's sizes, not tried)
  if (!searchable({ B, T, C, heads: 1, n: B * T * C })) return null;
  // rows that match and depend on h
  const held = (r) =>
    compared(r).filter((row) => row.status === 'match' && !HEADS_FREE.has(row.name));
  const { fits, partial } = triedHeads(mha, probe, options, { C, heads, compared, held });
  // none explains every row, the h set explains none of those depending on h: the one h under
  // which most of them match (a mistake in the file besides a heads field left as it was)
  if (!fits.length && partial.length && !held(set).length) {
    const most = Math.max(...partial.map(([, n]) => n));
    const best = partial.filter(([, n]) => n === most);
    if (best.length === 1) {
      return partialHeads(mha, arrays, options, { h: best[0][0], heads, most });
    }
  }
  if (fits.length !== 1) return null;
  const report = checkOnce(mha, arrays, { ...options, heads: fits[0] });
  const maps = fits[0] === 1 ? headlessMaps(set) : [];
  const losses = probe === arrays ? null : trainingKeys(arrays).keys.losses;
  report.notes.unshift(headsNote(fits[0], heads, { maps, losses }));
  return report;
}
// The report with the heads set, rows alone: { set, probe (the arrays it read) }, or null. A file
// of a training run alone is read with its first loss, the loss at the initial weights, as the
// loss of the layer's rows: it depends on h.
function screenedSet(mha, arrays, options, compared) {
  try {
    const set = checkOnce(mha, arrays, { ...options, screen: true });
    const probe =
      set.sizes && compared(set).every((r) => HEADS_FREE.has(r.name))
        ? withFirstLoss(arrays)
        : arrays;
    if (probe === arrays) return { set, probe };
    return { set: checkOnce(mha, probe, { ...options, screen: true }), probe };
  } catch {
    return null;
  }
}

// The note of the h used when it is not the one set
function headsNote(h, heads, { maps, losses }) {
  if (losses) {
    return (
      `checked with h = ${h} heads: your ${losses}[0], the loss at your initial weights, is ` +
      `the course's with h = ${h}, not with h = ${heads} (as set)`
    );
  }
  if (maps.length) {
    return `${headlessText(maps, heads)}: checked as one head (h = 1), under which every one of your arrays matches`;
  }
  return (
    `checked with h = ${h} heads: with h = ${heads} (as set) your arrays differ from the ` +
    `course's layer, with ${h} every one of them matches`
  );
}

// The file with its losses[0] as the loss of the layer (a scalar, the MSE loss at the weights it
// starts from) when it has losses, target, no loss of its own and no initial weights under names
// of their own (whose loss that would be); else the file itself
function withFirstLoss(arrays) {
  const key = trainingKeys(arrays).keys.losses;
  const losses = key ? toArray(arrays[key]) : null;
  const keys = Object.keys(arrays);
  const own = keys.some((k) => courseName(k) === 'loss');
  const target = keys.some((k) => courseName(k) === 'target');
  if (!losses?.data.length || own || !target || initialKeys(arrays).Wq) return arrays;
  const first = { data: Float64Array.of(Number(losses.data[0])), shape: [] };
  return { ...arrays, loss: { ...arrays[key], ...first } };
}

// Every other h dividing C tried on the rows alone: fits (every row matches), partial ([h, the
// rows depending on h that match] for the others)
function triedHeads(mha, arrays, options, { C, heads, compared, held }) {
  const fits = [];
  const partial = [];
  for (let h = 1; h <= C; h++) {
    if (C % h || h === heads) continue;
    let r;
    try {
      r = checkOnce(mha, arrays, { ...options, heads: h, screen: true });
    } catch {
      continue;
    }
    if (r.sizes?.heads !== h || !held(r).length) continue;
    const rows = compared(r);
    if (rows.every((row) => row.status === 'match')) fits.push(h);
    else partial.push([h, held(r).length]);
  }
  return { fits, partial };
}

// The report with h, said: with the h set none of the arrays depending on it match
function partialHeads(mha, arrays, options, { h, heads, most }) {
  const report = checkOnce(mha, arrays, { ...options, heads: h });
  report.notes.unshift(
    `checked with h = ${h} heads: with h = ${heads} (as set) none of your arrays that depend on ` +
      `the heads match the course's layer, with h = ${h}, ${most} of them do (no other h does as well)`,
  );
  return report;
}

// results that do not depend on the number of heads when saved merged, (B, T, C)
const HEADS_FREE = new Set(['Q', 'K', 'V', 'dY']);

// The (B, h, T, T) results saved as one map per sequence, (B, T, T) or (T, T): rows of the
// wrong shape whose shape is one head's
function headlessMaps(report) {
  const { B, T } = report.sizes;
  const oneHead = (shape) =>
    (shape?.length === 3 && shape[0] === B && shape[1] === T && shape[2] === T) ||
    (B === 1 && shape?.length === 2 && shape[0] === T && shape[1] === T);
  return report.rows
    .filter((r) => r.status === 'shape' && TT_RESULTS.has(r.name) && oneHead(r.shape))
    .map((r) => r.name);
}
const TT_RESULTS = new Set(['scores', 'att', 'datt', 'dscores']);

// the caller's mistakes in the arguments: a thrown error each
function requireOptions(arrays, heads, weights) {
  if (arrays == null || typeof arrays !== 'object') {
    throw new Error(`${FN}: arrays must be an object { name: array }, e.g. what readNpz returns`);
  }
  if (heads !== undefined && !(Number.isInteger(heads) && heads >= 1)) {
    throw new Error(`${FN}: heads must be a whole number >= 1, got ${String(heads)}`);
  }
  if (!WEIGHT_READINGS.includes(weights)) {
    throw new Error(
      `${FN}: weights must be one of ${WEIGHT_READINGS.join(', ')}, got ${String(weights)}`,
    );
  }
}

// Lesson 5's training (W_after, lr, losses): its rows appended to rows, its notes to notes;
// { used: every file key it read }
function trainingPart(mha, arrays, { rows, sizes, inputs, causes, causal, notes }) {
  const run = initialWeights(arrays);
  const training = checkTraining(mha, run.arrays, { heads: sizes.heads, causal });
  const root = rows.find((r) => r.status === 'differs' && r.diagnosis?.id !== 'follows-from');
  const { keys } = trainingKeys(run.arrays);
  const start = { ...inputs, ...runStart(arrays, run.used) };
  explainLoop(training, {
    arrays: run.arrays,
    keys,
    sizes,
    inputs: start,
    causes,
    root: root?.name,
  });
  aliasedLayer(rows, training.rows);
  rows.push(...training.rows);
  if (training.rows.length) notes.push(...run.notes);
  notes.push(...training.notes);
  return { used: [...training.used, ...run.used] };
}

// The file's arrays in the course's layout, with a layer's initial parameters beside the trained
// ones read the same way: { adapted (adaptLayout's), twins (initialTwins', or null) }
function layoutReading(arrays, heads, weights) {
  const laid = adaptLayout(arrays, { heads, weights });
  const twins = initialTwins(arrays, laid, weights);
  if (!twins) return { adapted: { ...laid, initUsed: [] }, twins };
  const notes = [...laid.notes, ...twins.notes];
  return { adapted: { ...laid, arrays: twins.arrays, notes, initUsed: twins.used }, twins };
}

// The weights a training run starts from when the file saved them beside the layer's (Wq_init
// …, read by initialWeights): { Wq: { data, shape }, … } for the loop's replay
function runStart(arrays, used) {
  const inits = initialKeys(arrays);
  const out = {};
  for (const w of WEIGHTS) {
    const a = used.includes(inits[w]) ? arrays[inits[w]] : null;
    if (a) out[w] = { data: Float64Array.from(a.data), shape: [...a.shape] };
  }
  return out;
}

// The layer's causes the training run replays: the rows' own and the file's biases, or with a
// layer's initial parameters beside the trained ones, the initial biases alone
const runCauses = (twins, causes, { sizes, inputs, adapted }) =>
  twins
    ? trainingCauses(new Map(), sizes, inputs, twins.biases)
    : trainingCauses(causes, sizes, inputs, adapted.biases);

// A layer's parameters saved twice, as trained under their own names and as they started under
// the same names with an init mark (q_proj.weight and q_proj.weight_init): the initial ones read
// with the same layout (a second adaptLayout, of the file with each initial array in its
// parameter's place) and named Wq_init …, the run's start; a bias the run changed given as its
// bias_after. { arrays (the adapted ones with those), biases (the initial), used, notes }, or null
// (the mark after the name, q_proj.weight_init, or before it: init.q_proj.weight, initial-WQ-0)
const MARKS = [...START_MARKS].sort((a, b) => b.length - a.length).join('|');
const INIT_MARK = new RegExp(`^(?:(.+?)[._-]?(?:${MARKS})|(?:${MARKS})[._-]?(.+))$`, 'i');
function initialTwins(arrays, adapted, weights) {
  const twins = Object.keys(arrays)
    .map((k) => [k, ((m) => m && (m[1] ?? m[2]))(INIT_MARK.exec(k))])
    .filter(([k, base]) => base && arrays[base] && adapted.used.includes(base) && k !== base);
  if (!twins.length) return null;
  const start = { ...arrays };
  for (const [k, base] of twins) {
    start[base] = arrays[k];
    delete start[k];
  }
  const laid = adaptLayout(start, { heads: adapted.heads, weights });
  const out = { ...adapted.arrays };
  const read = WEIGHTS.filter((w) => laid.arrays[w] && adapted.arrays[w]);
  if (!read.length) return null;
  for (const w of read) out[`${w}_init`] = laid.arrays[w];
  for (const [b, trained] of Object.entries(adapted.biases ?? {})) {
    const before = laid.biases?.[b];
    if (!before || trained.some((x, i) => x !== before[i])) {
      out[`${b}_after`] = { data: Float64Array.from(trained), shape: [trained.length] };
      if (before) out[b] = { data: Float64Array.from(before), shape: [before.length] };
    }
  }
  const keys = twins.map(([k]) => k);
  return {
    arrays: out,
    biases: laid.biases ?? {},
    used: keys,
    notes: [
      `${keys.join(', ')} read as your layer's parameters before training, laid out as the ` +
        `trained ones are (${read.map((w) => `${w}_init`).join(', ')})`,
    ],
  };
}

// A run's parameters saved as a pair, before and after, under no plain name (c_attn.weight_before,
// c_attn.weight_after): the trained one under the plain name, the other as its start (_init),
// which the readings of a training file then take up. { arrays, notes }
function runPairs(arrays) {
  const out = { ...arrays };
  const read = [];
  for (const key of Object.keys(arrays)) {
    const base = /^(.+?)[._-]?before$/i.exec(key)?.[1];
    const after =
      base &&
      Object.keys(arrays).find(
        (k) =>
          k.toLowerCase() === `${base}_after`.toLowerCase() ||
          k.toLowerCase() === `${base}.after`.toLowerCase(),
      );
    if (!after || Object.hasOwn(arrays, base) || Object.hasOwn(arrays, `${base}_init`)) continue;
    out[base] = arrays[after];
    out[`${base}_init`] = arrays[key];
    delete out[key];
    delete out[after];
    read.push(`${key} and ${after} as ${base}_init and ${base}`);
  }
  const notes = read.length ? [`a run's start and end read: ${read.join('; ')}`] : [];
  return { arrays: read.length ? out : arrays, notes };
}

// The course's weights a file holds under any name it is read by (Wq, W_q, q_proj.weight …)
function heldWeights(arrays) {
  const held = new Set();
  for (const key of Object.keys(arrays ?? {})) {
    const name = courseName(key) ?? layoutRole(key)?.name;
    if (/^W[qkvo]$/.test(name ?? '')) held.add(name);
    if (layoutRole(key)?.kind === 'fused' && !layoutRole(key).grad) {
      for (const w of ['Wq', 'Wk', 'Wv']) held.add(w);
    }
  }
  return held;
}

function checkOnce(mha, arrays, { heads, causal = false, weights = 'auto', screen = false } = {}) {
  requireOptions(arrays, heads, weights);
  // (a run's initial weights as the layer's when the file has no other)
  const paired = runPairs(arrays);
  const initial = initialAsWeights(paired.arrays, heldWeights);
  initial.notes.unshift(...paired.notes);
  // real notebooks' layouts (per-head stacks, fused qkv, (out, in) weights, biases …) first;
  // a heads setting the file's split arrays contradict is replaced by theirs, with a note
  const { adapted, twins } = layoutReading(initial.arrays, heads, weights);
  const { found, ignored: unknown, notes } = matchNames(adapted.arrays);
  notes.unshift(...initial.notes, ...adapted.notes);
  const lacking = ['X', ...WEIGHTS].filter((n) => !found[n]);
  const readAny = Object.values(adapted.reading?.read ?? {}).some((keys) => keys.length);
  // (several matrices or larger, though none read by name: a layer saved in words of its own)
  const matrices = Object.values(arrays).filter((a) => a?.shape?.length >= 2).length;
  const holdsLayer = Object.keys(found).length > 0 || readAny || matrices >= 2;
  if (lacking.length && holdsLayer) return notChecked(adapted, lacking, { notes, unknown, causal });
  const { inputs, sizes } = withReading(adapted, () =>
    readSizes(found, adapted.heads ?? heads, causal, notes),
  );
  sizes.loss = readLoss(found, sizes, inputs, notes);
  sizes.lr = savedLr(adapted.arrays);
  const layer = createLayer(mha, inputs, sizes);
  const plan = tensorPlan(mha);
  dropMisshapen(found, sizes, plan, notes);
  let rows;
  let causes;
  try {
    const expected = engineExpected(mha, layer, inputs, sizes, plan);
    const built = buildRows(found, sizes, expected, inputs, plan);
    rows = built.rows;
    // (the rows' statuses alone: a reading tried; with the file's biases, against their layer)
    if (screen) {
      return { rows: biasedStatuses(built, sizes, inputs, adapted.biases), sizes, notes };
    }
    const biases = adapted.biases;
    const keyOf = fileKeys(found, inputs, built.items);
    for (const [b, key] of Object.entries(adapted.biasKeys ?? {})) keyOf.set(b, key);
    const { offered } = adapted;
    causes = diagnose(built.items, sizes, {
      ...{ inputs, expected, layer, plan },
      ...{ biases, keyOf, offered },
    });
  } finally {
    layer.free();
  }
  const trained = trainingPart(mha, adapted.arrays, {
    ...{ rows, sizes, inputs, causal, notes },
    causes: runCauses(twins, causes, { sizes, inputs, adapted }),
  });
  const read = [...trained.used, ...adapted.initUsed];
  const ignored = unknown.filter((k) => !read.includes(k));
  if (sizes.loss == null) {
    const unused = plan.results.filter((n) => found[n]);
    if (unused.length) {
      notes.push(
        `${unused.join(', ')} not checked: save dY (loss = np.sum(dY * Y)) or target ` +
          '(the MSE loss) to check the backward',
      );
    }
  }
  if (sizes.loss === 'mse' && found.dY) {
    notes.push('dY is checked as a result: 2 * (Y - target) / Y.size');
  }
  const used = Object.fromEntries(
    Object.entries(inputs).map(([k, a]) => [k, { shape: a.shape, key: found[k].key }]),
  );
  const { B, T, C, hs } = sizes;
  return {
    rows,
    sizes: { B, T, C, heads: sizes.heads, hs },
    causal,
    weights: {
      read: adapted.convention === 'out-in' ? 'out-in' : 'in-out',
      offered: adapted.offered,
    },
    loss: sizes.loss,
    inputs: used,
    ignored,
    notes,
  };
}
