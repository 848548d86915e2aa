// check.js - "Check your notebook": the np.savez line to paste in the notebook, a drop
// zone / file picker for .npz and .npy files and a paste box for one array as text, the list of
// loaded arrays, heads and causal, the check's table in the course's order with, for every tensor
// that differs, its maps side by side (yours, expected, yours − expected, and yours / expected when
// the cause is a constant factor), and "Use my arrays in the lessons".
//
// Files are read in the browser (File.arrayBuffer); nothing is sent anywhere. A bad file, a bad
// paste or a check that cannot run gets a message next to its control, and what was loaded and
// the last table stay.

import { el } from '../components/dom.js';
import { field, errorLine, button } from '../components/controls.js';
import { copyButton } from '../components/export.js';
import { fileDrop, pasteBox, arrayList } from '../components/check-input.js';
import { checkTable, diffFigures, toleranceLine } from '../components/check-table.js';
import { customBanner } from '../components/custom-banner.js';
import { renderBugGallery } from './bug-gallery.js';
import {
  readNpy,
  loadNpz,
  parseNumpyText,
  checkNotebook,
  LESSON_KEYS,
  LESSON_SAVES,
  lessonSaveLine,
  savezLine,
  adaptLayout,
  readingNote,
} from '../check.js';
import {
  addArrays,
  removeArray,
  checkArgs,
  inferHeads,
  missingForCheck,
  fileError,
  fileKind,
  fileArrays,
  skippedText,
  addSkipped,
  nonFiniteNotice,
  nameError,
  quoteName,
  customArrays,
  customLimitsText,
  statusSummary,
  rootCauseText,
  checkedText,
  lessonGroups,
  plainArrays,
  replacedNotices,
  LAYER_SAVE_LINE,
} from '../model/custom-arrays.js';
import { COURSE } from '../model/defaults.js';
import { MAX_PG_TOKENS } from '../model/settings.js';
import { CHECK_FILE_ID } from '../model/course-results.js';

const SAVEZ_LINE = savezLine(); // every input and result, in the course's order

const WHAT_TO_SAVE = [
  `Inputs (needed): X, shape (B, T, C) or (T, C), and the weights Wq, Wk, Wv, Wo, each (C, C), used as X @ W.`,
  `For the backward pass: dY (the gradient arriving at Y: the loss is sum(dY ⊙ Y), as in lesson 4) or target (the loss is mean((Y − target)²), as in lesson 5).`,
  `Results: any of the others, whatever you have computed so far; leave out the rest (they show as “not given”). Q, K, V, headout and their gradients may be split (B, h, T, hs) or merged (B, T, C).`,
  `The names left of each = are the ones the page reads; your own variable names go on the right (Q=q if your notebook calls it q).`,
];

const NORM_NOTE = `max rel error: the largest |yours − expected| / max(|yours|, |expected|) over single entries, so one tiny entry can make it large; norm rel error: ‖yours − expected‖ / (‖yours‖ + ‖expected‖) over the whole array, one number that small entries cannot inflate (0: equal, 1: unrelated).`;

/** A message as a sentence: with its closing full stop (the engine's may have none). */
const sentence = (msg) => (/[.!?…]$/.test(msg.trim()) ? msg.trim() : `${msg.trim()}.`);

/** A line to copy: the code (a named, focusable region) and its Copy button. */
function copyableLine(line, { id, name, copyName }) {
  const code = el('code', { className: 'language-python', text: line });
  const pre = el(
    'pre',
    {
      id,
      className: 'numpy savez-line',
      tabIndex: 0,
      attrs: { role: 'region', 'aria-label': name },
    },
    code,
  );
  const copy = copyButton('Copy the line', () => line);
  copy.setAttribute('aria-label', copyName);
  return [pre, el('div', { className: 'actions' }, copy)];
}

