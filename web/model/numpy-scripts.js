// numpy-scripts.js - the "Copy as NumPy" scripts (DOM-free). Each one is complete (imports
// included), runs with python3 + numpy, and prints the numbers the page shows for the same
// settings.
//
// The Python lives in web/model/scripts/*.py (real Python: tests/model/scripts-py.test.mjs runs
// pyflakes and py_compile on every file); this module only fills in the page's values. The bundle
// and Node read the files through web/model/scripts/sources.js, their text as JS strings, built by
// tests/tools/py-scripts.mjs (make bundle runs it when a .py changes; not committed, no fetch at
// run time). Edit a .py, then make bundle. A script is a .py rendered with a table of values:
//   __NAME__                  a placeholder (a valid Python name, also inside strings and
//                             comments): the value NAME as Python source: True / False for a
//                             boolean, pyNum for a number, a string as it is (pyStr quotes one)
//   , key=__NAME__            an optional keyword argument: left out when NAME is null
//   ...  # page: omit [why]   a line for Python's tools only, not in the script: what pyflakes
//                             needs (`__HS__ = None`; the names of an included file; `re, np`
//                             for imports that only an included file's text uses)
//   # page: include F.py      the text of F.py, rendered with the same values (its names are
//                             imported on an omitted line above, for pyflakes)
//   # page: insert NAME       the lines of the text NAME (SCRIPT_NOTE, CHECKPOINTS)
//   # page: if NAME / else / end    the lines between, when NAME is truthy (nested blocks too)
// Leading blank lines of a file's text are dropped; every directive starts its line. A missing
// value, an unknown directive or an unclosed block throws. The scripts: x.py (xSnippet),
// lesson1-4.py, layer_object.py, training.py, playground.py; the parts they include: header.py
// (under each title), sentence.py (tokens, E, X), sentence_layer.py (+ the layer, the target, the
// MSE), course_demo.py (lessons 3-4's stream and X), layer.py (the class), gradcheck.py.

import { SCRIPT_NOTE } from './agreement.js';
import { checkpointLabels } from './checkpoints.js';
import { COURSE } from './defaults.js';
import { tokenize } from './tokens.js';
import { DEFAULT_CONVENTION, L4_LINES, L5_LINES, conventionThreshold } from './gradcheck-report.js';
import { SOURCES } from './scripts/sources.js';

// the pass lines of the scripts' checks: the page's tables' at their default convention
const L4_LINE = conventionThreshold(L4_LINES, DEFAULT_CONVENTION);

/** A Python string literal (JSON's escapes are valid Python escapes). */
export function pyStr(s) {
  return JSON.stringify(String(s));
}

/** A Python float literal that round-trips (JS's shortest representation is valid Python). */
export function pyNum(x) {
  if (Number.isNaN(x)) return 'float("nan")';
  if (x === Infinity) return 'float("inf")';
  if (x === -Infinity) return '-float("inf")';
  if (Object.is(x, -0)) return '-0.0'; // String(-0) is '0', which Python reads as +0.0
  return String(x);
}

/** A Python list literal of items already in Python source. */
const pyList = (items) => `[${items.join(', ')}]`;

const NAME = '([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)';
const PLACEHOLDER = new RegExp(`(, \\w+=)?__${NAME}__`, 'g');
const DIRECTIVE = /^# page: (include|insert|if|else|end)(?: (\S+))?$/;
const OMIT = / {2}# page: omit(?: .*)?$/;

/** The value `name` as Python source; `keyword` (', key=') may drop out when it is null. */
function pySource(file, values, keyword, name) {
  const v = values[name];
  if (keyword && v === null) return '';
  if (v === undefined || v === null) {
    throw new Error(`numpy-scripts: ${file}: no value for ${name}`);
  }
  if (typeof v === 'boolean') return `${keyword ?? ''}${v ? 'True' : 'False'}`;
  return `${keyword ?? ''}${typeof v === 'number' ? pyNum(v) : String(v)}`;
}

/** One line with its placeholders filled, in one pass (a value is never read again). */
function fillLine(file, line, values) {
  return line.replace(PLACEHOLDER, (_, keyword, name) => pySource(file, values, keyword, name));
}

/** values[name], which a directive of `file` needs. */
function valueOf(file, values, name) {
  if (name === undefined || values[name] === undefined) {
    throw new Error(`numpy-scripts: ${file}: no value for ${name}`);
  }
  return values[name];
}

