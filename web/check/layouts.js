// layouts.js - real notebooks' layouts rewritten into the course's before the check (issue 18):
// per-head weight stacks and lists (under any index pattern, Wo's slices composed as the heads
// use them), fused qkv matrices, PyTorch's (out, in) weights used as X @ W.T, a missing Wo, heads
// read from split shapes, intermediates saved heads first, X saved features first (C, T), and
// biases (issue 35: reading a file is a search too). Every adaptation is said in a note (a plain
// sentence for the student), none is silent; what cannot be adapted is left as it is, with a
// note saying why, and what the layer lacks is returned (`reading`, readingNote). DOM-free.
//
//   const a = adaptLayout(readNpz(bytes), { heads: 4 });
//   const report = checkNotebook(mha, a.arrays, { heads: a.heads, causal });  // + a.notes
//
// The course's layout: X (B, T, C) or (T, C); Wq, Wk, Wv, Wo (C, C) used as X @ W, no bias;
// Q, K, V (B, h, T, hs) or (B, T, C); scores, att (B, h, T, T); dW* with the weight's shape.

import { agrees, relativeResolution } from './compare.js';
import { AFTER_MARKS, START_MARKS, courseName, gradientBases, shapeText } from './names.js';
import * as ops from './ops.js';

const WEIGHTS = ['Wq', 'Wk', 'Wv', 'Wo'];
const GRADS = ['dWq', 'dWk', 'dWv', 'dWo'];
const BIASES = ['bq', 'bk', 'bv', 'bo'];
// results saved per head: (B, h, T, hs) ones and (B, h, T, T) ones
const HS_RESULTS = ['Q', 'K', 'V', 'headout', 'dheadout', 'dV', 'dQ', 'dK'];
const TT_RESULTS = ['scores', 'att', 'datt', 'dscores'];
// as in check.js: what is recomputed from printed arrays may be off by their resolution, grown
const TEXT_GROWTH = 1e3;

// A file's name lower-cased without '_' and without a module path ('.' or '/'), a container's
// mark at its end dropped: 'h.0.attn.c_attn.weight' -> 'cattnweight', 'c_attn.weight.grad' ->
// 'cattnweightgrad', 'attn/c_proj/w' -> 'cprojw', 'grad.attn.W_q.weight' -> 'gradwqweight',
// 'Q_linear.grad_w' -> 'qlineargradw', 'w_q_list' -> 'wq', 'w_o_np' -> 'wo', 'W_q' -> 'wq'.
function norm(key) {
  const parts = String(key).toLowerCase().split(/[./]/);
  const grad = /^(grad|grads|gradient|gradients|derivative|derivatives)$/;
  const lead = parts.length > 1 && grad.test(parts[0]) ? parts[0] : '';
  // Q_linear.grad_w, c_attn.w_g: the gradient of Q_linear.w, of c_attn.w
  const own = /^(?:grad_?([wb])|([wb])_g)$/.exec(parts.at(-1));
  if (own) parts.splice(-1, 1, own[1] ?? own[2], 'grad');
  let keep = grad.test(parts.at(-1)) ? 2 : 1;
  if (/^(weight|bias|w|b)$/.test(parts.at(-keep) ?? '')) keep++;
  const body = parts.slice(-keep).join('').replaceAll('_', '');
  const mark = body.match(/(grad|grads|gradient|gradients|derivative|derivatives)$/)?.[0] ?? '';
  const bare = body.slice(0, body.length - mark.length).replace(/(list|np|stack|arr|array)$/, '');
  return lead + bare + mark;
}

// the words a projection's name is made of: q, query …; o, out …
const PROJECTION_WORDS = Object.freeze({
  q: ['q', 'query'],
  k: ['k', 'key'],
  v: ['v', 'value'],
  o: ['o', 'out', 'output'],
});
// a projection's weight under one of those words (q_proj, Q_linear.w, W_query, weights_q,
// Wq_proj, attn.W_q.weight …) and its bias (b_q, q_proj.bias, Q_linear.b, attn.W_q.bias …)
const weightForms = (x) =>
  ['proj', 'projweight', 'projection', 'projectionweight', 'linear', 'linearw', 'linearweight']
    .concat(['w', 'weights'])
    .map((end) => `${x}${end}`)
    .concat([`w${x}`, `${x}weight`, `w${x}weight`, `w${x}w`, `weights${x}`, `weight${x}`])
    .concat([`w${x}proj`, `w${x}projection`]);
const biasForms = (x) =>
  ['bias', 'projbias', 'projb', 'projectionbias', 'linearb', 'linearbias', 'b']
    .map((end) => `${x}${end}`)
    .concat([`b${x}`, `bias${x}`, `w${x}bias`, `w${x}b`]);
// { form: `${prefix}q` …} for every word of every projection
const byWord = (forms, prefix) =>
  Object.fromEntries(
    Object.entries(PROJECTION_WORDS).flatMap(([x, words]) =>
      words.flatMap((word) => forms(word).map((form) => [form, `${prefix}${x}`])),
    ),
  );
const WEIGHT_ALIASES = Object.freeze({
  ...byWord(weightForms, 'W'),
  cproj: 'Wo',
  cprojweight: 'Wo',
  cprojw: 'Wo', // picoGPT's params: c_proj.w, c_proj.b
  outproj: 'Wo',
  outprojweight: 'Wo',
  proj: 'Wo',
  wproj: 'Wo',
  wout: 'Wo',
});
const FUSED = new Set([
  'qkv',
  'wqkv',
  'qkvweight',
  'cattn',
  'cattnweight',
  'cattnw',
  'inproj',
  'inprojweight',
  'qkvproj',
  'qkvprojweight',
  'qkvprojw',
  'linearlayers', // a list of the three projections saved as one (3, C, C) array
]);
const FUSED_BIAS = new Set([
  'bqkv',
  'biasqkv',
  'qkvbias',
  'cattnbias',
  'cattnb',
  'inprojbias',
  'qkvprojbias',
  'qkvprojb',
  'inb', // (3, h, hs) or (3C,): the input projections' biases in one
  'inbias',
]);
const BIAS_ALIASES = Object.freeze({
  ...byWord(biasForms, 'b'),
  outprojbias: 'bo',
  cprojbias: 'bo',
  cprojb: 'bo',
  projbias: 'bo',
  bproj: 'bo',
});

// { kind: 'weight' | 'fused' | 'fusedBias' | 'bias', name?, grad } for a name without a d/grad
function plainRole(n) {
  if (Object.hasOwn(WEIGHT_ALIASES, n)) return { kind: 'weight', name: WEIGHT_ALIASES[n] };
  if (FUSED.has(n)) return { kind: 'fused' };
  if (FUSED_BIAS.has(n)) return { kind: 'fusedBias' };
  if (Object.hasOwn(BIAS_ALIASES, n)) return { kind: 'bias', name: BIAS_ALIASES[n] };
  return null;
}

/**
 * What a file's array name stands for in a layer's layout, or null: { kind, name, grad } with
 * kind 'weight' (name Wq…Wo, or dWq…dWo when grad), 'fused' (Wq | Wk | Wv in one), 'fusedBias'
 * or 'bias' (name bq…bo). Gradients are marked as names.js reads them: a leading d, grad or dL_d,
 * or a trailing grad or grads ('dc_attn', 'in_proj_weight_grad', 'W_q_grads'); gradients of
 * biases are not read.
 */
export function layoutRole(key) {
  if (START_PREFIX.test(key)) return null;
  return roleOfNorm(norm(key)) ?? moduleRole(key);
}
// (a run's start under a mark in front, init.out_proj.weight: not the layer's own parameter)
const START_PREFIX = new RegExp(`^(?:${START_MARKS.join('|')})[._-]`, 'i');

// A module's parameter by its path's words (linear_wq.weights, query_weights.W, attn.weight,
// concat_weights.b, value_proj.kernel.grad): the part that says weight or bias, the module before
// it named by one projection word once generic words are dropped; null otherwise
const GRAD_PART = /^(grad|grads|gradient|gradients)$/;
const KIND_PART = { weight: 'weight', weights: 'weight', w: 'weight', kernel: 'weight' };
// (a module's own gradient of its weights: dweights, dW, dkernel, grad_weights)
const GRAD_KIND = { dweights: 'weight', dweight: 'weight', dw: 'weight', dkernel: 'weight' };
Object.assign(GRAD_KIND, { gradweights: 'weight', gradweight: 'weight', gradw: 'weight' });
Object.assign(KIND_PART, { bias: 'bias', biases: 'bias', b: 'bias' });
const GENERIC_WORDS = new Set(['linear', 'lin', 'proj', 'projection', 'layer', 'dense', 'fc']);
['weights', 'weight', 'w', 'matrix', 'mat', 'self', 'module', 'param', 'params'].forEach((w) =>
  GENERIC_WORDS.add(w),
);
const MODULE_WORDS = {
  ...Object.fromEntries(
    Object.entries(PROJECTION_WORDS).flatMap(([x, words]) =>
      [...words, `${words.at(-1)}s`, `w${x}`].map((w) => [w, x]),
    ),
  ),
  queries: 'q',
  keys: 'k',
  values: 'v',
  concat: 'o', // the projection after the heads are joined
};
const FUSED_WORDS = new Set(['qkv', 'wqkv', 'attn', 'attention', 'inproj', 'in']);
// a parameter object's value at a path's end (query.weight.params, w.data, kernel.value)
const VALUE_PART = /^(params|param|data|value|val)$/;
// A path's parts without its marks: { parts, grad (a gradient's mark: grad.…, ….grad, …_g) }
function pathParts(key) {
  const parts = String(key).split(/[./]/).filter(Boolean);
  if (parts.length > 2 && VALUE_PART.test(parts.at(-1).toLowerCase())) parts.pop();
  let grad = parts.length > 1 && GRAD_PART.test(parts[0].toLowerCase());
  if (grad) parts.shift();
  if (parts.length > 1 && GRAD_PART.test(parts.at(-1).toLowerCase())) {
    grad = true;
    parts.pop();
  }
  // (a module's gradients in a dict of their own: in_proj.grads.weight)
  if (parts.length > 2 && GRAD_PART.test(parts.at(-2).toLowerCase())) {
    grad = true;
    parts.splice(-2, 1);
  }
  // (a parameter's gradient marked at its end: c_attn.w_g)
  if (parts.length > 1 && /_g$/i.test(parts.at(-1))) {
    grad = true;
    parts[parts.length - 1] = parts.at(-1).slice(0, -2);
  }
  return { parts, grad };
}

