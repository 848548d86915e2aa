// names.js - the course's names for the arrays of a notebook check (issue 11): the inputs, the
// results in the order the check reports them, the shapes each result is accepted in, the aliases
// a student's file may use, and the `np.savez` line the page shows.
//
//   matchNames({ x, attn, out, foo })  -> { found: { X, att, Y }, ignored: ['foo'], notes }
//   resultNames('mse')                 -> ['Q', 'K', ..., 'loss', 'dY', 'dWo', ..., 'dX']
//   savezLine(['X', 'Wq'])             -> "np.savez('mha_check.npz', X=X, Wq=Wq)"

/** The inputs of the check: X and the four weights are required; then dY or target. */
export const INPUT_NAMES = Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo', 'dY', 'target']);

/** The forward results, in the order of lesson 3. */
export const FORWARD_NAMES = Object.freeze([
  'Q',
  'K',
  'V',
  'scores',
  'att',
  'headout',
  'concat',
  'Y',
]);

/** The backward results, in the order of lesson 4 (after loss and, with target, dY). */
export const BACKWARD_NAMES = Object.freeze([
  'dWo',
  'dconcat',
  'dheadout',
  'dV',
  'datt',
  'dscores',
  'dQ',
  'dK',
  'dWq',
  'dWk',
  'dWv',
  'dX',
]);

/** Every result name the check knows, in report order (dY only counts with a target). */
export const NOTEBOOK_NAMES = Object.freeze([...FORWARD_NAMES, 'loss', 'dY', ...BACKWARD_NAMES]);

/**
 * The result rows of a check in report order: the forward only when `loss` is null (neither dY
 * nor target given), loss and the backward otherwise, dY among them only for the MSE loss.
 */
export function resultNames(loss) {
  if (loss == null) return [...FORWARD_NAMES];
  const middle = loss === 'mse' ? ['loss', 'dY'] : ['loss'];
  return [...FORWARD_NAMES, ...middle, ...BACKWARD_NAMES];
}

// The words that mark a training run's weights after it (Wq_after, Wq_trained …) and before it
// (Wq_init, initial_Wq …): one list each, read by training.js and layouts.js
export const AFTER_MARKS = Object.freeze(['after', 'new', 'next', 'updated', 'trained', 'final']);
export const INIT_MARKS = Object.freeze(['init', 'initial', 'start', 'before', 'orig', 'original']);
// the marks that only name a run's start (X_orig, X_before may be an input kept before a change)
export const START_MARKS = Object.freeze(INIT_MARKS.filter((m) => m.startsWith('init')));