/** Applies one directive (`# page: verb name`) of `file` to the render state `s`. */
function directive(file, values, s, verb, name) {
  if (verb === 'if') {
    const cond = !!valueOf(file, values, name);
    s.blocks.push([s.keep, cond]); // per open `if`: kept before it, its condition
    s.keep = s.keep && cond;
  } else if (verb === 'else' || verb === 'end') {
    if (!s.blocks.length) throw new Error(`numpy-scripts: ${file}: ${verb} without if`);
    const [outer, cond] = verb === 'end' ? s.blocks.pop() : s.blocks.at(-1);
    s.keep = verb === 'end' ? outer : outer && !cond;
  } else if (s.keep && verb === 'include') {
    s.out.push(...renderLines(name, values));
  } else if (s.keep) {
    s.out.push(...String(valueOf(file, values, name)).split('\n'));
  }
}

/**
 * web/model/scripts/`file` read once into steps: { dir: [verb, name] } for a directive, { text }
 * for a line of the script ({ text, fill: true } when it holds a placeholder); the lines for
 * Python's tools only (# page: omit) are gone. Cached: a script is rendered again on every change
 * the page shows (a training step, a setting), and this reading is most of the work.
 */
const PARSED = new Map();
function parsed(file) {
  let steps = PARSED.get(file);
  if (steps) return steps;
  const src = SOURCES[file];
  if (src === undefined) throw new Error(`numpy-scripts: no web/model/scripts/${file}`);
  steps = [];
  for (const line of src.replace(/\n$/, '').split('\n')) {
    const d = DIRECTIVE.exec(line);
    if (d) steps.push({ dir: [d[1], d[2]] });
    else if (/^\s*# page:/.test(line)) {
      throw new Error(`numpy-scripts: ${file}: not a directive: ${line}`);
    } else if (!OMIT.test(line)) {
      PLACEHOLDER.lastIndex = 0;
      steps.push({ text: line, fill: PLACEHOLDER.test(line) });
    }
  }
  PARSED.set(file, steps);
  return steps;
}

/** The lines of web/model/scripts/`file` rendered with `values` (see the header). */
function renderLines(file, values) {
  const s = { out: [], blocks: [], keep: true };
  for (const step of parsed(file)) {
    if (step.dir) directive(file, values, s, ...step.dir);
    else if (s.keep) s.out.push(step.fill ? fillLine(file, step.text, values) : step.text);
  }
  if (s.blocks.length) throw new Error(`numpy-scripts: ${file}: an if without end`);
  const first = s.out.findIndex((l) => l !== '');
  return first < 0 ? [] : s.out.slice(first);
}

/** The script web/model/scripts/`file` with `values` (and SCRIPT_NOTE, for every header). */
function render(file, values) {
  return `${renderLines(file, { SCRIPT_NOTE, ...values }).join('\n')}\n`;
}

/**
 * The lesson's checkpoints (web/model/checkpoints.js) as Python print lines: each expression with
 * every digit, `label = [a, b, ...]`, the very lines the page's checkpoint box shows.
 */
export function checkpointPrints(lesson) {
  const lines = checkpointLabels(lesson).map(
    (label) => `print(${pyStr(`${label} =`)}, np.asarray(${label}).tolist())`,
  );
  return `# Checkpoint: the page's "what this lesson's script prints" box shows these same lines.
${lines.join('\n')}`;
}

/** sentence.py's values: the sentence, its tokens, X's width and the stream that draws E. */
function sentenceValues({ sentence, tokens, C, seed, rng, pe }) {
  return {
    SENTENCE: pyStr(sentence),
    TOKENS: pyList(tokens.map(pyStr)),
    C,
    SEED: seed,
    LEGACY: rng === 'legacy',
    PE: pe,
  };
}

/** The "How X is built" snippet: complete, prints X's shape and a few entries. */
export function xSnippet({
  sentence,
  tokens,
  C = COURSE.C,
  seed = COURSE.seed,
  rng = COURSE.rng,
  pe = false,
}) {
  return render('x.py', sentenceValues({ sentence, tokens, C, seed, rng, pe }));
}

/** Lesson 1: two independent single heads on the sentence. */
export function lesson1Script({
  sentence,
  tokens,
  C = COURSE.C,
  hs = COURSE.hs,
  seed = COURSE.seed,
}) {
  return render('lesson1.py', {
    ...sentenceValues({ sentence, tokens, C, seed, rng: COURSE.rng, pe: false }),
    HS: hs,
    CHECKPOINTS: checkpointPrints('lesson1'),
  });
}

/** Lesson 2: split and merge, with the two proof numbers. */
export function lesson2Script() {
  const { seed, T, C, heads, hs } = COURSE;
  return render('lesson2.py', {
    SEED: seed,
    T,
    C,
    HEADS: heads,
    HS: hs,
    CHECKPOINTS: checkpointPrints('lesson2'),
  });
}

/** course_demo.py's values: the course demo's stream and X (lessons 3 and 4). */
const COURSE_DEMO = Object.freeze({
  SEED: COURSE.seed,
  B: COURSE.B,
  T: COURSE.T,
  C: COURSE.C,
  HEADS: COURSE.heads,
});