function moduleRole(key) {
  const { parts } = pathParts(key);
  let { grad } = pathParts(key);
  const last = parts.at(-1)?.toLowerCase().replaceAll('_', '');
  if (GRAD_KIND[last]) grad = true;
  const kind = KIND_PART[last] ?? GRAD_KIND[last];
  const module = parts.at(-2);
  if (!kind || module == null) return null;
  const words = module
    .split(/_|-|(?<=[a-z])(?=[A-Z])/)
    .map((w) => w.toLowerCase())
    .filter((w) => w && !GENERIC_WORDS.has(w));
  if (words.length !== 1) return null;
  const [word] = words;
  if (kind === 'weight' && FUSED_WORDS.has(word)) return { kind: 'fused', grad };
  const x = MODULE_WORDS[word];
  if (!x) return null;
  if (kind === 'bias') return grad ? null : { kind: 'bias', name: `b${x}`, grad: false };
  return { kind: 'weight', name: `${grad ? 'd' : ''}W${x}`, grad };
}

// layoutRole of a name already lower-cased without '_' and module path; a stack's mark in front
// (heads_Wq: the heads' weights in one array) read through
function roleOfNorm(n) {
  const bare = /^(?:allheads|perhead|heads|head)(w[qkvo])$/.exec(n);
  if (bare) return roleOfNorm(bare[1]);
  const plain = plainRole(n);
  if (plain) return { ...plain, grad: false };
  for (const base of gradientBases(n)) {
    const r = plainRole(base);
    if (r?.kind === 'weight') return { kind: 'weight', name: `d${r.name}`, grad: true };
    if (r?.kind === 'fused') return { kind: 'fused', grad: true };
  }
  return null;
}

// ------------------------------------------------------------------------------------------------
// arrays and index maps (every adaptation moves entries, none computes new values)

const sizeOf = (shape) => shape.reduce((x, y) => x * y, 1);
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

// A readNpy-style { data, shape } whose data length fits its shape (else the check says why).
function isArray(a) {
  return (
    a != null &&
    typeof a === 'object' &&
    Array.isArray(a.shape) &&
    a.shape.every((d) => Number.isInteger(d) && d >= 0) &&
    a.data != null &&
    a.data.length === sizeOf(a.shape) &&
    (a.data.length === 0 || typeof a.data[0] === 'number')
  );
}

// out[i] = a[src[i]] (and its printed resolution, when it has one), with a new shape
function gather(a, shape, src) {
  const out = { ...a, data: Float64Array.from(src, (j) => a.data[j]), shape };
  if (a.resolution) out.resolution = Float64Array.from(src, (j) => a.resolution[j]);
  return out;
}

// flat indices start, start + 1, … (a reshape or a block of rows)
const range = (start, length) => Int32Array.from({ length }, (_, i) => start + i);

// (r, c) -> (c, r)
function transposeIndex(r, c) {
  const src = new Int32Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) src[j * r + i] = i * c + j;
  return src;
}

// (h, r, c) -> (r, h·c): matrix i in columns i·c…(i+1)·c (np.hstack of the h matrices)
function hstackIndex(h, r, c) {
  const src = new Int32Array(h * r * c);
  for (let i = 0; i < h; i++) {
    for (let k = 0; k < r; k++) {
      for (let j = 0; j < c; j++) src[(k * h + i) * c + j] = (i * r + k) * c + j;
    }
  }
  return src;
}

// columns from…from+w of (r, c)
function columnsIndex(r, c, from, w) {
  const src = new Int32Array(r * w);
  for (let i = 0; i < r; i++) for (let j = 0; j < w; j++) src[i * w + j] = i * c + from + j;
  return src;
}

// (p, q, rest…) -> (q, p, rest…): the two leading axes swapped
function swapLeadingIndex(p, q, rest) {
  const src = new Int32Array(p * q * rest);
  for (let i = 0; i < p; i++) {
    for (let j = 0; j < q; j++) src.set(range((i * q + j) * rest, rest), (j * p + i) * rest);
  }
  return src;
}

// The arrays joined one after another (a list of per-head keys -> one (h, r, c) stack)
function joinData(list, shape) {
  const data = new Float64Array(sizeOf(shape));
  const parts = list.every((a) => a.resolution) ? new Float64Array(data.length) : null;
  let at = 0;
  for (const a of list) {
    data.set(a.data, at);
    if (parts) parts.set(a.resolution, at);
    at += a.data.length;
  }
  const out = { ...list[0], data, shape };
  if (parts) out.resolution = parts;
  else delete out.resolution;
  return out;
}

// ------------------------------------------------------------------------------------------------
// the state of one adaptation

// The key of the file's array for course name `name` (the course's spelling first), or null.
function owner(arrays, name) {
  if (Object.hasOwn(arrays, name)) return name;
  return Object.keys(arrays).find((k) => courseName(k) === name) ?? null;
}

// X's sizes and an empty record, or null when X is missing or not (B, T, C) / (T, C)
function newState(arrays, heads) {
  const xKey = owner(arrays, 'X');
  const X = xKey == null ? null : arrays[xKey];
  if (!isArray(X) || (X.shape.length !== 2 && X.shape.length !== 3)) return null;
  const [B, T, C] = X.shape.length === 3 ? X.shape : [1, ...X.shape];
  if (!(B >= 1 && T >= 1 && C >= 1)) return null;
  return {
    arrays: { ...arrays },
    notes: [],
    used: new Set(),
    X: { ...X, data: Float64Array.from(X.data) },
    B,
    T,
    C,
    N: B * T,
    heads,
    weights: {}, // course name (Wq…dWo) -> its key in arrays, once it is (C, C)
    seen: new Set(), // course weight names the file has under any name and shape
    biases: {},
    biasKeys: {}, // bq … -> the file's key it was read from (in_proj_bias[0:C] for a fused one)
    evidence: [], // { what, h, key, rank }: arrays that show the number of heads
    joined: {}, // Wo, dWo joined from per-head slices -> the label of the file's keys
    from: {}, // course name -> the file's keys it was read from, when not its own
    fusedConvention: null,
    convention: null,
  };
}

// arrays[name] = array in place of the file's `keys` (consumed: listed in used)
function put(st, name, array, keys) {
  for (const k of keys) {
    delete st.arrays[k];
    st.used.add(k);
  }
  st.arrays[name] = array;
  st.from[name] = [...(st.from[keys[0]] ?? keys)];
}

// dX saved as its three paths stacked, (3, B, T, C): dQm @ Wq.T, dKm @ Wk.T and dVm @ Wv.T, as a
// layer's backward returns them for its q, k and v inputs: summed, as X feeds all three
function readStackedPaths(st) {
  const key = owner(st.arrays, 'dX');
  const a = key == null ? null : st.arrays[key];
  if (!isArray(a) || !sameShape(a.shape, [3, ...st.X.shape])) return;
  const n = sizeOf(st.X.shape);
  const data = asF64(a).data;
  const sum = Float64Array.from({ length: n }, (_, i) => data[i] + data[n + i] + data[2 * n + i]);
  put(st, 'dX', { data: sum, shape: [...st.X.shape], dtype: a.dtype }, [key]);
  st.notes.push(
    `${key} ${shapeText(a.shape)} holds three arrays of X's shape, the paths of dX ` +
      '(dQm @ Wq.T, dKm @ Wk.T, dVm @ Wv.T, as a backward returns them for its q, k and v ' +
      'inputs): summed into dX, as X feeds all three',
  );
}

// the file's key read into something that is not an array of the check (a bias)
function consume(st, key) {
  delete st.arrays[key];
  st.used.add(key);
}

const asF64 = (a) => ({ ...a, data: Float64Array.from(a.data), shape: [...a.shape] });

// ------------------------------------------------------------------------------------------------
// weights: per-head stacks and lists, other names

// { join: 'columns' | 'rows', hs } for a stack (h, C, hs) (head i in columns i·hs…) or (h, hs, C)
// (head i in rows i·hs…), else null
function stackLayout(shape, C) {
  if (shape.length !== 3) return null;
  const [h, r, c] = shape;
  if (r === C && h * c === C) return { join: 'columns', hs: c };
  // (C, h, hs): each row's heads side by side, already the (C, C) of columns i·hs…(i+1)·hs
  if (h === C && r * c === C && r > 1) return { join: 'columns', hs: c, reshape: true };
  if (c === C && h * r === C) return { join: 'rows', hs: r };
  return null;
}

// A stack (h, r, c) of per-head matrices -> weight `name` (C, C), said as `label` is/are…
function joinStack(st, name, stack, keys, label) {
  const { C } = st;
  const [h, r, c] = stack.shape;
  const layout = stackLayout(stack.shape, C);
  const src = layout.join === 'columns' && !layout.reshape ? hstackIndex(h, r, c) : range(0, C * C);
  put(st, name, gather(stack, [C, C], src), keys);
  st.weights[name] = name;
  if (h === 1) {
    st.notes.push(
      `${label} is ${shapeText(stack.shape)}: read as one ${shapeText([C, C])} ${name}`,
    );
    return;
  }
  const what =
    keys.length === 1
      ? `${label} is a stack of ${h} per-head ${shapeText([r, c])} matrices`
      : `${label} are ${h} per-head ${shapeText([r, c])} matrices`;
  const into = keys.length === 1 && keys[0] === name ? '' : ` ${name}`;
  const where = `head i in ${layout.join} i·${layout.hs}…(i+1)·${layout.hs}`;
  st.notes.push(`${what}: joined into one ${shapeText([C, C])}${into}, ${where}`);
  if (name === 'Wo' || name === 'dWo') st.joined[name] = { label, join: layout.join, part: [r, c] };
  if (!name.startsWith('d')) st.evidence.push({ what, h, key: keys[0], rank: 1 });
}

// A head's mark beside its number: Wq_h0, WQ_0_h, Wq_head_1, heads.0.Wq
const HEAD_MARKS = ['heads', 'head', 'h'];