// Other spellings a notebook uses, after lower-casing and dropping underscores (so head_out,
// W_q and d_X need no entry here).
const ALIASES = Object.freeze({
  attn: 'att',
  attention: 'att',
  attnweights: 'att',
  attweights: 'att',
  attnweight: 'att',
  qktsoftmax: 'att',
  attentionweight: 'att',
  attnoutput: 'Y',
  out: 'Y',
  output: 'Y',
  score: 'scores',
  headsout: 'headout',
  dattn: 'datt',
  dattention: 'datt',
  dscore: 'dscores',
  dout: 'dY',
  doutput: 'dY',
  dheadsout: 'dheadout',
  dqm: 'dQ', // lesson 4's merged dQm = merge_heads(dQ): accepted as dQ in its (B, T, C) form
  dkm: 'dK',
  dvm: 'dV',
  targets: 'target',
  ytarget: 'target',
  ytrue: 'target',
  input: 'X', // d_input, grad_input: dX (below)
  inputs: 'X',
  in: 'X', // grad_in: dX
  inp: 'X',
  src: 'X',
  data: 'X',
  embeddings: 'X',
  tokens: 'X', // a vision transformer's patch tokens
  inputtokens: 'X',
  outtokens: 'Y',
  outputtokens: 'Y',
  inputembedding: 'X',
  inputembeddings: 'X',
  hiddenstates: 'X',
  xin: 'X',
  hin: 'X', // a block's hidden state in (h_in), its output h
  minibatch: 'X',
  upstreamgradient: 'dY', // the gradient handed to a module's backward
  backwardsgradient: 'dY',
  backwardgradient: 'dY',
  ypred: 'Y',
  yhat: 'Y',
  result: 'Y',
  o: 'Y', // the output of an O projection (the course has no O)
  mhaout: 'Y',
  mhaoutput: 'Y',
  mhavals: 'Y',
  attnout: 'Y',
  attentionout: 'Y',
  attentionoutput: 'Y',
  label: 'target',
  labels: 'target',
  attentionweights: 'att',
  attnprobs: 'att',
  dropoutoutput: 'att', // the attention weights after their dropout
  attndropout: 'att',
  attentiondropout: 'att',
  probs: 'att', // the attention's probabilities
  attentionprobs: 'att',
  attentionprobabilities: 'att',
  attnmap: 'att',
  attentionmap: 'att',
  logits: 'scores',
  attnlogits: 'scores',
  attentionlogits: 'scores',
  attnscores: 'scores',
  attentionscores: 'scores',
  scaledscores: 'scores', // beside the product before the scale, often saved as scores too
  scoresscaled: 'scores',
  attnpattern: 'att', // the attention pattern: the softmax's weights
  attentionpattern: 'att',
  queryvectors: 'Q', // the projections, named by what they hold
  keyvectors: 'K',
  valuevectors: 'V',
  context: 'headout', // the heads' outputs (att @ V), then joined
  contextcombined: 'concat',
  cat: 'concat', // the heads joined (np.concatenate, torch.cat)
  concatenated: 'concat',
  concatheads: 'concat',
  headsconcat: 'concat',
  merged: 'concat',
  mergedheads: 'concat',
  contextconcat: 'concat',
  concatoutput: 'concat',
  projq: 'Q', // the projections, named by what made them
  projk: 'K',
  projv: 'V',
  qsplit: 'Q', // split into heads (Q_split)
  ksplit: 'K',
  vsplit: 'V',
  qh: 'Q', // a projection with its head axis (Q_h), or moved before the tokens (q_t)
  qt: 'Q',
  kt: 'K',
  vt: 'V',
  kh: 'K',
  vh: 'V',
  s: 'scores', // the lessons' own letters: S = Q @ K.T / sqrt(hs), A = softmax(S)
  a: 'att',
});

// A container's mark at a name's end (x_np, result_np, w_q_list, input_cache) and a layer's
// number inside a result's name (attn1_out): dropped when what is left is a course name other
// than a weight's
const bareKeys = (key) =>
  [
    key.replace(/(np|list|arr|array|cache|cached)$/, ''),
    key.replace(/^(\D+)\d+(\D*)$/, '$1$2'),
  ].filter((k) => k !== key && k.length > 0);

// (dY is in both lists: the map below keeps one)
const ALL_NAMES = [...INPUT_NAMES, ...NOTEBOOK_NAMES];
const BY_KEY = new Map(ALL_NAMES.map((n) => [n.toLowerCase(), n]));

const keyOf = (name) => name.toLowerCase().replaceAll('_', '');

// How notebooks mark a gradient, around a name without underscores: grad_Wq, Wq_grad, W_q_grads,
// Wq_gradient, d_input (a leading d), gWo and g_concat (a leading g), x_g (a trailing g); dL_dX and
// dLoss_dX (a d-name after dL).
const GRAD_PREFIXES = ['gradients', 'gradient', 'grads', 'grad', 'd', 'g'];
const GRAD_SUFFIXES = ['gradients', 'gradient', 'grads', 'grad', 'derivatives', 'derivative', 'g'];

/**
 * The names a key may be the gradient of, its gradient marks taken off (lower case, no
 * underscores): 'gradwq' -> ['wq'], 'wqgrads' -> ['wq'], 'dinput' -> ['input'], 'dldx' ->
 * ['x', 'ldx']. Empty when the key has no mark. layouts.js reads its weights' names with it too.
 */