/** Lesson 3: the course forward pass, every shape, heads grid, row sums, block-diagonal Wo. */
export function lesson3Script({ causal = false }) {
  return render('lesson3.py', {
    ...COURSE_DEMO,
    CAUSAL: !!causal,
    SQRT_HS: Math.sqrt(COURSE.hs),
    CHECKPOINTS: checkpointPrints('lesson3'),
  });
}

/** gradcheck.py's values: its default step (two-point) and the five-point one, as 1e-5. */
const GRADCHECK_EPS = Object.freeze({
  TWO_POINT_EPS: COURSE.eps.twoPoint.toExponential(),
  FIVE_POINT_EPS: COURSE.eps.fivePoint.toExponential(),
});

/** Lesson 4: every gradient with its shape, max |g| and norm; the gradient check. */
export function lesson4Script() {
  return render('lesson4.py', {
    ...COURSE_DEMO,
    ...GRADCHECK_EPS,
    THRESHOLD: L4_LINE,
    CHECKPOINTS: checkpointPrints('lesson4'),
  });
}

/** sentence_layer.py's values: sentence.py's, the heads and the mask of the layer. */
function sentenceLayerValues({ heads, causal, ...sentence }) {
  return { ...sentenceValues(sentence), HEADS: heads, CAUSAL: !!causal };
}

/**
 * Lesson 5's "layer object" listing: the class MultiHeadAttention as the lessons build it, and
 * what each button of the lesson calls, as a program that runs on lesson 5's own data (the
 * sentence's X, the layer's weights and the target, drawn as the lesson draws them): it prints the
 * loss before and after one step ("Step") and after a run of `runSteps` more ("Run 10 steps"),
 * the numbers the lesson's table shows after those clicks.
 */
export function layerObjectScript({
  lr = COURSE.lr,
  runSteps = COURSE.steps,
  sentence = COURSE.sentence,
  tokens = tokenize(sentence),
  C = COURSE.C,
  heads = COURSE.heads,
  seed = COURSE.seed,
} = {}) {
  const setup = { sentence, tokens, C, heads, seed, rng: COURSE.rng, pe: false, causal: false };
  return render('layer_object.py', {
    ...sentenceLayerValues(setup),
    LR: lr,
    RUN_STEPS: runSteps,
    TOTAL_STEPS: runSteps + 1,
  });
}

/** training.py's check line: eps and points only off the default convention, form off 'entry'. */
function checkValues({ stencil, eps, form }, threshold) {
  const points = stencil === 'five-point' ? 5 : 2;
  const standard = points === 2 && eps === DEFAULT_CONVENTION.eps;
  return {
    EPS: standard ? null : eps,
    POINTS: standard ? null : points,
    THRESHOLD: threshold,
    FORM: form === 'entry' ? null : `"${form}"`,
  };
}

/** training.py's values (the playground's too, which renders it inside playground.py). */
function trainingValues({
  title,
  sentence,
  tokens,
  C = COURSE.C,
  heads = COURSE.heads,
  seed = COURSE.seed,
  rng = COURSE.rng,
  pe = false,
  causal = false,
  lrs = [],
  check = true,
  convention = DEFAULT_CONVENTION, // the check table's { stencil, eps, form }
  threshold = conventionThreshold(L5_LINES, convention),
  printAtt = true,
  checkpoints = null, // a lesson's key ('lesson5'): print its checkpoints after the losses
}) {
  return {
    ...sentenceLayerValues({ sentence, tokens, C, heads, seed, rng, pe, causal }),
    ...GRADCHECK_EPS,
    ...checkValues(convention, threshold),
    TITLE: String(title),
    CHECK: !!check,
    LRS: pyList(lrs.map(pyNum)),
    CHECKPOINTS: checkpoints ? checkpointPrints(checkpoints) : '',
    PRINT_ATT: !!printAtt,
  };
}

/**
 * Lesson 5 / playground: the layer on the sentence; MSE training with the given learning-rate
 * history (one entry per step taken on the page); optional full gradient check.
 */
export function trainingScript(opts) {
  return render('training.py', trainingValues(opts));
}

/**
 * The playground's "Copy as NumPy": lesson 5's training script for its settings and the steps
 * taken (lrs), then the attention maps it shows, as the toggle has them: at the initial weights
 * (attSteps 0; Wq and Wk drawn again after E) or after the attSteps steps taken (attSteps =
 * lrs.length).
 */
export function playgroundScript({ attSteps = 0, ...opts }) {
  return render('playground.py', {
    ...trainingValues({ ...opts, printAtt: false }),
    TRAINED: attSteps > 0,
    STEP_COUNT: `${attSteps} step${attSteps === 1 ? '' : 's'}`,
  });
}