// s, and s without a head mark at its end (at = 'end') or its start
function unmarked(s, at) {
  const out = [s];
  for (const m of HEAD_MARKS) {
    if (at === 'end' && s.endsWith(m)) out.push(s.slice(0, -m.length));
    if (at === 'start' && s.startsWith(m)) out.push(s.slice(m.length));
  }
  return out;
}

/**
 * The weight and head number of a per-head key, or null: one number, a weight's name (or its
 * gradient's) before or after it, and a head mark (h, head, heads) next to it or none: Wq_0,
 * Wq_h1, WQ_0_h, W_q_head_2, head_0_Wq, h1_Wq, heads.0.W_q, Wq[0], dWq_0, W_q_grads_1, q_proj_0
 * -> { name: 'Wq' | 'dWq' …, index }. A second number (layer_0_Wq_1) or another word
 * (block0_Wq) is no head's.
 */
export function headKeyOf(key) {
  return headOf(key, 'weight');
}

// The role (kind 'weight' or 'bias') and head number of a per-head key, as headKeyOf
function headOf(key, kind) {
  // a module path with the head's number as one of its parts: heads.0.lin_Q.W, heads.1.lin_K.W.grad
  const parts = String(key).split(/[./]/);
  const at = parts.findIndex((p) => /^\d+$/.test(p));
  if (at >= 0 && at < parts.length - 1) {
    const role = layoutRole(parts.filter((_, k) => k !== at).join('.'));
    if (role?.kind === kind) return { name: role.name, index: Number(parts[at]) };
  }
  const flat = String(key)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  for (const s of new Set([norm(key), flat])) {
    const m = /^(\D*)(\d+)(\D*)$/.exec(s);
    if (!m) continue;
    for (const before of unmarked(m[1], 'end')) {
      for (const after of unmarked(m[3], 'start')) {
        const role = roleOfNorm(before + after);
        if (role?.kind === kind) return { name: role.name, index: Number(m[2]) };
      }
    }
  }
  return null;
}

// The weight (Wq … dWo) a key names whole, not one head's (heads.0.Wq is head 0's), or null
function wholeWeight(key) {
  const role = layoutRole(key);
  return role?.kind === 'weight' && headKeyOf(key) == null ? role.name : null;
}

// Per-head keys by weight (or by bias): { Wq: [[index, key], …] }
function headLists(arrays, kind = 'weight') {
  const lists = {};
  for (const key of Object.keys(arrays)) {
    const head = isArray(arrays[key]) ? headOf(key, kind) : null;
    if (head) (lists[head.name] ??= []).push([head.index, key]);
  }
  return lists;
}

// Per-head keys (from 0 or 1, one (C, hs) or (hs, C) each) joined into one weight; a key alone
// is the weight when it has the weight's shape ((C, C), or a per-head stack), else said
function joinHeadLists(st) {
  for (const [name, list] of Object.entries(headLists(st.arrays))) {
    const hasWeight = Object.keys(st.arrays).some((k) => wholeWeight(k) === name);
    if (hasWeight) continue; // Wq itself is in the file: it is used
    if (list.length === 1) {
      readLoneHead(st, name, list[0][1]);
      continue;
    }
    list.sort((a, b) => a[0] - b[0]);
    const keys = list.map(([, k]) => k);
    const parts = keys.map((k) => st.arrays[k]);
    const shape = [list.length, ...parts[0].shape];
    const ok =
      list.every(([i], j) => i === list[0][0] + j) &&
      list[0][0] <= 1 &&
      parts.every((a) => sameShape(a.shape, parts[0].shape)) &&
      stackLayout(shape, st.C);
    const label = `${keys[0]} … ${keys.at(-1)}`;
    if (ok) {
      joinStack(st, name, joinData(parts, shape), keys, label);
    } else {
      st.seen.add(name);
      st.notes.push(
        `${label} are not ${name}'s heads numbered from 0 or 1, one (C, hs) or (hs, C) ` +
          `matrix each with C = ${st.C} from X: left as they are`,
      );
    }
  }
}

// One per-head key alone (WO_0, Wo_h1): the weight itself when it has its shape (a single Wo
// saved as WO_0); one head's (C, hs) or (hs, C) slice with no other head's is said and left
function readLoneHead(st, name, key) {
  const { C } = st;
  const [r, c, ...more] = st.arrays[key].shape;
  const slice = more.length === 0 && r !== c && (r === C || c === C) && C % (r === C ? c : r) === 0;
  if (!slice) {
    readWeight(st, key, name);
    return;
  }
  st.seen.add(name);
  st.notes.push(
    `${key} ${shapeText([r, c])} is one head's slice of ${name} (C = ${C} from X) and your file ` +
      `has no other head's: ${name} cannot be built from it; left as it is`,
  );
}

// X saved as the query, key and value of a self-attention call (mha(x, x, x): its arguments
// saved by name, query/key/value or Q/K/V, all the same array) when the file has no X: read as
// X, said in a note (the arrays with the note, or the arrays as they were)
function selfAttentionInput(arrays) {
  if (arrays == null || typeof arrays !== 'object' || owner(arrays, 'X') != null) return arrays;
  const triples = [
    ['query', 'key', 'value'],
    ['q', 'k', 'v'],
  ];
  for (const [names, affixed] of [false, true].flatMap((a) => triples.map((t) => [t, a]))) {
    const keys = names.map((n) => argumentKey(arrays, n, affixed));
    if (keys.some((k) => k == null)) continue;
    const [a, ...rest] = keys.map((k) => arrays[k]);
    const same = (b) =>
      isArray(b) && sameShape(a.shape, b.shape) && b.data.every((x, i) => x === a.data[i]);
    if (!isArray(a) || a.shape.length < 2 || !rest.every(same)) continue;
    const out = Object.fromEntries(Object.entries(arrays).filter(([k]) => !keys.includes(k)));
    out.X = a;
    Object.defineProperty(out, SELF_NOTE, {
      value: {
        keys,
        note: `${keys.join(', ')} are one array (self-attention's input, passed as all three): read as X`,
      },
    });
    return out;
  }
  return arrays;
}
const SELF_NOTE = Symbol('self-attention input');

// C from the file's weights when they agree on one: (C, C), fused (C, 3C) / (3C, C), a head's
// (C, hs) / (hs, C) (its larger side); null when none is read or they disagree
// C of a stack of the heads' projections, (h, C, hs) or (h, hs, C) with C = h·hs; else null
function stackWidth(a, role) {
  if (!isArray(a) || a.shape.length !== 3 || role?.kind !== 'weight' || role.grad) return null;
  const [n, r, c] = a.shape;
  return r !== c && n * Math.min(r, c) === Math.max(r, c) ? Math.max(r, c) : null;
}

// C of a fused weight that keeps the heads' axis, (C, 3h, hs); else null
const headsFusedWidth = (a, role) =>
  isArray(a) && role?.kind === 'fused' && !role.grad && headsFused(a.shape, a.shape[0])
    ? a.shape[0]
    : null;

function weightsWidth(arrays) {
  const sizes = new Set();
  for (const [key, a] of Object.entries(arrays)) {
    const role = layoutRole(key);
    const width = stackWidth(a, role) ?? headsFusedWidth(a, role) ?? matrixWidth(key, a, role);
    if (width) sizes.add(width);
  }
  return sizes.size === 1 ? [...sizes][0] : null;
}

// C of a weight matrix: (C, C), fused (C, 3C) / (3C, C), a head's (C, hs) / (hs, C); else null
function matrixWidth(key, a, role) {
  const head = headKeyOf(key);
  if (!isArray(a) || a.shape.length !== 2 || role?.grad || head?.name.startsWith('d')) return null;
  const [r, c] = a.shape;
  if (role?.kind === 'weight' && head == null && r === c) return r;
  if (role?.kind === 'fused' && (c === 3 * r || r === 3 * c)) return Math.min(r, c);
  return head != null && r !== c ? Math.max(r, c) : null;
}

// a training run's weights before or after it (Wo_after, W_init …): never X
const RUN_MARKS = [...AFTER_MARKS, ...START_MARKS];
const TRAINING_MARK = new RegExp(`_?(${RUN_MARKS.join('|')})$`, 'i');

// X saved under a name of its own (h, hidden, tokens …) when the file has no X: the one array
// no name reads, (T, C) or (B, T, C) with the C of the file's weights, read as X and said
function unnamedInput(arrays) {
  if (arrays == null || typeof arrays !== 'object' || owner(arrays, 'X') != null) return arrays;
  const C = weightsWidth(arrays);
  if (C == null) return arrays;
  const fits = ([key, a]) =>
    isArray(a) &&
    (a.shape.length === 2 || a.shape.length === 3) &&
    a.shape.at(-1) === C &&
    courseName(key) == null &&
    layoutRole(key) == null &&
    headKeyOf(key) == null &&
    headOf(key, 'bias') == null &&
    !TRAINING_MARK.test(key);
  // (not a gradient beside another array: x.grad, grad_h, dh)
  const keys = Object.keys(arrays);
  const gradient = (k) =>
    /[./]grad$|^grad[./]/i.test(k) ||
    keys.some((o) => o !== k && gradientBases(norm(k)).includes(norm(o)));
  const found = Object.entries(arrays).filter((e) => fits(e) && !gradient(e[0]));
  if (found.length !== 1) return arrays;
  const [[key, X]] = found;
  const out = Object.fromEntries(Object.entries(arrays).filter(([k]) => k !== key));
  out.X = X;
  const note = `${key} ${shapeText(X.shape)} read as X: your file's one array of C = ${C} columns (from its weights) that no name reads`;
  Object.defineProperty(out, SELF_NOTE, { value: { keys: [key], note } });
  return out;
}
// the key of argument n (query, q …) as saved: n itself, or with an input affix (input_q, q_in)
const INPUT_AFFIX = /^(?:inputs?|inp|in|x)_|_(?:inputs?|inp|in)$/g;
const argumentKey = (arrays, n, affixed) =>
  Object.keys(arrays).find((k) =>
    affixed
      ? k.toLowerCase().replace(INPUT_AFFIX, '') === n && k.toLowerCase() !== n
      : k.toLowerCase() === n,
  );