export function gradientBases(key) {
  const out = [];
  // (a mark alone is no gradient: grads is not grad + s, the scores)
  if (GRAD_PREFIXES.includes(key) || GRAD_SUFFIXES.includes(key)) return out;
  const dl = /^(?:dloss|dl|derror|de)d(.+)$/.exec(key); // dL_dX, dE_dX: the gradient of X
  if (dl) out.push(dl[1]);
  for (const p of GRAD_PREFIXES) {
    if (key.length > p.length && key.startsWith(p)) out.push(key.slice(p.length));
  }
  for (const s of GRAD_SUFFIXES) {
    if (key.length > s.length && key.endsWith(s)) out.push(key.slice(0, -s.length));
  }
  return out;
}

// The course's name for a key without gradient marks (an exact name or an alias), or null
const plainName = (key) => BY_KEY.get(key) ?? ALIASES[key] ?? null;

// a gradient of the course: dX, dWq, dY, datt … (d and a course name)
const isGradient = (name) => name.startsWith('d') && ALL_NAMES.includes(name.slice(1));

// 'dWq' for a key that is the gradient of Wq (grad_Wq, Wq_grad, W_q_grads …), 'dX' for d_input …;
// null when the name has no gradient in the course (loss, target) or is one already (grad_dWq)
function gradientName(key) {
  for (const base of gradientBases(key)) {
    const name = plainName(base);
    if (name == null) continue;
    if (isGradient(name)) return null;
    if (ALL_NAMES.includes(`d${name}`)) return `d${name}`;
  }
  return null;
}

// A module's own input or output by its path (Q_linear.inputs, O_linear.outputs, out_proj.dinputs):
// the module named by one projection word once generic words are dropped, the part after it
// saying which; null otherwise
const MODULE_GENERIC = new Set(['linear', 'lin', 'proj', 'projection', 'layer', 'dense', 'fc']);
const MODULE_OF = Object.freeze({
  ...Object.fromEntries(['q', 'query', 'queries', 'wq'].map((w) => [w, 'q'])),
  ...Object.fromEntries(['k', 'key', 'keys', 'wk'].map((w) => [w, 'k'])),
  ...Object.fromEntries(['v', 'value', 'values', 'wv'].map((w) => [w, 'v'])),
  ...Object.fromEntries(['o', 'out', 'output', 'wo', 'concat'].map((w) => [w, 'o'])),
});
const MODULE_PART = Object.freeze({
  ...Object.fromEntries(['inputs', 'input', 'x', 'in'].map((w) => [w, 'in'])),
  ...Object.fromEntries(['outputs', 'output', 'out', 'y'].map((w) => [w, 'out'])),
  ...Object.fromEntries(['dinputs', 'dinput', 'dx', 'din'].map((w) => [w, 'din'])),
  ...Object.fromEntries(['doutputs', 'doutput', 'dout', 'dy'].map((w) => [w, 'dout'])),
});
const MODULE_RESULT = Object.freeze({
  in: { q: 'X', k: 'X', v: 'X', o: 'concat' },
  out: { q: 'Q', k: 'K', v: 'V', o: 'Y' },
  din: { o: 'dconcat' },
  dout: { q: 'dQ', k: 'dK', v: 'dV', o: 'dY' },
});
function moduleResult(key) {
  const parts = key.split(/[./]/).filter(Boolean);
  if (parts.length < 2) return null;
  const part = MODULE_PART[parts.at(-1).toLowerCase().replaceAll('_', '')];
  const words = parts
    .at(-2)
    .split(/_|-|(?<=[a-z])(?=[A-Z])/)
    .map((w) => w.toLowerCase())
    .filter((w) => w && !MODULE_GENERIC.has(w));
  const x = words.length === 1 ? MODULE_OF[words[0]] : null;
  return (part && x && MODULE_RESULT[part][x]) ?? null;
}