/** Step 1: the savez lines (one array at a time, or lesson 5's class) with Copy, what to save. */
function saveStep() {
  return [
    el('h3', { text: '1 · Save your arrays in the notebook' }),
    el('p', {
      text: `Run this line at the end of your notebook (drop the names you have not computed yet); it writes mha_check.npz beside the notebook.`,
    }),
    ...copyableLine(SAVEZ_LINE, {
      id: 'nb-savez-arrays',
      name: 'The np.savez line for your notebook',
      copyName: 'Copy the line: np.savez for your notebook',
    }),
    el('p', {
      text: `Built lesson 5’s class MultiHeadAttention? Use these lines instead, with your layer, X and target: they run one forward and backward at the layer’s current weights, so its weights, cache and gradients belong together, and save every array the layer holds, whether as attributes (the course’s class: layer.Wq, layer.dWq, …) or in dicts (the page’s: layer.W, layer.cache, layer.grads). Use the line above when your notebook computes the steps as separate variables (lessons 3 and 4).`,
    }),
    ...copyableLine(LAYER_SAVE_LINE, {
      id: 'nb-savez-layer',
      name: 'The np.savez line for lesson 5’s MultiHeadAttention',
      copyName: 'Copy the line: np.savez for lesson 5’s MultiHeadAttention layer',
    }),
    el('ul', { className: 'save-list' }, ...WHAT_TO_SAVE.map((t) => el('li', { text: t }))),
    lessonLines(),
  ];
}

/**
 * One lesson's arrays at a time: each lesson's line, its names prefixed with the lesson's (l1_X is
 * lesson 1's X, l4_X lesson 4's), so several lessons' files load together, each feeding its own.
 */
function lessonLines() {
  const items = LESSON_KEYS.map((key) => {
    const line = lessonSaveLine(key);
    const copy = copyButton('Copy', () => line);
    copy.setAttribute(
      'aria-label',
      `Copy the line: np.savez for ${key.replace('lesson', 'lesson ')}`,
    );
    const code = el('code', { className: 'language-python', text: line });
    return el('li', { dataset: { lesson: key } }, code, ' ', copy);
  });
  return el(
    'details',
    { className: 'lesson-lines', id: 'nb-lesson-lines' },
    el('summary', { text: 'or check one lesson’s arrays: each lesson’s line' }),
    el('p', {
      className: 'note',
      text: `Each line saves one lesson’s arrays under names of its own (${LESSON_SAVES.lesson1.prefix}X is lesson 1’s X, ${LESSON_SAVES.lesson4.prefix}X lesson 4’s), so the files of several lessons load together and each lesson gets its own. They feed the lessons (“Use my arrays in the lessons”); the check of step 3 compares a whole layer saved with the lines above.`,
    }),
    el('ul', { className: 'save-list' }, ...items),
  );
}

/**
 * The check's options: heads (a number, or inferred from a split array), the causal mask, and
 * the weights read (out, in) as PyTorch's nn.Linear stores them (else as the arrays show, the
 * course's (in, out) first for the course's names).
 */
function optionControls() {
  const heads = el('input', {
    id: 'nb-heads',
    value: String(COURSE.heads),
    attrs: {
      type: 'number',
      min: '1',
      step: '1',
      inputmode: 'numeric',
      'aria-describedby': 'nb-heads-note nb-check-error',
    },
  });
  const causal = el('input', { id: 'nb-causal', attrs: { type: 'checkbox' } });
  const outIn = el('input', { id: 'nb-out-in', attrs: { type: 'checkbox' } });
  const headsNote = el('span', { id: 'nb-heads-note', className: 'note hint' });
  const err = errorLine('nb-check-error');
  const element = el(
    'div',
    { className: 'controls' },
    field('heads h', heads),
    headsNote,
    field('causal mask (your notebook masks scores above the diagonal)', causal),
    field('weights stored (out, in), used as X @ W.T (PyTorch’s nn.Linear)', outIn),
    err.element,
  );
  return { element, heads, causal, outIn, headsNote, err };
}

/** The results area: status line, summary, notes, table, the rel-error note and the diffs. */
function resultsArea() {
  const status = el('p', { id: 'nb-status', className: 'note', attrs: { role: 'status' } });
  const slot = el('div', { id: 'nb-results', className: 'notebook-results' });
  status.textContent = `Load your arrays above: the check runs as soon as X and the four weights are there.`;
  return { status, slot };
}

/**
 * The nodes of a check's result (summary, where to look first, notes, the tolerance rule, the
 * table, the maps of the differing tensors) for checkNotebook's report: what the section shows
 * (exported for the browser test, which renders a report of its own through it).
 */