// Arrays saved without names (np.savez(file, *params, *grads): arr_0, arr_1 …), when the file
// names no weight: its (C, C) ones read by their order as Wq, Wk, Wv, Wo, then dWq … dWo
function readPositional(st) {
  const named = Object.keys(st.arrays).some((k) => WEIGHTS.includes(courseName(k) ?? ''));
  if (named || Object.keys(st.arrays).some((k) => wholeWeight(k) || headKeyOf(k))) return;
  const { C } = st;
  const numbered = (re) =>
    Object.keys(st.arrays)
      .filter((k) => re.test(k) && isArray(st.arrays[k]) && sameShape(st.arrays[k].shape, [C, C]))
      .sort((a, b) => Number(a.match(/\d+$/)[0]) - Number(b.match(/\d+$/)[0]));
  const params = numbered(/^(arr|params?|p|weights?)_?\d+$/i);
  if (params.length < 4) return;
  // np.savez(f, *params, *grads): eight arr_N; or param_N beside grad_N
  const grads = params.length >= 8 ? params.slice(4, 8) : numbered(/^(grads?|g)_?\d+$/i);
  const take = (names, keys) =>
    names.forEach((name, i) => {
      put(st, name, asF64(st.arrays[keys[i]]), [keys[i]]);
      st.weights[name] = name;
      st.seen.add(name);
    });
  take(WEIGHTS, params);
  const list = (xs) => `${xs[0]} … ${xs[3]}`;
  let text = `${list(params)} (saved without names) read by their order as Wq, Wk, Wv, Wo`;
  if (grads.length >= 4) {
    take(GRADS, grads);
    text += `, and ${list(grads)} as dWq, dWk, dWv, dWo`;
  }
  st.notes.push(text);
}

// Weights (and their gradients) under any name: (C, C) renamed, stacks joined
// (in the file's order: a key that is not the course's own name defers to the one that is, found
// by owner(), whatever comes first)
function readWeights(st) {
  const keys = Object.keys(st.arrays).filter((k) => wholeWeight(k) != null);
  for (const key of keys) readWeight(st, key, wholeWeight(key));
}

function readWeight(st, key, name) {
  const a = st.arrays[key];
  const { C } = st;
  if (!isArray(a)) return; // the check says what is wrong with it
  st.seen.add(name);
  const known = courseName(key) === name; // names.js reads it (and notes a second one)
  // (a holder of another shape, a module's input gradient W_o.grad, is none)
  let holder = st.weights[name] ?? owner(st.arrays, name);
  if (holder !== st.weights[name] && st.arrays[holder]?.shape?.length === 3) holder = null;
  if (holder != null && holder !== key) {
    if (!known) st.notes.push(`${key} not used as ${name}: your file has ${holder}`);
    return;
  }
  if (sameShape(a.shape, [C, C])) {
    st.weights[name] = key;
    if (known) return;
    put(st, name, asF64(a), [key]);
    st.weights[name] = name;
    st.notes.push(`${key} read as ${name}`);
  } else if (stackLayout(a.shape, C)) {
    joinStack(st, name, asF64(a), [key], key);
  } else if (!known) {
    st.notes.push(
      `${key} has shape ${shapeText(a.shape)}: ${name} is (C, C) = ${shapeText([C, C])} ` +
        `with C = ${C} from X; left as it is`,
    );
  }
}

// ------------------------------------------------------------------------------------------------
// fused projections: Wq | Wk | Wv in one matrix (or Q | K | V in one result)

// A fused weight whose columns keep the heads' axis, (C, 3h, hs): (C, 3C) with the same entries
const headsFused = ([c, n, hs, ...more], C) =>
  !more.length && c === C && n % 3 === 0 && n * hs === 3 * C;

// How a fused array of this shape splits, or null: its three parts' flat indices and shape
function fusedLayout(st, shape) {
  const { C } = st;
  const lead = st.X.shape.slice(0, -1);
  const block = (i) => range(i * C * C, C * C);
  if (sameShape(shape, [C, 3 * C]) || headsFused(shape, C)) {
    return { kind: 'columns', part: [C, C], src: (i) => columnsIndex(C, 3 * C, i * C, C) };
  }
  if (sameShape(shape, [3 * C, C])) return { kind: 'rows', part: [C, C], src: block };
  if (sameShape(shape, [3, C, C])) return { kind: 'stack', part: [C, C], src: block };
  if (sameShape(shape, [...lead, 3 * C])) {
    return { kind: 'result', part: [...lead, C], src: (i) => columnsIndex(st.N, 3 * C, i * C, C) };
  }
  return null;
}

// "c_attn (24, 72) holds Wq, Wk, Wv side by side, used as X @ W: split into …"
function fusedNote(key, shape, names, layout, C) {
  const head = `${key} ${shapeText(shape)} holds ${names.join(', ')}`;
  const grad = names[0].startsWith('d');
  switch (layout.kind) {
    case 'columns': {
      const use = grad ? '' : ', used as X @ W';
      const heads = shape.length === 3 ? `, each head's ${shape[2]} columns in turn` : '';
      return `${head} side by side${use}${heads}: split into its three column blocks of ${C}`;
    }
    case 'rows': {
      const use = grad ? '' : ' and used as X @ W.T';
      return (
        `${head} one above the other, stored (out, in)${use} as PyTorch's in_proj_weight: ` +
        `split into its three row blocks of ${C}`
      );
    }
    case 'stack':
      return `${head} one after the other: split into the three`;
    default:
      return `${head} side by side: split into the three, each ${shapeText(layout.part)}`;
  }
}

// A fused weight, its gradient or a fused Q | K | V result -> three course arrays
function readFused(st, key, grad) {
  const a = st.arrays[key];
  const { C } = st;
  if (!isArray(a)) return;
  const layout = fusedLayout(st, a.shape);
  if (!layout) {
    st.notes.push(
      `${key} has shape ${shapeText(a.shape)}: a fused Wq, Wk, Wv is (C, 3C) = ` +
        `${shapeText([C, 3 * C])} or (3C, C) = ${shapeText([3 * C, C])} with C = ${C} ` +
        'from X; left as it is',
    );
    return;
  }
  const isResult = layout.kind === 'result';
  const names = (isResult ? ['Q', 'K', 'V'] : ['Wq', 'Wk', 'Wv']).map((n) => (grad ? `d${n}` : n));
  const taken = names.filter((n) => st.weights[n] ?? owner(st.arrays, n));
  if (taken.length) {
    st.notes.push(`${key} not used: your file has ${taken.join(', ')} too`);
    return;
  }
  const parts = names.map((n, i) => gather(asF64(a), layout.part, layout.src(i)));
  names.forEach((n, i) => put(st, n, parts[i], [key]));
  if (!isResult) names.forEach((n) => (st.weights[n] = n));
  if (layout.kind === 'columns') st.fusedConvention ??= 'in-out';
  if (layout.kind === 'rows') st.fusedConvention ??= 'out-in';
  st.notes.push(fusedNote(key, a.shape, names, layout, C));
}

// ------------------------------------------------------------------------------------------------
// biases

// bq, bk, bv, bo (and fused ones) -> st.biases; a zero bias is dropped, each said
function readBiases(st) {
  for (const key of Object.keys(st.arrays)) {
    const role = layoutRole(key);
    const isBias = role && !role.grad && ['bias', 'fusedBias'].includes(role.kind);
    if (isBias && isArray(st.arrays[key])) readBias(st, key, role);
  }
}

function readBias(st, key, role) {
  const { C } = st;
  const a = st.arrays[key];
  const names = role.kind === 'bias' ? [role.name] : ['bq', 'bk', 'bv'];
  const taken = names.filter((n) => st.biases[n]);
  if (a.data.length !== names.length * C || taken.length) {
    const what = names.length > 1 ? 'a fused bias' : 'a bias';
    const why = taken.length
      ? `your file has ${taken.join(', ')} already`
      : `${what} has ${names.length * C} entries with C = ${C} from X`;
    st.notes.push(`${key} ${shapeText(a.shape)} not read as a bias: ${why}; left as it is`);
    return;
  }
  consume(st, key);
  const label = (i) => (names.length > 1 ? `${key}[${i * C}:${(i + 1) * C}]` : key);
  takeBiases(st, names, Float64Array.from(a.data), key, label);
}

// names' biases from data (C entries each, one after another), read from `key` (label(i): where
// names[i] came from); a zero one dropped, said
function takeBiases(st, names, data, key, label) {
  const { C } = st;
  const parts = names.map((_, i) => data.slice(i * C, (i + 1) * C));
  const zero = parts.map((p) => p.every((v) => v === 0));
  const dropped = "dropped (the course's layer has no bias)";
  if (zero.every(Boolean)) {
    st.notes.push(`your ${key} is all zeros: ${dropped}`);
    return;
  }
  names.forEach((n, i) => {
    if (zero[i]) st.notes.push(`your ${n} (in ${key}) is all zeros: ${dropped}`);
    else st.biases[n] = parts[i];
    st.biasKeys[n] = label(i);
  });
}

// Per-head biases (heads.0.query.bias …, hs entries each, numbered from 0 or 1) joined into one
// (C,) bias, head i in entries i·hs…(i+1)·hs, as their weights are joined; else said and left
function joinHeadBiases(st) {
  const { C } = st;
  for (const [name, list] of Object.entries(headLists(st.arrays, 'bias'))) {
    if (st.biases[name]) continue;
    list.sort((a, b) => a[0] - b[0]);
    const keys = list.map(([, k]) => k);
    const parts = keys.map((k) => st.arrays[k]);
    const hs = parts[0].data.length;
    const label = `${keys[0]} … ${keys.at(-1)}`;
    const ok =
      list.every(([i], j) => i === list[0][0] + j) &&
      list[0][0] <= 1 &&
      parts.every((a) => a.data.length === hs) &&
      hs * keys.length === C;
    if (!ok) {
      st.notes.push(
        `${label} are not ${name}'s heads numbered from 0 or 1, ${C} entries together with ` +
          `C = ${C} from X: not read as a bias; left as they are`,
      );
      keys.forEach((k) => consume(st, k));
      continue;
    }
    keys.forEach((k) => consume(st, k));
    const data = Float64Array.from(parts.flatMap((a) => Array.from(a.data)));
    st.notes.push(
      `${label} are ${keys.length} per-head biases (${hs},): joined into one (${C},) ${name}`,
    );
    takeBiases(st, [name], data, label, () => label);
  }
}