/**
 * The course name a file's array name stands for, or null (case and underscores ignored): the
 * course's spelling, an alias (attn, out …), or a gradient's spelling (grad_Wq, W_q_grads,
 * Wq_grad, dL_dX, d_input -> dWq, dWq, dWq, dX, dX).
 */
export function courseName(name) {
  // an autograd's gradient beside its array: x.grad, out.grad (grad.x)
  const path = /^(?:grad[./](.+)|(.+)[./]grad)$/i.exec(String(name));
  if (path) {
    const base = courseName(path[1] ?? path[2]);
    return base && !isGradient(base) && ALL_NAMES.includes(`d${base}`) ? `d${base}` : null;
  }
  const module = moduleResult(String(name));
  if (module) return module;
  const key = keyOf(String(name));
  const direct = plainName(key) ?? gradientName(key);
  if (direct != null) return direct;
  for (const bare of bareKeys(key)) {
    const found = plainName(bare) ?? gradientName(bare);
    if (found != null && !/^d?W[qkvo]$/.test(found)) return found;
  }
  return null;
}

// ------------------------------------------------------------------------------------------------
// Lessons 1 and 2's arrays (issue 19): not results the check compares, but arrays "Use my arrays in
// the lessons" reads: lesson 1's two heads' weights and lesson 2's x (lesson 2's Wq is the Wq).

/** Lesson 1's weights: head 1's Wq1, Wk1, Wv1, then head 2's Wq2, Wk2, Wv2, each (C, hs). */
export const LESSON1_NAMES = Object.freeze(['Wq1', 'Wk1', 'Wv1', 'Wq2', 'Wk2', 'Wv2']);

/**
 * The spellings a course notebook uses for lesson 1's weights, after lower-casing and dropping
 * underscores as for ALIASES (W_q1, Wq_1, q1, head1_Wq, Wq_head1, h1_Wq, W1q, WqA / Wq_B for heads
 * A and B): { key: name }.
 */
function lesson1Aliases() {
  const out = {};
  for (const name of LESSON1_NAMES) {
    const p = name[1].toLowerCase(); // q, k, v
    const i = name[2]; // 1, 2
    const ab = i === '1' ? 'a' : 'b';
    for (const key of [
      `w${p}${i}`,
      `${p}${i}`,
      `head${i}w${p}`,
      `w${p}head${i}`,
      `h${i}w${p}`,
      `w${p}h${i}`,
      `w${i}${p}`,
      `w${p}${ab}`,
      `head${ab}w${p}`,
      `w${p}head${ab}`,
    ]) {
      out[key] = name;
    }
  }
  return out;
}

const LESSON_ALIASES = Object.freeze(lesson1Aliases());

/**
 * The lesson-1 name a file's array name stands for (Wq1 … Wv2), or null: case and underscores
 * ignored, as courseName.
 */
export function lessonName(name) {
  return LESSON_ALIASES[keyOf(String(name))] ?? null;
}

/**
 * The key of a loaded array: its name lower-cased (a second array whose name differs only in case
 * replaces the first), except lesson 2's `x`, which the course tells apart from X by its case.
 */
export function arrayKey(name) {
  const s = String(name);
  return s === 'x' ? 'x (lesson 2)' : s.toLowerCase();
}

/**
 * Sort a file's arrays by course name. An exact course name (any case) wins over an alias; a
 * second array for the same course name is ignored with a note.
 *   arrays: { [fileName]: array } -> { found: { [course]: { array, key } }, ignored, notes }
 */