export function resultNodes(result) {
  const sum = statusSummary(result.rows);
  const s = result.sizes;
  const nodes = [
    el('p', {
      className: `notebook-summary ${sum.counts.differs + sum.counts.shape ? 'is-fail' : 'is-pass'}`,
      text: `${sum.text} Sizes from your arrays: B = ${s.B}, T = ${s.T}, C = ${s.C}, h = ${s.heads} (hs = ${s.hs}); loss: ${lossText(result.loss)}.`,
    }),
  ];
  const roots = rootCauseText(result.rows);
  if (roots) nodes.push(el('p', { className: 'notebook-roots', text: roots }));
  for (const n of result.notes ?? []) nodes.push(el('p', { className: 'note', text: n }));
  if (result.ignored?.length) {
    const names = result.ignored.map(quoteName).join(', ');
    nodes.push(el('p', { className: 'note', text: `Not course names, not checked: ${names}.` }));
  }
  const tol = toleranceLine(result);
  if (tol) nodes.push(el('p', { className: 'note tolerance-line', text: tol }));
  nodes.push(checkTable(result), el('p', { className: 'note', text: NORM_NOTE }));
  const diffs = diffFigures(result);
  if (diffs.figures.length) nodes.push(...diffNodes(diffs));
  return nodes;
}

/** The maps of the differing tensors: those with a mistake of their own, then (collapsed) those
 * that only follow from one. */
function diffNodes(diffs) {
  const grid = (sets) => el('div', { className: 'diff-sets' }, ...sets);
  const follow = diffs.follow.length
    ? el(
        'details',
        { className: 'notebook-follow' },
        el('summary', {
          text: `The ${diffs.follow.length} that only follow from an earlier difference`,
        }),
        grid(diffs.follow),
      )
    : '';
  return [
    el('h4', {
      text: `Where they differ: yours, expected, yours − expected (${diffs.figures.length})`,
    }),
    el('div', { className: 'notebook-diffs' }, diffs.controls, grid(diffs.own), follow),
  ];
}

function lossText(loss) {
  if (loss === 'mse') return 'mean((Y − target)²) from your target';
  if (loss === 'dot') return 'sum(dY ⊙ Y) from your dY';
  return 'none (no dY or target: no gradients checked)';
}

/** Step 4: "Use my arrays in the lessons" and its banner. */
function useControls() {
  const use = button('nb-use', 'Use my arrays in the lessons', 'btn btn-primary');
  const err = errorLine('nb-use-error');
  const bannerSlot = el('div', { id: 'nb-use-banner', attrs: { 'aria-live': 'polite' } });
  return { use, err, bannerSlot, element: el('div', { className: 'actions' }, use) };
}

/**
 * Read one file: { arrays (named), skipped (.npz members not loaded, with why) }; throws a
 * message about this file when none of it can be loaded.
 */
async function readFile(file) {
  const pre = fileError(file);
  if (pre) throw new Error(pre);
  const bytes = new Uint8Array(await file.arrayBuffer());
  const kind = fileKind(file.name);
  try {
    return fileArrays(file.name, kind, kind === 'npz' ? loadNpz(bytes) : readNpy(bytes));
  } catch (e) {
    throw new Error(`${quoteName(file.name)}: ${sentence(e.message)}`, { cause: e });
  }
}

/** The section's parts, wired to one state object. */
function sectionParts(ctx) {
  return {
    files: fileDrop({ id: CHECK_FILE_ID, onFiles: (files) => loadFiles(ctx, files) }),
    paste: pasteBox({ id: 'nb-paste', onAdd: (...args) => addPasted(ctx, ...args) }),
    listSlot: el('div', { id: 'nb-arrays' }),
    options: optionControls(),
    results: resultsArea(),
    useUi: useControls(),
    gallery: renderBugGallery({ mha: ctx.mha }),
  };
}

/** Dropped or picked files in: their arrays loaded, their skipped members listed (see refresh). */
async function loadFiles(ctx, files) {
  const { err } = ctx.parts.files;
  const incoming = [];
  const skipped = [];
  const read = [];
  const errors = [];
  for (const f of files) {
    try {
      const got = await readFile(f);
      incoming.push(...got.arrays);
      skipped.push(...got.skipped);
      read.push(f.name);
    } catch (e) {
      errors.push(e.message);
    }
  }
  const notices = [
    ...replacedNotices(ctx.state.list, incoming),
    ...incoming.map(nonFiniteNotice).filter(Boolean),
  ];
  if (errors.length || notices.length) err.set([...errors, ...notices]);
  else err.clear();
  ctx.state.skipped = addSkipped(ctx.state.skipped, read, skipped);
  if (incoming.length) setArrays(ctx, incoming);
}