function biasNote(st) {
  const names = BIASES.filter((n) => st.biases[n]);
  if (!names.length) return;
  st.notes.push(
    `your layer has biases (${names.join(', ')}); the course's layer has none: the check ` +
      "compares your arrays with the course's layer and names any difference a bias makes",
  );
}

// ------------------------------------------------------------------------------------------------
// results saved per head: heads first, and the number of heads they show

// h of a result in the course's split layout, (B, h, T, hs) / (B, h, T, T) or without B = 1
function splitHeadCount(st, tt, shape) {
  const { B, T, C } = st;
  const fits = (h, t, x) => t === T && h >= 1 && (tt ? x === T && C % h === 0 : h * x === C);
  if (shape.length === 4 && shape[0] === B && fits(shape[1], shape[2], shape[3])) return shape[1];
  if (shape.length === 3 && B === 1 && shape[0] > 1 && fits(...shape)) return shape[0];
  return null;
}

// h of a result saved heads first, (h, B, T, hs) / (h, B, T, T); asked only when the shape is
// not (B, h, T, …), so never for h = B (there both layouts have the same shape)
function headsFirstCount(st, tt, shape) {
  const [p, q, t, x] = shape;
  if (shape.length !== 4 || q !== st.B || t !== st.T) return null;
  return (tt ? x === st.T && st.C % p === 0 : p * x === st.C) ? p : null;
}

// h of a (T, T) map saved tokens first, (B, T, h, T) or (T, h, T) for B = 1 (an einsum's
// 'bqhk' order): the query's axis before the head's; never when h = T (both layouts the same)
function tokensFirstCount(st, shape) {
  const { B, T, C } = st;
  const lead = shape.length === 4 ? shape[0] : 1;
  const [t, h, k] = shape.slice(-3);
  if (shape.length < 3 || shape.length > 4 || lead !== B || (shape.length === 3 && B !== 1)) {
    return null;
  }
  return t === T && k === T && h !== T && h >= 1 && C % h === 0 ? h : null;
}

// A (T, T) map saved tokens first, read as (B, h, T, T): the query's and the head's axes swapped
function readTokensFirst(st, key, name) {
  const a = st.arrays[key];
  const h = tokensFirstCount(st, a.shape);
  if (h == null) return false;
  const { B, T } = st;
  const src = new Int32Array(B * h * T * T);
  const one = swapLeadingIndex(T, h, T);
  const block = h * T * T;
  for (let b = 0; b < B; b++) {
    src.set(
      one.map((j) => j + b * block),
      b * block,
    );
  }
  const shape = [B, h, T, T];
  const target = owner(st.arrays, name) === key ? name : key;
  put(st, target, gather(asF64(a), shape, src), [key]);
  st.notes.push(
    `${key} ${shapeText(a.shape)} is saved tokens first, (B, T, h, T): transposed to ` +
      `${shapeText(shape)}, (B, h, T, T) as the course has it`,
  );
  st.evidence.push({ what: `${key} is ${shapeText(a.shape)}`, h, key, rank: 0 });
  return true;
}

function readSplitResults(st) {
  for (const key of Object.keys(st.arrays)) {
    const name = courseName(key);
    const tt = TT_RESULTS.includes(name);
    const a = st.arrays[key];
    if ((!tt && !HS_RESULTS.includes(name)) || !isArray(a)) continue;
    const what = `${key} is ${shapeText(a.shape)}`;
    const h = splitHeadCount(st, tt, a.shape);
    if (h != null) st.evidence.push({ what, h, key, rank: 0 });
    if (h == null && tt && readTokensFirst(st, key, name)) continue;
    const first = h == null ? headsFirstCount(st, tt, a.shape) : null;
    if (first == null) continue;
    const [p, q, t, x] = a.shape;
    const shape = [q, p, t, x];
    const target = owner(st.arrays, name) === key ? name : key;
    put(st, target, gather(asF64(a), shape, swapLeadingIndex(p, q, t * x)), [key]);
    const axis = tt ? 'T' : 'hs';
    const to = target === key ? '' : `${target} `;
    st.notes.push(
      `${key} ${shapeText(a.shape)} is saved heads first, (h, B, T, ${axis}): transposed to ` +
        `${to}${shapeText(shape)}, (B, h, T, ${axis}) as the course has it`,
    );
    st.evidence.push({ what, h: first, key, rank: 0 });
  }
}

// An attention layer's output named for the layer (attn, attention) and shaped like X, where the
// course's att is (B, h, T, T): read as Y (its gradient as dY) when the file has none, said
function readOutputsNamedAtt(st) {
  for (const [from, to] of [
    ['att', 'Y'],
    ['datt', 'dY'],
  ]) {
    const key = Object.keys(st.arrays).find(
      (k) =>
        k !== from &&
        courseName(k) === from &&
        isArray(st.arrays[k]) &&
        sameShape(st.arrays[k].shape, st.X.shape),
    );
    if (key == null || owner(st.arrays, to) != null) continue;
    const a = st.arrays[key];
    put(st, to, a, [key]);
    st.notes.push(
      `${key} ${shapeText(a.shape)} read as ${to}: shaped like X, as the layer's output is, ` +
        `where ${from} is (B, h, T, T)`,
    );
  }
}

const validHeads = (h, C) => Number.isInteger(h) && h >= 1 && C % h === 0;

// The file's number of heads when its arrays show one and the option differs, said
function inferHeads(st) {
  const seen = [...st.evidence].sort((a, b) => a.rank - b.rank);
  const counts = [...new Set(seen.map((e) => e.h))];
  if (counts.length > 1) {
    const list = [...new Map(seen.map((e) => [e.key, `${e.key}: ${e.h}`])).values()];
    st.notes.push(
      `your arrays show different numbers of heads (${list.join(', ')}): checked with ` +
        `${String(st.heads)} as set`,
    );
    return;
  }
  if (counts.length === 0 || counts[0] === Number(st.heads)) return;
  const h = counts[0];
  const set = Number.isInteger(st.heads) && st.heads >= 1 ? `, not ${st.heads} as set` : '';
  const heads = h === 1 ? '1 head' : `${h} heads`;
  st.notes.push(`your ${seen[0].what}: ${heads}${set}; checked with ${h}`);
  st.heads = h;
}

// ------------------------------------------------------------------------------------------------
// a missing Wo, and the (out, in) convention

function addIdentityWo(st) {
  const { C } = st;
  if (st.seen.has('Wo') || owner(st.arrays, 'Wo') != null) return;
  if (!['Wq', 'Wk', 'Wv'].every((w) => st.weights[w])) return;
  if (loneWeightAsWo(st)) return;
  const data = new Float64Array(C * C);
  for (let i = 0; i < C; i++) data[i * C + i] = 1;
  st.arrays.Wo = { data, shape: [C, C], dtype: '<f8' };
  st.weights.Wo = 'Wo';
  st.from.Wo = [];
  st.notes.push(
    'no Wo in your file: your layer has no output projection, so Wo = I (the identity) is ' +
      'used: Y = concat',
  );
}

// The output projection saved under a generic name (W, weight, proj …: a layer of per-head
// objects and one (C, C) matrix after them) when it is the file's only (C, C) array not read:
// read as Wo, its gradient (dW, grad_W …) as dWo, said in a note
const GENERIC_WEIGHT = /^(w|weights?|proj|projection|linear|dense|fc)$/i;
function loneWeightAsWo(st) {
  const { C } = st;
  const square = (k) =>
    !st.used.has(k) && isArray(st.arrays[k]) && sameShape(st.arrays[k].shape, [C, C]);
  const free = Object.keys(st.arrays).filter(square);
  // (k the gradient of key: grad_W of W, or in key's module a gradient of its weight, linear.dE_dW)
  const modulePath = (k) => k.split(/[./]/).slice(0, -1).join('.');
  const weightGrad = (k) => {
    const last = k.split(/[./]/).at(-1).toLowerCase().replaceAll('_', '');
    return gradientBases(last).some((b) => ['w', 'weight', 'weights', 'kernel'].includes(b));
  };
  const gradOf = (k, key) =>
    k !== key &&
    (gradientBases(norm(k)).includes(norm(key)) ||
      (weightGrad(k) && modulePath(k) !== '' && modulePath(k) === modulePath(key)));
  const generic = free.filter((k) => GENERIC_WEIGHT.test(k));
  // else a (C, C) array the file names in words of its own (output_dense.kernel), not a gradient
  const unnamed = free.filter(
    (k) =>
      courseName(k) == null &&
      layoutRole(k) == null &&
      !free.some((w) => gradOf(k, w)) &&
      !weightGrad(k) &&
      st.arrays[k].data.some((v) => !Number.isInteger(v)), // (a mask is 0s and 1s)
  );
  const lone = generic.length ? generic : unnamed;
  if (lone.length !== 1) return false;
  const [key] = lone;
  const gradKey = free.find((k) => gradOf(k, key));
  st.arrays.Wo = st.arrays[key];
  st.weights.Wo = 'Wo';
  st.from.Wo = [key];
  st.used.add(key);
  let note = `${key} read as Wo (your layer's one (${C}, ${C}) matrix besides Wq, Wk and Wv)`;
  if (gradKey && owner(st.arrays, 'dWo') == null) {
    st.arrays.dWo = st.arrays[gradKey];
    st.weights.dWo = 'dWo'; // (transposed with Wo when the weights are read (out, in))
    st.from.dWo = [gradKey];
    st.used.add(gradKey);
    note += `, ${gradKey} as dWo`;
  }
  st.notes.push(note);
  // (its module's bias beside it, linear.weights and linear.bias: bo)
  const biasKey = modulePath(key)
    ? Object.keys(st.arrays).find(
        (k) =>
          modulePath(k) === modulePath(key) &&
          /^(b|bias|biases)$/i.test(k.split(/[./]/).at(-1)) &&
          isArray(st.arrays[k]),
      )
    : null;
  if (biasKey && !st.biases.bo) readBias(st, biasKey, { kind: 'bias', name: 'bo' });
  return true;
}