export function matchNames(arrays) {
  const found = {};
  const ignored = [];
  const notes = [];
  const keys = Object.keys(arrays);
  // the course's spelling first, then other cases or underscores, then aliases: `Q` beats `q`
  // and `att` beats `attn` whatever the file's order
  const rank = (key) => {
    if (ALL_NAMES.includes(key)) return 0;
    return BY_KEY.has(keyOf(key)) ? 1 : 2;
  };
  const ordered = [...keys].sort((a, b) => rank(a) - rank(b));
  for (const key of ordered) {
    const name = courseName(key);
    if (name == null) {
      ignored.push(key);
    } else if (found[name]) {
      ignored.push(key);
      notes.push(`${key} and ${found[name].key} both name ${name}: ${found[name].key} was used`);
    } else {
      found[name] = { array: arrays[key], key };
      if (key !== name) notes.push(`${key} read as ${name}`);
    }
  }
  ignored.sort((a, b) => keys.indexOf(a) - keys.indexOf(b));
  return { found, ignored, notes };
}

// ------------------------------------------------------------------------------------------------
// Each lesson's own file (issue 34): the lessons' np.savez lines, whose names never collide. The
// lines a lesson shows, the reader of a loaded file and the tests all come from this one table.

/**
 * Per lesson: the file its line writes, the prefix of its names in that file (l4_X is lesson 4's
 * X, never lesson 1's), the names its line saves (the notebook's own variables, in the course's
 * spelling), those it cannot do without (`needs`; the others the page draws or picks when they
 * are not given) and those it reads too when present (`also`: lesson 5's losses and Wq_after).
 */
export const LESSON_SAVES = Object.freeze({
  lesson1: Object.freeze({
    file: 'lesson1.npz',
    prefix: 'l1_',
    names: Object.freeze(['X', ...LESSON1_NAMES]),
    needs: Object.freeze(['X', ...LESSON1_NAMES]),
    also: Object.freeze([]),
  }),
  lesson2: Object.freeze({
    file: 'lesson2.npz',
    prefix: 'l2_',
    names: Object.freeze(['x', 'Wq']),
    needs: Object.freeze(['x', 'Wq']),
    also: Object.freeze([]),
  }),
  lesson3: Object.freeze({
    file: 'lesson3.npz',
    prefix: 'l3_',
    names: Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo']),
    needs: Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo']),
    also: Object.freeze([]),
  }),
  lesson4: Object.freeze({
    file: 'lesson4.npz',
    prefix: 'l4_',
    names: Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo', 'dY']),
    needs: Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo']),
    also: Object.freeze([]),
  }),
  lesson5: Object.freeze({
    file: 'lesson5.npz',
    prefix: 'l5_',
    names: Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', 'lr', 'steps']),
    needs: Object.freeze(['X', 'Wq', 'Wk', 'Wv', 'Wo']),
    also: Object.freeze(['losses', 'Wq_after']),
  }),
});

/** The keys of LESSON_SAVES in order: lesson1 … lesson5. */
export const LESSON_KEYS = Object.freeze(Object.keys(LESSON_SAVES));

/** Lesson `key`'s line: `np.savez("lesson4.npz", l4_X=X, l4_Wq=Wq, …, l4_dY=dY)`. */
export function lessonSaveLine(key) {
  const { file, prefix, names } = LESSON_SAVES[key];
  return `np.savez("${file}", ${names.map((n) => `${prefix}${n}=${n}`).join(', ')})`;
}

/**
 * The lesson a saved name belongs to by its prefix, and the name that lesson reads it as: the
 * lesson's own spelling of a name in its table (l2_X → x, l1_wq1 → Wq1: the prefix and the case
 * are ignored), else the rest as saved (l5_losses → losses). null for a name with no lesson's
 * prefix (the check's and the whole layer's names) or with nothing after it.
 *   lessonOf('l4_dY') -> { lesson: 'lesson4', name: 'dY' }
 */
export function lessonOf(saved) {
  const s = String(saved);
  const key = LESSON_KEYS.find((k) => s.toLowerCase().startsWith(LESSON_SAVES[k].prefix));
  const rest = key ? s.slice(LESSON_SAVES[key].prefix.length) : '';
  if (!rest) return null;
  const { names, also } = LESSON_SAVES[key];
  const own = [...names, ...also].find((n) => n.toLowerCase() === rest.toLowerCase());
  return { lesson: key, name: own ?? rest };
}

