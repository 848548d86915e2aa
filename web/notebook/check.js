// check.js - checkNotebook: a student's NumPy arrays (from their .npz, .npy or printed text)
// against the engine's, one row per course result, with a proven diagnosis of what went wrong.
//
//   const report = checkNotebook(mha, readNpz(bytes), { heads: 4, causal: false });
//   report.rows[i] = { name, status, maxAbs, maxRel, normRel, tolerance, first, diagnosis, ... }
//
// Expected values come from the engine (a layer with the student's weights, forward, mseLoss,
// backward). Diagnoses come from mistakes.js: each differing result is recomputed from the
// student's own earlier arrays; if that reproduces it, it "follows from" the earlier difference;
// otherwise the known mistakes are tried at its step and at the steps before it the student did
// not save, and one is named only if it reproduces their array within tolerance.

import { aboveDiagonal, agrees, comparedRow, shapesText, uncomparedRow } from './compare.js';
import { LINES, Pipeline, findMistake, rightLine } from './mistakes.js';
import { BACKWARD_NAMES, acceptedShapes, matchNames, resultNames, shapeText } from './names.js';
import * as ops from './ops.js';

const FN = 'checkNotebook';
const WEIGHTS = ['Wq', 'Wk', 'Wv', 'Wo'];

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
function readLoss(found, sizes, inputs) {
  if (!found.target && !found.dY) return null;
  const name = found.target ? 'target' : 'dY';
  const a = asArray(name, found[name].array);
  const ok = [inputs.X.shape, [sizes.B, sizes.T, sizes.C]].some(
    (shape) => shape.length === a.shape.length && shape.every((d, i) => d === a.shape[i]),
  );
  if (!ok) {
    throw new Error(
      `${FN}: ${name} has shape ${shapeText(a.shape)}; expected ${shapeText(inputs.X.shape)} ` +
        'like X and Y',
    );
  }
  requireFinite(name, a);
  inputs[name] = a;
  return name === 'target' ? 'mse' : 'dot';
}

// ------------------------------------------------------------------------------------------------
// expected values from the engine

// { [node]: Float64Array } for every node of mistakes.js's graph
function engineExpected(mha, inputs, s) {
  let layer;
  try {
    layer = mha.createLayer({ C: s.C, heads: s.heads });
    const w = layer.weights;
    for (const name of WEIGHTS) w[name].set(inputs[name].data);
    const { Y } = layer.forward(inputs.X.data, { B: s.B, T: s.T, causal: s.causal });
    const out = {};
    for (const name of ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y']) {
      out[name] = layer.tensor(name).data;
    }
    for (const x of ['Q', 'K', 'V']) out[`${x}m`] = ops.mergeHeads(out[x], s);
    if (s.loss == null) return out;
    let dY = inputs.dY?.data;
    if (s.loss === 'mse') {
      const mse = mha.mseLoss(Y, inputs.target.data);
      dY = mse.dY;
      out.loss = Float64Array.of(mse.loss);
      out.dY = dY;
    } else {
      out.loss = Float64Array.of(ops.dot(dY, Y));
    }
    layer.zeroGrad();
    layer.backward(dY);
    for (const name of [...BACKWARD_NAMES, 'dQm', 'dKm', 'dVm']) {
      out[name] = layer.tensor(name).data;
    }
    return out;
  } catch (e) {
    const size = `B = ${s.B}, T = ${s.T}, C = ${s.C}, heads = ${s.heads}`;
    throw new Error(`${FN}: the engine could not run this layer (${size}): ${e.message}`, {
      cause: e,
    });
  } finally {
    layer?.free();
  }
}

// ------------------------------------------------------------------------------------------------
// rows

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

// One row per result; `item`s (the compared ones) carry what the diagnosis needs.
function buildRows(found, s, expected) {
  const items = [];
  const rows = resultNames(s.loss).map((name) => {
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
    const skip = name === 'scores' && s.causal ? aboveDiagonal(s.T) : null;
    const note = skip ? scoresNote(s) : null;
    const scalar = name === 'loss';
    const row = comparedRow(name, array, expected[form.node], { skip, note, scalar });
    const opts = { dtype: array.dtype, resolution: array.resolution, scalar, skip };
    items.push({ row, node: form.node, data: array.data, opts });
    return row;
  });
  return { rows, items };
}

function scoresNote(s) {
  const count = (s.B * s.heads * s.T * (s.T - 1)) / 2;
  return (
    `causal: the ${count} entries above the diagonal are masked and not compared ` +
    '(yours may hold -inf, a large negative number or the unmasked score)'
  );
}

// ------------------------------------------------------------------------------------------------
// diagnoses

const DISPLAY = { Qm: 'Q', Km: 'K', Vm: 'V', dQm: 'dQ', dKm: 'dK', dVm: 'dV' };

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