function addPasted(ctx, name, text, computedIn) {
  const { err } = ctx.parts.paste;
  const bad = nameError(name.trim());
  if (bad) {
    err.set(bad);
    return;
  }
  let a;
  try {
    a = parseNumpyText(text);
  } catch (e) {
    err.set(`The pasted text could not be read: ${sentence(e.message)}`);
    return;
  }
  const entry = { name: name.trim(), data: a.data, shape: [...a.shape], dtype: a.dtype };
  const notice = nonFiniteNotice({ ...entry, source: 'pasted' });
  if (notice) err.set(notice);
  else err.clear();
  // what the text was computed in: repr's dtype=..., else the student's choice
  const printedDtype = a.printedDtype ?? (computedIn || null);
  setArrays(ctx, [{ ...entry, source: 'pasted', resolution: a.resolution, printedDtype }]);
  ctx.parts.paste.clear();
}

/** New arrays in: merge them, infer heads, redraw the list, run the check. */
function setArrays(ctx, incoming) {
  const { list } = addArrays(ctx.state.list, incoming);
  ctx.state.list = list;
  const inferred = inferHeads(list);
  const { heads, headsNote } = ctx.parts.options;
  if (inferred) {
    heads.value = String(inferred.heads);
    headsNote.textContent = `h = ${inferred.heads} from the shape of ${inferred.from}`;
    headsNote.dataset.inferred = '1';
  } else if (headsNote.dataset.inferred) {
    // the heads came from arrays that no longer show them: back to the course's
    heads.value = String(COURSE.heads);
    headsNote.textContent = '';
    delete headsNote.dataset.inferred;
  }
  refresh(ctx);
}

/**
 * The loaded arrays in a <details>: open while short, else as the reader left it. With a lesson's
 * own arrays loaded (l4_X …), one group a lesson: what it reads each as and what it still needs.
 */
function listDetails(ctx) {
  const { state, parts } = ctx;
  const before = parts.listSlot.querySelector('details');
  const names = state.list.map((a) => a.name);
  const shown = names.length > 6 ? `${names.slice(0, 6).join(', ')}, …` : names.join(', ');
  const onRemove = (key) => {
    const at = state.list.findIndex((a) => a.key === key);
    state.list = removeArray(state.list, key);
    if (!inferHeads(state.list)) {
      parts.options.headsNote.textContent = '';
      delete parts.options.headsNote.dataset.inferred;
    }
    refresh(ctx);
    // the pressed button is gone: focus the next one (or the last, or the drop zone)
    const buttons = parts.listSlot.querySelectorAll('button');
    (buttons[Math.min(at, buttons.length - 1)] ?? parts.files.zone).focus();
  };
  if (!state.list.length) return arrayList(state.list, onRemove);
  const groups = lessonGroups(state.list);
  const open = state.list.length <= 8 || (before?.open ?? false);
  const summary = groups.some((g) => g.lesson)
    ? `Loaded arrays: ${names.length}, for ${groups.map(groupName).join('; ')}`
    : `Loaded arrays: ${names.length} (${shown})`;
  const body = groups.some((g) => g.lesson)
    ? groups.map((g) => groupNodes(g, state.list, onRemove))
    : [arrayList(state.list, onRemove)];
  return el(
    'details',
    { className: 'loaded-arrays', open },
    el('summary', { text: summary }),
    ...body,
  );
}

/** "lesson 4 (6)" or "the check (course names, 5)" for a group of lessonGroups. */
const groupName = (g) =>
  g.lesson
    ? `${g.lesson.replace('lesson', 'lesson ')} (${g.arrays.length})`
    : `the check (course names, ${g.arrays.length})`;

/** A group of the loaded list: its sentence (what it feeds, read as what, missing), its table. */
function groupNodes(g, list, onRemove) {
  const saved = new Set(g.arrays.map((a) => a.saved));
  const rows = list.filter((a) => saved.has(a.name));
  return el(
    'div',
    { className: 'loaded-group', dataset: { lesson: g.lesson ?? 'check' } },
    el('p', { className: `note${g.missing.length ? ' is-missing' : ''}`, text: g.text }),
    arrayList(rows, onRemove),
  );
}