/** `np.savez('mha_check.npz', X=X, Wq=Wq, …)` for these course names (default: all of them). */
export function savezLine(names = [...INPUT_NAMES, ...NOTEBOOK_NAMES]) {
  const unique = [...new Set(names)];
  return `np.savez('mha_check.npz', ${unique.map((n) => `${n}=${n}`).join(', ')})`;
}

/** The results that may come split (B, h, T, hs) or merged (B, T, C). */
export const SPLIT_OR_MERGED = Object.freeze([
  'Q',
  'K',
  'V',
  'headout',
  'dheadout',
  'dV',
  'dQ',
  'dK',
]);

// The tensor of the check a merged (B, T, C) result is compared with: merge_heads of the split one
// (merge_heads(headout) is concat, merge_heads(dheadout) is dconcat).
const MERGED_NODE = Object.freeze({
  Q: 'Qm',
  K: 'Km',
  V: 'Vm',
  headout: 'concat',
  dheadout: 'dconcat',
  dV: 'dVm',
  dQ: 'dQm',
  dK: 'dKm',
});

/**
 * The results whose (B, T, C) form holds the heads side by side, hs columns each: those saved
 * split or merged, and the results merge_heads makes (concat, dconcat).
 */
export const HEAD_COLUMN_NAMES = Object.freeze([
  ...SPLIT_OR_MERGED,
  ...Object.values(MERGED_NODE).filter((n) => NOTEBOOK_NAMES.includes(n)),
]);

/**
 * The shapes result `name` is accepted in, each with the tensor of the check it is compared
 * with: [{ shape, node, form }] (form 'split', 'merged' or 'plain'), the usual one first. With
 * B = 1 the leading 1 may be dropped; with one head, scores, att and their gradients may come
 * without the head axis, (B, T, T) (and (T, T) with B = 1).
 */
export function acceptedShapes(name, { B, T, C, heads }) {
  const hs = C / heads;
  const forms = [];
  const add = (shape, node, form) => {
    forms.push({ shape, node, form });
    // every shape given here starts with B (B·T only when B > 1)
    if (B === 1) {
      forms.push({ shape: shape.slice(1), node, form });
    }
  };
  if (name === 'loss') {
    forms.push(
      { shape: [], node: 'loss', form: 'scalar' },
      { shape: [1], node: 'loss', form: 'scalar' },
    );
  } else if (SPLIT_OR_MERGED.includes(name)) {
    add([B, heads, T, hs], name, 'split');
    add([B, T, C], MERGED_NODE[name], 'merged');
    // reshaped to (B, T, h, hs) before the transpose of split_heads: the merged data
    add([B, T, heads, hs], MERGED_NODE[name], 'merged');
    if (B > 1) add([B * T, C], MERGED_NODE[name], 'merged'); // .reshape(-1, C)
  } else if (['scores', 'att', 'datt', 'dscores'].includes(name)) {
    add([B, heads, T, T], name, 'plain');
    // one head saved without its axis, (B, T, T): the same entries (with B = 1, (1, T, T) is
    // there already, and (T, T) is added)
    if (heads === 1 && B > 1) add([B, T, T], name, 'plain');
    if (heads === 1 && B === 1) forms.push({ shape: [T, T], node: name, form: 'plain' });
  } else if (/^d?W[qkvo]$/.test(name)) {
    forms.push({ shape: [C, C], node: name, form: 'plain' });
  } else {
    add([B, T, C], name, 'plain');
    if (B > 1) add([B * T, C], name, 'plain'); // .reshape(-1, C), as the backward uses it
  }
  return forms;
}

/** "(2, 3, 5, 4)" as NumPy prints a shape ("()" for a scalar, "(5,)" for one axis). */
export function shapeText(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}