const withBias = (x, b) => (b ? x.map((v, i) => v + b[i % b.length]) : x);

// Weight `name` as a (C, C) array, or null
function weightOf(st, name) {
  const key = st.weights[name];
  return key == null ? null : st.arrays[key];
}

// Result `name` (Q, K, V or Y) as (N, C) C-order data, merged from (B, h, T, hs); or null
function mergedResult(st, name) {
  const key = owner(st.arrays, name);
  const a = key == null ? null : st.arrays[key];
  if (!isArray(a)) return null;
  const { B, T, C, heads } = st;
  if (sameShape(a.shape, [B, T, C]) || (B === 1 && sameShape(a.shape, [T, C]))) return asF64(a);
  if (name === 'Y' || !validHeads(heads, C)) return null;
  const split = [B, heads, T, C / heads];
  if (!sameShape(a.shape, split) && !(B === 1 && sameShape(a.shape, split.slice(1)))) return null;
  const s = { B, T, C, heads };
  const merged = { ...a, data: ops.mergeHeads(Float64Array.from(a.data), s), shape: [B, T, C] };
  if (a.resolution) merged.resolution = ops.mergeHeads(Float64Array.from(a.resolution), s);
  return merged;
}

// 'out-in' when yours agrees with a recomputation from the transposed weights only, 'in-out'
// when with the weights as they are only, else null. compute(transB) -> candidate arrays.
function verdictOf(yours, inputs, compute) {
  const slack = TEXT_GROWTH * Math.max(0, ...[yours, ...inputs].map(relativeResolution));
  const { dtype, resolution, printedDtype } = yours;
  const opts = { dtype, resolution, printedDtype, slack, slackText: 'printed arrays' };
  const asIs = compute(false).some((r) => agrees(yours.data, r, opts));
  const transposed = compute(true).some((r) => agrees(yours.data, r, opts));
  if (transposed !== asIs) return transposed ? 'out-in' : 'in-out';
  return null;
}

// The course's forward to Y from X, the weights W = [Wq, Wk, Wv, Wo] (each transposed with
// transB) and the file's biases
function forwardY(st, W, { transB, causal }) {
  const { B, T, C, N, heads } = st;
  const hs = C / heads;
  const s = { B, T, C, heads };
  const lin = (x, w, b) => withBias(ops.matmul(x, w, { m: N, k: C, n: C, transB }), b);
  const [Q, K, V] = [0, 1, 2].map((i) =>
    ops.splitHeads(lin(st.X.data, W[i], st.biases[BIASES[i]]), s),
  );
  const mm = { batch: B * heads, m: T };
  const scores = ops.divide(ops.matmul(Q, K, { ...mm, k: hs, n: T, transB: true }), Math.sqrt(hs));
  const att = ops.softmaxRows(causal ? ops.causalMask(scores, T) : scores, T);
  const headout = ops.matmul(att, V, { ...mm, k: T, n: hs });
  return lin(ops.mergeHeads(headout, s), W[3], st.biases.bo);
}

// The verdicts of the file's Q, K and V (each recomputed from X and its weight), in order
function projectionVerdicts(st) {
  const { N, C } = st;
  const pairs = [
    ['Q', 'Wq', 'bq'],
    ['K', 'Wk', 'bk'],
    ['V', 'Wv', 'bv'],
  ];
  return pairs.map(([name, w, b]) => {
    const yours = mergedResult(st, name);
    const W = weightOf(st, w);
    if (!yours || !W) return null;
    const lin = (transB) => [
      withBias(ops.matmul(st.X.data, W.data, { m: N, k: C, n: C, transB }), st.biases[b]),
    ];
    return verdictOf(yours, [st.X, W], lin);
  });
}

// X @ W or X @ W.T: what the file's Q, K and V were computed with when they all agree (one of
// them transposed and the others not is a mistake for the check to name, not a convention);
// with none of them, what Y was computed with
function decideConvention(st) {
  const verdicts = new Set(projectionVerdicts(st).filter(Boolean));
  if (verdicts.size > 1) return null;
  if (verdicts.size === 1) return [...verdicts][0];
  const Y = mergedResult(st, 'Y');
  const W = WEIGHTS.map((w) => weightOf(st, w));
  if (W.some((w) => !w) || !validHeads(st.heads, st.C)) return null;
  const data = W.map((w) => w.data);
  const run = (transB) => [false, true].map((causal) => forwardY(st, data, { transB, causal }));
  if (Y) return verdictOf(Y, [st.X, ...W], run);
  return lossVerdict(st, [st.X, ...W], run);
}

// A training file without Y: its first loss, at the initial weights, against the MSE loss of
// each reading's Y and the file's target
function lossVerdict(st, inputs, run) {
  const key = Object.keys(st.arrays).find((k) => /^(losses|loss_?history|history)$/i.test(k));
  const losses = key == null ? null : st.arrays[key];
  const target = mergedResult(st, 'target');
  if (!isArray(losses) || !losses.data?.length || !target) return null;
  // (a loss computed from float32 arrays holds float32's precision, whatever it is saved as)
  const f4 = [...inputs, target].some((a) => /f4/.test(a.dtype ?? ''));
  const first = {
    ...losses,
    data: Float64Array.of(Number(losses.data[0])),
    shape: [1],
    ...(f4 ? { dtype: '<f4' } : {}),
  };
  const mse = (Y) =>
    Float64Array.of(Y.reduce((a, y, i) => a + (y - target.data[i]) ** 2, 0) / Y.length);
  return verdictOf(first, [...inputs, target], (transB) => run(transB).map(mse));
}

// The reading of the weights the student chose ('in-out': X @ W, the course's; 'out-in': X @ W.T,
// PyTorch's nn.Linear) or, with 'auto', what the arrays show. The course's convention comes
// first: the course's own names for Wq, Wk and Wv (not per-head lists, fused or module names) used
// as X @ W.T are the forward's mistake, said in the check's rows; the (out, in) reading is
// offered (st.offered) in a note. PyTorch's names (q_proj.weight …) are read (out, in) when the
// arrays show it.
function applyConvention(st) {
  const shown = st.fusedConvention ?? decideConvention(st);
  const chosen = st.weightsOption;
  if (chosen === 'in-out') {
    st.convention = 'in-out';
    return;
  }
  if (chosen !== 'out-in' && shown === 'out-in' && courseNamed(st)) {
    st.convention = 'in-out';
    st.offered = 'out-in';
    st.notes.push(
      `your ${PROJECTIONS.map((w) => st.weights[w]).join(', ')} reproduce your arrays only ` +
        "used as X @ W.T: read as the course's (in, out) weights, used as X @ W, so the rows " +
        "below name the transpose as the forward's mistake; if your weights are stored (out, " +
        'in) on purpose (PyTorch\'s nn.Linear), read them so with the option "weights stored ' +
        '(out, in)"',
    );
    return;
  }
  st.convention = chosen === 'out-in' ? 'out-in' : shown;
  if (st.convention !== 'out-in') return;
  const { C } = st;
  for (const name of [...WEIGHTS, ...GRADS]) {
    const a = weightOf(st, name);
    if (!a) continue;
    put(st, name, gather(asF64(a), [C, C], transposeIndex(C, C)), [st.weights[name]]);
    st.weights[name] = name;
  }
  const why = chosen === 'out-in' ? "as you chose: PyTorch's nn.Linear" : "PyTorch's nn.Linear";
  st.notes.push(
    `your weights are stored (out, in) and used as X @ W.T (${why}): ` +
      'transposed all four and their gradients',
  );
}

const PROJECTIONS = ['Wq', 'Wk', 'Wv'];

// Wq, Wk and Wv each saved under a course name of its own (Wq, W_q, WQ …), read as they are, in
// a file saved as the course's rows (a features-first file's Q = Wq @ X is its frame's (out, in))
const courseNamed = (st) =>
  st.fusedConvention == null &&
  !st.featuresFirst &&
  PROJECTIONS.every(
    (w) => st.weights[w] != null && st.from[w] == null && courseName(st.weights[w]) === w,
  );

// Wo joined from per-head slices: head i's output (T, hs) meets its slice on the hs axis, so
// concat @ Wo = Σ headout_i @ Wo_i for (hs, C) slices (Wo = np.vstack(slices)) and
// Σ headout_i @ Wo_i.T for (C, hs) ones (nn.Linear(hs, C) per head: Wo = np.vstack of their
// transposes), whatever the other weights' convention. The join (head i in rows or columns) and
// the convention are undone where they differ from that; the file's Y, when saved, proves it:
// when Y is reproduced only with the other Wo, that one is used. dWo joined from slices too goes
// with Wo. Each change said.
function composeWo(st) {
  const joined = st.joined.Wo;
  if (!joined || !weightOf(st, 'Wo')) return;
  const flip = (joined.join === 'rows') === (st.convention === 'out-in');
  const proof = woProof(st, flip);
  const turn = proof === 'other' ? !flip : flip;
  if (!turn) return;
  const { C } = st;
  const names = ['Wo', 'dWo'].filter((n) => n === 'Wo' || st.joined[n]?.join === joined.join);
  for (const name of names) {
    const a = weightOf(st, name);
    if (!a) continue;
    put(st, name, gather(asF64(a), [C, C], transposeIndex(C, C)), [st.weights[name]]);
    st.weights[name] = name;
  }
  st.notes.push(composeNote(joined, { proof, dWo: names.length > 1 }));
}

function composeNote({ label, join, part }, { proof, dWo }) {
  const also = dWo ? ' (and dWo with it)' : '';
  if (proof === 'other') {
    return (
      `${label}: your Y is reproduced only with Wo transposed from the way per-head slices ` +
      `compose: Wo transposed${also}`
    );
  }
  const proven = proof === 'same' ? ' (your Y, recomputed with it, matches)' : '';
  if (join === 'columns') {
    return (
      `${label} are ${shapeText(part)} = (C, hs) slices of Wo: head i's output meets its ` +
      `slice only as headout_i @ Wo_i.T, so Wo = np.vstack([Wo_i.T …])${also}${proven}`
    );
  }
  return (
    `${label} are ${shapeText(part)} = (hs, C) slices of Wo: each multiplies its head's ` +
    `output as headout_i @ Wo_i, so Wo = np.vstack([Wo_i …]), not transposed with the other ` +
    `weights${also}${proven}`
  );
}