/** The members of the files loaded that were skipped: one line each, why and what to save. */
function skippedLines(skipped) {
  if (!skipped.length) return null;
  const files = new Set(skipped.map((s) => s.source)).size;
  return el(
    'div',
    { id: 'nb-skipped', className: 'skipped-members' },
    el('p', {
      className: 'note',
      text: `Skipped, not loaded (${skipped.length}): the other arrays of ${files === 1 ? 'the file' : 'these files'} are loaded.`,
    }),
    el('ul', {}, ...skipped.map((s) => el('li', { text: skippedText(s) }))),
  );
}

function refresh(ctx) {
  const lines = [listDetails(ctx), skippedLines(ctx.state.skipped)];
  ctx.parts.listSlot.replaceChildren(...lines.filter(Boolean)); // (null would show as "null")
  runCheck(ctx);
}

/** The heads typed (a whole number ≥ 1), or null with the message next to the field. */
function readHeads(ctx) {
  const { heads, err } = ctx.parts.options;
  const h = Number(heads.value);
  if (!Number.isInteger(h) || h < 1) {
    err.set(`heads must be a whole number ≥ 1; got ${quoteName(heads.value)}.${lastTable(ctx)}`);
    heads.setAttribute('aria-invalid', 'true');
    return null;
  }
  heads.removeAttribute('aria-invalid');
  return h;
}

/** " The table below is the last check's." when there is one, else ''. */
const lastTable = (ctx) => (ctx.state.result ? " The table below is the last check's." : '');

/**
 * Why the check cannot run yet: the course names it still needs and, where lessons' own arrays
 * are loaded (l4_X …), that those feed their lessons, not the check.
 */
function missingText(ctx, missing) {
  const lessons = lessonGroups(ctx.state.list).filter((g) => g.lesson);
  const list = missing.join(', ');
  const own = andList(lessons.map((g) => g.lesson.replace('lesson', '')));
  const them = lessons.length === 1 ? `lesson ${own}’s own arrays` : `lessons ${own}’s own arrays`;
  const feeds = lessons.length
    ? ` Loaded: ${them}, which feed ${lessons.length === 1 ? 'that lesson' : 'those lessons'} (“Use my arrays in the lessons”, step 4); the check compares a whole layer, saved under the course’s names with a line of step 1.`
    : '';
  // what of a layer the file holds, read as what (a file of other names: what was understood)
  const { reading } = adaptLayout(checkArgs(plainArrays(ctx.state.list)), {});
  const some = Object.values(reading.read).some((keys) => keys.length);
  const read = some ? readingNote(reading) : null;
  const asRead = read ? ` ${read[0].toUpperCase()}${read.slice(1)}.` : '';
  if (ctx.state.result) {
    return `${list} not loaded now: the table below is from the last check.${asRead}${feeds}`;
  }
  return `Still needed for the check: ${list}.${asRead}${feeds}`;
}