function followsFrom(name, roots, from, same) {
  const sameText = same ? ` (with the same ${same.id} as your ${same.row})` : '';
  return {
    id: 'follows-from',
    message:
      `follows from ${roots.join(' and ')}: ${name}, recomputed from your own ` +
      `${from.join(', ')}${sameText}, matches your array.`,
  };
}

function mistakeMessage(hit, item, pipe, { from, given }) {
  const { node } = item;
  const whats = [];
  const rights = [];
  const hidden = [];
  for (const [site, choice] of hit.extra) {
    whats.push(choice.variant.what(choice.param));
    const right = rightLine(hit.id, site, pipe.s);
    if (!rights.includes(right)) rights.push(right);
    const shown = DISPLAY[site] ?? site;
    if (site !== node && shown !== item.row.name && !given.has(shown)) hidden.push(shown);
  }
  let message = `You computed ${whats.join(' and ')}; the course uses ${rights.join('; ')}.`;
  if (hidden.length) {
    const list = [...new Set(hidden)].join(', ');
    const verb = hidden.length > 1 ? 'are' : 'is';
    message += ` (${list} ${verb} not in your file: reproduced from your own ${from.join(', ')}.)`;
  }
  return { id: hit.id, message };
}

// The diagnosis of one differing result (see the file comment); updates pipe and the maps.
function explain(item, pipe, state) {
  const { row, node, data, opts } = item;
  const { rootOf, adopted, order, nameOf } = state;
  const from = () => pipe.frontier(node).map((n) => nameOf.get(n) ?? n);
  if (agrees(data, pipe.step(node), opts)) {
    const roots = rootsOf(pipe, node, rootOf, order);
    rootOf.set(node, roots.length ? roots : [row.name]);
    return followsFrom(row.name, roots.length ? roots : from(), from(), null);
  }
  const same = adopted.size ? findMistake(pipe, node, data, opts, [...adopted.keys()]) : null;
  const hit = same ?? findMistake(pipe, node, data, opts);
  if (!hit) {
    rootOf.set(node, [row.name]);
    const line = LINES[node].replace(/\s+#.*$/, '');
    const message = `No known mistake reproduces your ${row.name}; the course computes it as ${line}.`;
    return { id: 'step-differs', message };
  }
  const frontier = from();
  for (const [site, choice] of hit.extra) {
    if (site === node) continue;
    pipe.adopt(site, choice);
    if (!same) rootOf.set(site, [row.name]);
  }
  if (same) {
    const roots = [...new Set([...rootsOf(pipe, node, rootOf, order), adopted.get(hit.id)])];
    rootOf.set(node, roots);
    return followsFrom(row.name, roots, frontier, { id: hit.id, row: adopted.get(hit.id) });
  }
  adopted.set(hit.id, row.name);
  rootOf.set(node, [row.name]);
  const given = new Set(nameOf.values());
  return mistakeMessage(hit, item, pipe, { from: frontier, given });
}

function diagnose(items, s, inputs) {
  const data = Object.fromEntries(Object.entries(inputs).map(([k, a]) => [k, a.data]));
  const pipe = new Pipeline(s, data);
  const state = {
    rootOf: new Map(),
    adopted: new Map(),
    order: items.map((it) => it.row.name),
    nameOf: new Map(Object.keys(inputs).map((k) => [k, k])),
  };
  for (const item of items) {
    if (item.row.status === 'differs') item.row.diagnosis = explain(item, pipe, state);
    pipe.provide(item.node, item.data);
    state.nameOf.set(item.node, item.row.name);
  }
}

// ------------------------------------------------------------------------------------------------

/**
 * Check a student's arrays against the engine (README, "Check your notebook": the report's shape).
 * arrays: { [name]: { data, shape, dtype?, resolution? } }, names matched to the course's
 * case-insensitively; options: { heads, causal = false }. Throws an Error with a one-line message
 * when X or a weight is missing or mis-shaped, heads does not divide C, or an input is not finite.
 */
export function checkNotebook(mha, arrays, { heads, causal = false } = {}) {
  if (arrays == null || typeof arrays !== 'object') {
    throw new Error(`${FN}: arrays must be an object { name: array }, e.g. what readNpz returns`);
  }
  const { found, ignored, notes } = matchNames(arrays);
  const { inputs, sizes } = readSizes(found, heads, causal, notes);
  sizes.loss = readLoss(found, sizes, inputs);
  const expected = engineExpected(mha, inputs, sizes);
  const { rows, items } = buildRows(found, sizes, expected);
  if (sizes.loss == null) {
    const unused = BACKWARD_NAMES.filter((n) => found[n]);
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
  diagnose(items, sizes, inputs);
  const used = Object.fromEntries(
    Object.entries(inputs).map(([k, a]) => [k, { shape: a.shape, key: found[k].key }]),
  );
  const { B, T, C, hs } = sizes;
  return {
    rows,
    sizes: { B, T, C, heads, hs },
    causal,
    loss: sizes.loss,
    inputs: used,
    ignored,
    notes,
  };
}