// What the file's Y says of Wo's composition: 'same' when Y is reproduced with the composed Wo
// (the current one, transposed when flip) only, 'other' when with the other one only, else null
function woProof(st, flip) {
  const Y = mergedResult(st, 'Y');
  const W = WEIGHTS.map((w) => weightOf(st, w));
  if (!Y || W.some((w) => !w) || !validHeads(st.heads, st.C)) return null;
  const { C } = st;
  const data = W.map((w) => w.data);
  const turned = Float64Array.from(transposeIndex(C, C), (j) => data[3][j]);
  const [composed, other] = flip ? [turned, data[3]] : [data[3], turned];
  const run = (wo) =>
    [false, true].map((causal) =>
      forwardY(st, [...data.slice(0, 3), wo], { transB: false, causal }),
    );
  const verdict = verdictOf(Y, [st.X, ...W], (t) => run(t ? other : composed));
  if (verdict === 'out-in') return 'other';
  return verdict === 'in-out' ? 'same' : null;
}

// ------------------------------------------------------------------------------------------------
// X saved features first, (C, T)

// The arrays laid out as X is, (B, T, C) or (T, C): the inputs and the results of X's shape
const TOKEN_ROWS = ['X', 'dY', 'target', 'Y', 'dX', 'concat', 'dconcat', ...HS_RESULTS];

// The sizes C a weight's shape shows: (C, C); a per-head stack (h, C, hs) or (h, hs, C)
function weightShapeSizes([p, q, r, ...more]) {
  if (more.length) return [];
  if (r === undefined) return p === q ? [p] : [];
  return [...(p * r === q ? [q] : []), ...(p * q === r ? [r] : [])];
}

// The sizes C a fused matrix's shape shows: (C, 3C), (3C, C), (3, C, C)
function fusedShapeSizes([p, q, r, ...more]) {
  if (more.length) return [];
  if (r === undefined) return [...(p === 3 * q ? [q] : []), ...(q === 3 * p ? [p] : [])];
  return [...(p === 3 && q === r ? [q] : []), ...(headsFused([p, q, r], p) ? [p] : [])];
}

// The sizes C the file's weights show, read without X, by weight: { Wq: Set, … } from weights
// and their stacks (gradients too), fused matrices (Wq, Wk and Wv), lists of h per-head (C, hs)
// or (hs, C) keys
function weightSizes(arrays) {
  const sizes = Object.fromEntries(WEIGHTS.map((w) => [w, new Set()]));
  const add = (names, list) => names.forEach((n) => list.forEach((c) => sizes[n].add(c)));
  for (const [key, a] of Object.entries(arrays)) {
    const role = isArray(a) ? layoutRole(key) : null;
    const whole = isArray(a) ? wholeWeight(key) : null;
    if (whole) add([whole.replace(/^d/, '')], weightShapeSizes(a.shape));
    if (role?.kind === 'fused') add(['Wq', 'Wk', 'Wv'], fusedShapeSizes(a.shape));
  }
  for (const [name, list] of Object.entries(headLists(arrays))) {
    const [r, c, ...more] = arrays[list[0][1]].shape;
    if (more.length || list.length < 2) continue;
    add([name.replace(/^d/, '')], weightShapeSizes([list.length, r, c]));
  }
  return sizes;
}

// Whether X (…, a, b) fits the weights only as (…, C, T): Wq, Wk and Wv all show C = a and not
// b, and no weight shows b
function onlyFeaturesFirst(arrays, a, b) {
  const sizes = weightSizes(arrays);
  const qkv = ['Wq', 'Wk', 'Wv'].every((w) => sizes[w].has(a) && !sizes[w].has(b));
  return qkv && !sizes.Wo.has(b);
}

// (…, a, b) -> (…, b, a): the last two axes swapped, item by item
function swapLastIndex(shape) {
  const [a, b] = shape.slice(-2);
  const items = sizeOf(shape.slice(0, -2));
  const one = transposeIndex(a, b);
  const src = new Int32Array(items * a * b);
  for (let i = 0; i < items; i++) {
    const at = i * a * b;
    src.set(
      one.map((j) => j + at),
      at,
    );
  }
  return src;
}

const swapLast = (shape) => [...shape.slice(0, -2), shape.at(-1), shape.at(-2)];
const transposed = (key, shape) => (shape.length === 2 ? `${key}.T` : `${key}.transpose(0, 2, 1)`);

// The keys laid out as X that the check reads (one per course name): those saved as X is when X
// is features first, else a dY or target saved (C, T) beside an X (T, C)
function featuresFirstKeys(arrays, X, swapped) {
  return Object.keys(arrays).filter((k) => {
    const name = courseName(k);
    if (!TOKEN_ROWS.includes(name) || owner(arrays, name) !== k || !isArray(arrays[k])) {
      return false;
    }
    if (swapped) return sameShape(arrays[k].shape, X.shape);
    return ['dY', 'target'].includes(name) && sameShape(arrays[k].shape, swapLast(X.shape));
  });
}

/**
 * X saved features first, (C, T) or (B, C, T), read transposed when only that fits the weights:
 * its size on the token axis is a C the weights show and its last size is not. X's other arrays
 * saved as X is are transposed with it; a dY or target saved (C, T) beside an X (T, C) too (the
 * check needs them as X). -> { arrays, notes, used }, arrays untouched when nothing is.
 */
function readFeaturesFirst(arrays) {
  const none = { arrays, notes: [], used: [] };
  const xKey = owner(arrays, 'X');
  const X = xKey == null ? null : arrays[xKey];
  if (!isArray(X) || (X.shape.length !== 2 && X.shape.length !== 3)) return none;
  const [a, b] = X.shape.slice(-2);
  if (a === b) return none;
  const swapped = onlyFeaturesFirst(arrays, a, b);
  const keys = featuresFirstKeys(arrays, X, swapped);
  if (!keys.length) return none;
  const out = { ...arrays };
  for (const k of keys) {
    const shape = arrays[k].shape;
    out[k] = gather(asF64(arrays[k]), swapLast(shape), swapLastIndex(shape));
  }
  return { arrays: out, notes: featuresFirstNotes(keys, { X, xKey, swapped }), used: keys };
}

function featuresFirstNotes(keys, { X, xKey, swapped }) {
  const lead = X.shape.length === 3 ? 'B, ' : '';
  const course = `(${lead}T, C)`;
  const first = `(${lead}C, T)`;
  const others = keys.filter((k) => k !== xKey);
  if (!swapped) {
    const was = `${shapeText(swapLast(X.shape))} = ${first}`;
    const x = `${xKey} is ${course} = ${shapeText(X.shape)}`;
    return others.map((k) => `${k} is ${was} while ${x}: read as ${transposed(k, X.shape)}`);
  }
  const C = X.shape.at(-2);
  const notes = [
    `${xKey} is ${shapeText(X.shape)} and your Wq, Wk, Wv give C = ${C}: ${xKey} is saved ` +
      `features first, ${first}; read as ${transposed(xKey, X.shape)}, ` +
      `${shapeText(swapLast(X.shape))}`,
  ];
  if (others.length) {
    const verb = others.length > 1 ? 'are' : 'is';
    notes.push(
      `${others.join(', ')} ${verb} saved features first as ${xKey} is: read transposed too, ` +
        `${course} = ${shapeText(swapLast(X.shape))}`,
    );
  }
  return notes;
}

// ------------------------------------------------------------------------------------------------
// what the layer was read from, and what it lacks (for a check that cannot run: issue 35)

/**
 * Which of the file's arrays the layer's inputs were read from and which are missing or not
 * (C, C): { read: { X: ['x'], Wq: ['WQ_0_h', 'WQ_1_h'], Wo: [] (the identity) … }, missing:
 * ['Wo'], misshaped: [{ name, key, shape }] }.
 */
function readingOf(arrays, from, C) {
  const read = {};
  const missing = [];
  const misshaped = [];
  const heads = headLists(arrays);
  for (const name of ['X', ...WEIGHTS]) {
    const key = owner(arrays, name);
    const a = key == null ? null : arrays[key];
    if (a == null) {
      // (no X: the weights under their authors' names, whole or per head, said as found)
      const whole = Object.keys(arrays).filter((k) => wholeWeight(k) === name);
      const parts = (heads[name] ?? []).sort((p, q) => p[0] - q[0]).map(([, k]) => k);
      if (C == null && (whole.length || parts.length)) read[name] = whole.length ? whole : parts;
      else missing.push(name);
      continue;
    }
    read[name] = from[name] ?? [key];
    const square = isArray(a) && sameShape(a.shape, [C, C]);
    if (name !== 'X' && C != null && !square) {
      misshaped.push({ name, key, shape: Array.isArray(a.shape) ? a.shape : null });
    }
  }
  return { read, missing, misshaped };
}

const keysText = (keys) => (keys.length > 1 ? `${keys[0]} … ${keys.at(-1)}` : keys[0]);

/**
 * One sentence for a layer the check cannot run (adaptLayout's `reading`): what was read as
 * what, and what is missing or of another shape, e.g. "your layer as read: X from x, Wq from
 * WQ_0_h … WQ_3_h, …; missing: Wo" (null when nothing is missing or misshaped).
 */
export function readingNote({ read, missing, misshaped }) {
  if (!missing.length && !misshaped.length) return null;
  const parts = Object.entries(read)
    .filter(([name]) => !misshaped.some((m) => m.name === name))
    .map(([name, keys]) => {
      if (!keys.length) return `${name} = I (none in your file)`;
      return keys.length === 1 && keys[0] === name ? name : `${name} from ${keysText(keys)}`;
    });
  const bad = misshaped.map((m) => {
    const shape = Array.isArray(m.shape) ? shapeText(m.shape) : 'not an array';
    return m.key === m.name ? `${m.key} ${shape}` : `${m.key} ${shape} as ${m.name}`;
  });
  const lists = [
    parts.length ? `your layer as read: ${parts.join(', ')}` : 'nothing of your layer was read',
    missing.length ? `missing: ${missing.join(', ')}` : null,
    bad.length ? `not (C, C): ${bad.join(', ')}` : null,
  ];
  return `${lists.filter(Boolean).join('; ')} (the check needs X and the four weights)`;
}