/** "1, 3 and 4" */
const andList = (xs) =>
  xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`;

/** Run the check on what is loaded; errors go next to the options, the last table stays. */
function runCheck(ctx) {
  const { state, parts, mha } = ctx;
  const { status, slot } = parts.results;
  // the course names: a lesson's own arrays (l4_X …) feed that lesson only
  const plain = plainArrays(state.list);
  const missing = missingForCheck(mha, plain, adaptLayout);
  if (missing.length) {
    status.textContent = missingText(ctx, missing);
    return;
  }
  const heads = readHeads(ctx);
  if (heads === null) return;
  try {
    const causal = parts.options.causal.checked;
    const weights = parts.options.outIn.checked ? 'out-in' : 'auto';
    const result = checkNotebook(mha, checkArgs(plain), { heads, causal, weights });
    if (!result.sizes) {
      // (X or a weight missing: the report says what; the last table stays)
      status.textContent = missingText(ctx, result.missing);
      return;
    }
    state.result = result;
  } catch (e) {
    parts.options.err.set(`The check could not run: ${sentence(e.message)}${lastTable(ctx)}`);
    const why = 'The check could not run on what is loaded now (why: above)';
    status.textContent = state.result ? `${why}; the table below is the last check’s.` : `${why}.`;
    return;
  }
  parts.options.err.clear();
  state.heads = heads;
  // the check read another h from the arrays (its note says why): said by the field too
  const { headsNote } = parts.options;
  const read = state.result.sizes.heads;
  if (read !== heads) headsNote.textContent = `checked with h = ${read}, as your arrays show`;
  else if (!headsNote.dataset.inferred) headsNote.textContent = '';
  status.textContent = checkedText(state.result.rows, plain.length);
  slot.replaceChildren(...resultNodes(state.result));
}

/** "Use my arrays in the lessons": the arrays for the lessons, or the messages why not. */
function useArrays(ctx) {
  const { state, parts, mha } = ctx;
  const { err } = parts.useUi;
  const heads = readHeads(ctx);
  if (heads === null) {
    err.set('Give a whole number of heads first (above).');
    return;
  }
  const r = customArrays(mha, state.list, heads);
  if (r.errors) {
    err.set([...r.errors, 'The lessons still show the course’s arrays.']);
    return;
  }
  err.clear();
  ctx.onUse(r.custom);
}

/** Show (custom) or hide (null) the section's own "custom arrays in use" banner. */
function showCustom(ctx, custom) {
  const { bannerSlot } = ctx.parts.useUi;
  bannerSlot.replaceChildren(
    custom ? customBanner({ id: 'nb-back', custom, onBack: () => ctx.onBack(), all: true }) : '',
  );
}

function sectionBody(parts) {
  const { files, paste, listSlot, options, results, useUi, gallery } = parts;
  return [
    ...gallery.element,
    ...saveStep(),
    el('h3', { text: '2 · Load them here' }),
    el('p', {
      className: 'note',
      text: `Files are read by this page in your browser: nothing is uploaded, and the page works offline and from a local file. Several files at once are fine; a .npy file gives one array named after the file (att.npy → att).`,
    }),
    files.element,
    el(
      'details',
      { className: 'paste-details' },
      el('summary', { text: 'or paste one array as text (print(repr(a)))' }),
      paste.element,
    ),
    listSlot,
    options.element,
    el('h3', { text: '3 · The check' }),
    results.status,
    results.slot,
    el('h3', { text: '4 · Your arrays in the lessons' }),
    el('p', {
      text: `Lessons 3, 4 and 5 and the playground can run on your X and weights (and your dY and target when the file has them) instead of the course’s: B, T, C and h come from your shapes, up to ${customLimitsText()} (every batch item and head is drawn; the playground’s own sentences go up to ${MAX_PG_TOKENS} tokens and C = 1024). Lesson 1 runs on your X and the two heads’ weights Wq1, Wk1, Wv1, Wq2, Wk2, Wv2 (each (C, hs); W_q1, q1 or head1_Wq are read too), lesson 2 on your x and Wq.`,
    }),
    useUi.element,
    useUi.err.element,
    useUi.bannerSlot,
  ];
}

/**
 * The check of a student's arrays into `body`; "Use my arrays" calls ctx.onUse(custom), its Back
 * ctx.onBack(). Its view's state() is what the tests read (loaded names, the last check's
 * statuses); showCustom(custom) shows which arrays the lessons use.
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderCheck({ mha, body, onUse, onBack }) {
  const ctx = { mha, onUse, onBack, state: { list: [], skipped: [], result: null, heads: null } };
  ctx.parts = sectionParts(ctx);
  const { options } = ctx.parts;
  options.heads.addEventListener('input', () => runCheck(ctx));
  options.causal.addEventListener('change', () => runCheck(ctx));
  options.outIn.addEventListener('change', () => runCheck(ctx));
  ctx.parts.useUi.use.addEventListener('click', () => useArrays(ctx));
  refresh(ctx);
  body.append(...sectionBody(ctx.parts));
  return {
    showCustom: (custom) => showCustom(ctx, custom),
    state: () => ({
      arrays: ctx.state.list.map((a) => ({ name: a.name, shape: [...a.shape], source: a.source })),
      rows:
        ctx.state.result?.rows.map((r) => ({
          name: r.name,
          status: r.status,
          diagnosis: r.diagnosis?.id ?? null,
        })) ?? null,
    }),
  };
}