// ------------------------------------------------------------------------------------------------
// X saved sequence first, (T, B, C)

// (a, b, c) -> (b, a, c): the first two axes swapped
function swapFirstIndex([a, b, c]) {
  const src = new Int32Array(a * b * c);
  for (let i = 0; i < a; i++) {
    for (let j = 0; j < b; j++) src.set(range((i * b + j) * c, c), (j * a + i) * c);
  }
  return src;
}

// The file's arrays laid out as X (a, b, C) is when the others show it as (T, B, C): one of X's
// rows of (b, a, C) (target, dY …) or a result with its heads, (b, h, a, …), and no result with
// its heads (a, h, b, …). Those of X's shape, and X's rows flattened as (a·b, C), are sequence
// first: their keys (X's first), or none.
function sequenceFirstKeys(arrays, xKey, [a, b, c]) {
  const named = Object.entries(arrays)
    .map(([k, arr]) => [k, k === xKey ? null : courseName(k), arr])
    .filter(([, name, arr]) => name && isArray(arr));
  const heads = named.filter(([, name, arr]) => HEAD_RESULTS.has(name) && arr.shape.length === 4);
  if (heads.some(([, , { shape }]) => shape[0] === a && shape[2] === b)) return [];
  const rows = named.filter(([, name]) => TOKEN_ROWS.includes(name));
  const is = (shape, ...dims) => sameShape(shape, dims);
  const shown =
    heads.some(([, , { shape }]) => shape[0] === b && shape[2] === a) ||
    rows.some(([, , { shape }]) => is(shape, b, a, c));
  if (!shown) return [];
  const laidOut = rows.filter(([, , { shape }]) => is(shape, a, b, c) || is(shape, a * b, c));
  return [xKey, ...laidOut.map(([k]) => k)];
}
const HEAD_RESULTS = new Set(['Q', 'K', 'V', 'scores', 'att', 'headout', 'dQ', 'dK', 'dV']);

/**
 * X saved sequence first, (T, B, C) (a layer that swaps a batch-first input and keeps the swapped
 * one), read as X.swapaxes(0, 1) when the file's other arrays are (B, T, …); the arrays saved as
 * X is swapped with it: { arrays, notes }.
 */
function readSequenceFirst(arrays) {
  const xKey = owner(arrays, 'X');
  const X = xKey == null ? null : arrays[xKey];
  if (!isArray(X) || X.shape.length !== 3 || X.shape[0] === X.shape[1]) {
    return { arrays, notes: [] };
  }
  const keys = sequenceFirstKeys(arrays, xKey, X.shape);
  if (!keys.length) return { arrays, notes: [] };
  const [a, b, c] = X.shape;
  const out = { ...arrays };
  for (const k of keys) out[k] = gather(asF64(arrays[k]), [b, a, c], swapFirstIndex(X.shape));
  const rest = keys.slice(1);
  const also = rest.length ? `; ${rest.join(', ')} too, laid out as ${xKey} is` : '';
  const note =
    `${xKey} is ${shapeText(X.shape)} while your other arrays are (B, T, …) with B = ${b}, ` +
    `T = ${a}: ${xKey} is saved sequence first, (T, B, C); read as ${xKey}.swapaxes(0, 1), ` +
    `${shapeText([b, a, c])}${also}`;
  return { arrays: out, notes: [note] };
}

// ------------------------------------------------------------------------------------------------
// several sequences saved one after another, (N, C), with their lengths

const LENGTH_KEYS = new Set(['lengths', 'lens', 'seqlens', 'seqlengths', 'sequencelengths']);

/**
 * X (N, C) holding several sequences one after another, beside their lengths (`lengths` [4, 4]):
 * of one length T, X and the arrays laid out as it is read as (B, T, C); of several, said in a
 * note (the layer's attention runs within each sequence, the check's over all N rows). -> {
 * arrays, notes, used }
 */
function readPacked(arrays) {
  const none = { arrays, notes: [], used: [] };
  const key = Object.keys(arrays).find((k) => LENGTH_KEYS.has(k.toLowerCase().replace(/_/g, '')));
  const xKey = owner(arrays, 'X');
  const X = xKey == null ? null : arrays[xKey];
  const lengths = key && isArray(arrays[key]) ? [...arrays[key].data].map(Number) : [];
  if (!isArray(X) || X.shape.length !== 2 || lengths.length < 2) return none;
  const [N, C] = X.shape;
  if (!lengths.every((n) => Number.isInteger(n) && n > 0)) return none;
  if (lengths.reduce((a, b) => a + b, 0) !== N) return none;
  const list = `[${lengths.join(', ')}]`;
  if (lengths.some((n) => n !== lengths[0])) {
    const note =
      `your ${key} ${list} show ${xKey} holds ${lengths.length} sequences of different lengths, ` +
      `one after another: your layer attends within each, the course's (B, T, C) layer has ` +
      `one T, so ${xKey} is checked as one sequence of ${N} tokens and rows that mix them differ`;
    return { arrays, notes: [note], used: [key] };
  }
  const T = lengths[0];
  const B = lengths.length;
  const out = { ...arrays };
  const keys = Object.keys(arrays).filter((k) => {
    const name = courseName(k);
    return TOKEN_ROWS.includes(name) && isArray(arrays[k]) && sameShape(arrays[k].shape, [N, C]);
  });
  for (const k of keys) out[k] = { ...arrays[k], shape: [B, T, C] };
  const note =
    `your ${key} ${list} show ${xKey} holds ${B} sequences of ${T} tokens one after another: ` +
    `read as (B, T, C) = ${shapeText([B, T, C])}${keys.length > 1 ? `, with ${keys.filter((k) => k !== xKey).join(', ')}` : ''}`;
  return { arrays: out, notes: [note], used: [key] };
}

// ------------------------------------------------------------------------------------------------

/**
 * Rewrite a notebook's arrays into the course's layout before checkNotebook (issue 18), each
 * adaptation said in a note: X saved features first ((C, T) or (B, C, T) when only that fits
 * Wq, Wk and Wv) transposed with its other arrays, and a dY or target (C, T) beside an X (T, C);
 * per-head weight stacks (h, C, hs) / (h, hs, C) or per-head keys (headKeyOf: Wq_0, WQ_0_h,
 * head_0_Wq, heads.0.Wq …) joined, a single key alone read as the weight (WO_0), Wo's slices
 * composed as the heads use them (proven by Y when saved); fused qkv / c_attn / in_proj_weight
 * ((C, 3C) used as X @ W, (3C, C) or (3, C, C)) and their gradients split; c_proj / out_proj…
 * read as Wo; (out, in) weights used as X @ W.T (found by recomputing Q, K, V or Y) transposed
 * with their gradients, unless Wq, Wk and Wv have the course's own names: then the transpose is
 * the forward's mistake and the (out, in) reading is offered; a missing Wo made the identity
 * (never when part of it is there); results saved heads first (h, B, T, …) transposed; heads
 * taken from split shapes when they differ from the option; biases read (a zero one dropped).
 * Never throws: what cannot be adapted is left as it is, with a note saying why.
 *
 * arrays: { [fileName]: { data, shape, dtype?, resolution? } } (readNpz, readNpy, text); heads:
 * the page's setting; weights: 'auto' (what the arrays show, the course's convention first),
 * 'in-out' or 'out-in' (the student's choice). Returns { arrays, heads, notes, used, biases,
 * convention, offered, reading }:
 * arrays keyed by course names where adapted (others untouched; dtype kept, resolution moved
 * with entries), heads to check with, notes (plain sentences), used (the file's keys consumed or
 * renamed), biases { bq?, bk?, bv?, bo? } (Float64Array (C,) each), biasKeys (the file's key
 * of each), convention 'in-out'
 * (X @ W), 'out-in' (X @ W.T, transposed) or null (nothing decides it, or Q, K and V disagree:
 * weights left as they are), offered: 'out-in' when that reading fits but the course's was
 * used (course-named weights), else null; reading { read, missing, misshaped }: what X and the
 * four weights were read from, and which are missing or not (C, C) (readingNote says it in one
 * sentence).
 */
export function adaptLayout(arrays, { heads, weights = 'auto' } = {}) {
  const unchanged = { arrays, heads, notes: [], used: [], biases: {}, biasKeys: {} };
  Object.assign(unchanged, { convention: null, offered: null });
  if (arrays == null || typeof arrays !== 'object') {
    return { ...unchanged, reading: { read: {}, missing: ['X', ...WEIGHTS], misshaped: [] } };
  }
  const input = unnamedInput(selfAttentionInput(arrays));
  const packed = readPacked(input);
  const sequence = readSequenceFirst(packed.arrays);
  const first = readFeaturesFirst(sequence.arrays);
  const st = newState(first.arrays, heads);
  if (st) {
    st.weightsOption = weights;
    st.featuresFirst = first.used.length > 0; // (W @ X on columns: (out, in) is that frame's)
  }
  if (!st) return { ...unchanged, reading: readingOf(arrays, {}, null) };
  if (input[SELF_NOTE]) {
    st.notes.push(input[SELF_NOTE].note);
    input[SELF_NOTE].keys.forEach((k) => st.used.add(k));
  }
  st.notes.push(...packed.notes, ...sequence.notes, ...first.notes);
  [...packed.used, ...first.used].forEach((k) => st.used.add(k));
  readPositional(st);
  joinHeadLists(st);
  readWeights(st);
  for (const key of Object.keys(st.arrays)) {
    const role = layoutRole(key);
    if (role?.kind === 'fused') readFused(st, key, role.grad);
  }
  joinHeadBiases(st);
  readBiases(st);
  readSplitResults(st);
  readStackedPaths(st);
  readOutputsNamedAtt(st);
  inferHeads(st);
  addIdentityWo(st);
  applyConvention(st);
  composeWo(st);
  biasNote(st);
  const used = Object.keys(arrays).filter((k) => st.used.has(k));
  const { notes, biases, biasKeys, convention, offered = null } = st;
  const reading = readingOf(st.arrays, st.from, st.C);
  const out = { arrays: st.arrays, heads: st.heads, notes, used, biases, biasKeys };
  return { ...out, convention, offered, reading };
}
