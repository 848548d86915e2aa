// lesson5.js - Guided project: the layer as a reusable object, trained on the Lantern Bay sentence.

import { COURSE } from '../model/defaults.js';
import { el } from '../components/dom.js';
import { table } from '../components/tables.js';
import { figuresList } from '../components/figures.js';
import { numpyBlock, codeDetails } from '../components/code.js';
import { field, errorLine, button } from '../components/controls.js';
import { tokenChips } from '../components/token-chips.js';
import { num } from '../components/numbers.js';
import { heatmap } from '../components/heatmap.js';
import { goDeeper } from '../components/go-deeper.js';
import { GradcheckPanel } from '../components/gradcheck-panel.js';
import { lossChartBesideTable } from '../components/loss-view.js';
import { arraysButton, downloadsRow, ipynbButton } from '../components/downloads.js';
import { DEFAULT_SENTENCE, tokenize } from '../model/tokens.js';
import { MAX_LR, quoteValue, learningRateError } from '../model/settings.js';
import { sentenceModel } from '../model/sentence-model.js';
import {
  LESSON5_DEFAULTS,
  attentionCaptions,
  lossSummary,
  mseScale,
  stepLearningRate,
  stepsText,
  trainAtOnce,
} from '../model/training.js';
import { formatSci } from '../components/scales.js';
import {
  backwardOrder,
  gradcheckSize,
  DEFAULT_CONVENTION,
  L4_LINES,
  conventionThreshold,
  passLineReason,
  passLinesText,
  pendingReport,
  pgThreshold,
} from '../model/gradcheck-report.js';
import { meanOverHeads, slice2d } from '../model/arrays.js';
import { layerObjectScript, trainingScript } from '../model/numpy-scripts.js';
import { lesson5Arrays } from '../model/lesson-arrays.js';
import { checkSamples, customModel } from '../model/custom-arrays.js';
import { SteppedTrainer } from '../jobs/trainer.js';
import { checkpointBox } from '../components/checkpoints.js';
import { courseBox } from '../components/course-box.js';
import { yourRunBox, yoursColumns } from './lesson5-yours.js';

const C = COURSE.C;
const SEED = COURSE.seed;
const RUN_STEPS = LESSON5_DEFAULTS.steps; // "Run 10 steps"
const RUN_EVERY_MS = 80;

function trainingControls(lr = LESSON5_DEFAULTS.lr) {
  const stepBtn = button('l5-step', 'Step', 'btn btn-primary');
  const runBtn = button('l5-run', `Run ${RUN_STEPS} steps`);
  const resetBtn = button('l5-reset', 'Reset');
  const lrInput = el('input', {
    id: 'l5-lr',
    value: String(lr),
    attrs: {
      type: 'number',
      step: '0.01',
      min: '0',
      max: String(MAX_LR),
      inputmode: 'decimal',
      'aria-describedby': 'l5-error',
    },
  });
  const err = errorLine('l5-error');
  const element = el(
    'div',
    { className: 'controls' },
    field('learning rate lr', lrInput),
    stepBtn,
    runBtn,
    resetBtn,
    err.element,
  );
  return { stepBtn, runBtn, resetBtn, lrInput, err, element };
}

const MEAN_NOTE =
  'a view for the eye, not a step of the layer: it concatenates the heads, never averages them';

/**
 * att of each head and their mean, for the trainer's current weights, each titled with its NumPy
 * (attentionCaptions). update(att) after a step.
 */
function attentionMaps(att, tokens, heads) {
  const T = tokens.length;
  const opts = (cap, i) => ({
    rows: T,
    cols: T,
    rowLabels: tokens,
    colLabels: tokens,
    title: cap.name,
    shape: `${cap.code} (${T}, ${T})`,
    caption: i < heads ? undefined : MEAN_NOTE,
    scale: 'unit',
    cellSize: 30,
    exportName: i < heads ? `lesson5-att-h${i}` : 'lesson5-att-mean',
  });
  const data = (a, i) => (i < heads ? slice2d(a, i, T, T) : meanOverHeads(a, 0, heads, T));
  const maps = attentionCaptions(heads).map((cap, i) =>
    heatmap({ data: data(att, i), ...opts(cap, i) }),
  );
  const update = (a) => maps.forEach((m, i) => m.update(data(a, i)));
  const highlight = (t) => {
    for (const m of maps) m.highlight(t === null ? -1 : t, t === null ? -1 : t);
  };
  return { maps, update, highlight };
}

// Steps are counted as lesson 5's script counts them: losses[k] is the loss after k steps;
// yours: yoursColumns (a student's losses beside the page's) or null.
function lossTable(trainer, yours = null) {
  return table({
    headers: ['steps taken k', 'lr of step k', 'loss after k steps', ...(yours?.headers ?? [])],
    rows: trainer.losses.map((L, k) => [
      String(k),
      k === 0 ? '— (none yet)' : num(trainer.lrs[k - 1]),
      num(L, 10),
      ...(yours ? yours.cells(k, L) : []),
    ]),
    caption: 'The loss table (hover a loss for full precision)',
    numeric: yours ? [1, 2, 3, 4] : [1, 2],
  });
}

/** Steps taken, the loss after 0 steps and, after a step, the last loss and the change. */
function lesson5Figures(trainer) {
  const s = lossSummary(trainer.losses);
  const k = stepsText(s.steps);
  const first = [
    { key: 'step', label: 'steps taken', value: trainer.steps },
    { key: 'loss0', label: 'loss after 0 steps (initial weights)', value: s.first, digits: 10 },
  ];
  if (s.steps === 0) return first;
  return [
    ...first,
    { key: 'loss', label: `loss after ${k}`, value: s.last, digits: 10 },
    { key: 'drop', label: `change over the ${k}`, value: s.change, digits: 6 },
  ];
}

function checkPanel(mha, compute, { T, C: width, heads }) {
  const panel = new GradcheckPanel({
    id: 'l5-gradcheck',
    compute,
    threshold: pgThreshold(T, width), // L5_LINES at the sentence's size
    caption: `Gradient check of the MSE loss on the sentence (initial weights, every entry; one row per gradient, in lesson 4's order)`,
    label: 'Lesson 5 gradient check',
    order: backwardOrder(mha),
  });
  panel.showPending(
    'The full check starts as soon as the page has rendered.',
    pendingReport(mha, { B: 1, T, C: width, heads }),
  );
  return panel;
}

/**
 * The learning rate typed in the field, or null (the error line says why, and the field is marked
 * invalid).
 */
function readLr(ui) {
  const lr = stepLearningRate(ui.lrInput.value);
  if (lr === null) {
    const got = ui.lrInput.validity?.badInput
      ? 'something that is not a number'
      : quoteValue(ui.lrInput.value);
    ui.err.set(`${learningRateError(got)} Nothing was changed.`);
    ui.lrInput.setAttribute('aria-invalid', 'true');
    return null;
  }
  ui.err.clear();
  ui.lrInput.removeAttribute('aria-invalid');
  return lr;
}

/**
 * Step, Run 10 steps and Reset on the trainer (its steps run in the compute engine); fill()
 * redraws after every change. Returns { doStep(lr) (resolves true when the step was taken, false
 * when cancelled, the error when it failed), stopRun() }.
 */
function wireTraining(ui, trainer, fill) {
  const run = { active: false, timer: null }; // "Run 10 steps"
  const setBusy = (b) => {
    ui.stepBtn.disabled = b;
    // not runBtn.disabled: disabling the focused button drops keyboard focus to <body> mid-run
    // (a click while running is ignored by its handler)
    ui.runBtn.setAttribute('aria-disabled', String(b));
    ui.runBtn.textContent = b ? 'Running…' : `Run ${RUN_STEPS} steps`;
  };
  const stopRun = () => {
    if (!run.active) return;
    run.active = false;
    clearTimeout(run.timer);
    setBusy(false);
  };
  // resolves true when the step was taken, false when cancelled, else the error
  const doStep = (lr) =>
    trainer.step(lr).then(
      () => {
        fill();
        return true;
      },
      (e) => {
        if (e.cancelled) return false;
        ui.err.set(`Training stopped: ${e.message}`);
        stopRun();
        fill();
        return e;
      },
    );
  ui.stepBtn.addEventListener('click', () => {
    const lr = readLr(ui);
    if (lr !== null) doStep(lr);
  });
  ui.runBtn.addEventListener('click', () => {
    const lr = readLr(ui);
    if (lr === null || run.active) return;
    run.active = true;
    setBusy(true);
    let left = RUN_STEPS;
    const tick = () =>
      doStep(lr).then((ok) => {
        if (ok !== true || !run.active) return;
        left -= 1;
        if (left > 0) run.timer = setTimeout(tick, RUN_EVERY_MS);
        else stopRun();
      });
    run.timer = setTimeout(tick, 0);
  });
  ui.resetBtn.addEventListener('click', () => {
    stopRun();
    ui.err.clear();
    trainer.reset();
    fill();
  });
  ui.lrInput.addEventListener('input', () => readLr(ui));
  return { doStep, stopRun };
}

/**
 * A student's run on the trainer (run: studentRun's): back to the initial weights, then each of
 * its steps at its lr, one after the other; the box says where it stopped when one fails.
 */
function wireYours(run, box, ui, trainer, fill, wired) {
  let serial = 0;
  const runYours = async () => {
    const mine = ++serial;
    wired.stopRun();
    ui.err.clear();
    ui.lrInput.value = fieldLr(run.lr);
    trainer.reset();
    fill();
    for (const lr of run.lrs) {
      const ok = await wired.doStep(lr);
      if (mine !== serial || ok === false) return;
      if (ok !== true) {
        box.stopped(trainer.steps);
        return;
      }
    }
  };
  box.button.addEventListener('click', runYours);
  return runYours;
}

function introParagraph(sentence, T) {
  return el(
    'p',
    { className: 'sentence-display' },
    el('span', { className: 'label', text: 'Sentence: ' }),
    el('q', { text: sentence }),
    el('span', {
      className: 'note',
      text: ` (C = ${C}, h = ${COURSE.heads}, seed ${SEED}, ${COURSE.rng}; X from the embeddings as above, then MultiHeadAttention(C, h, seed=rng) draws Wq, Wk, Wv, Wo, then target = rng.standard_normal((1, ${T}, ${C})))`,
    }),
  );
}

/** What lesson 5 runs on with a notebook's arrays: the target is the student's only when given. */
function customIntro(custom) {
  const target = custom.given?.target
    ? 'and target'
    : 'and a target drawn for them (your file has none: the banner says how)';
  return `Your arrays: X (batch item 0), your Wq, Wk, Wv, Wo ${target}; the tokens are the positions t0, t1, …`;
}

/** "a, b, c and d". */
function andList(items) {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** The two measured reasons, from mseScale's figures s. */
function scaleItems(s) {
  const w = s.weights;
  const ratios = andList(w.map((x) => String(Math.round(x.ratio))));
  const gradients = `The gradients. L = mean((Y − target)²) averages over the n = T·C = ${s.n} entries of Y, so dL/dY = 2(Y − target)/n: each entry is one output's error divided by n/2 = ${s.n / 2}. Its root mean square is 2√L/n = ${s.rms5.toPrecision(3)} (√L is that of Y − target), against ${s.rms4.toPrecision(3)} for lesson 4's dY, whose entries are standard normals: ${Math.round(s.dY)} times smaller. The backward pass is linear in dL/dY, so the weights' gradients shrink by about the same factor: ${andList(w.map((x) => `‖${x.gradient}‖`))} here are ${ratios} times smaller than in lesson 4, measured on these arrays (the rest of the spread comes from the other X and weights: lesson 4 has B·T = ${s.tokens4} tokens, this sentence T = ${s.tokens5}).`;
  const rounding = `The rounding error. A finite difference divides the rounding error of L by ε, and that error grows with the size of L: |L| = ${Math.abs(s.loss4).toPrecision(3)} in lesson 4, ${Math.abs(s.loss5).toPrecision(3)} here. It is what the max abs error column shows: compare lesson 4's table with this one`;
  return { gradients, rounding };
}

/**
 * Lesson 5's pass lines and why its errors are larger than lesson 4's, measured on the page (s:
 * mseScale's, null when they could not be measured; base: the check's pass lines, pgThreshold's):
 * { element (the line and why, in brief), deeper (the measured reasons, for Go deeper),
 * setReport(rows): quotes the finished check's absolute errors }.
 */
function checkNote(s, base) {
  const fmt = (x) => formatSci(x, 0);
  const intro = el('p', {
    className: 'note',
    text: `The same check as lesson 4, with the same choices above its table, now for the MSE loss at the initial weights. Its pass lines are ${passLinesText(base, fmt)}. ${passLineReason('lesson5', fmt, (x) => formatSci(x, 1))}. They sit higher than lesson 4's (with two points, per entry ${fmt(conventionThreshold(L4_LINES, DEFAULT_CONVENTION))} there) because its errors are larger: MSE's gradients are much smaller than lesson 4's while the rounding error of the finite differences shrinks less (Go deeper, below the table, measures both).`,
  });
  const range = el('span', { className: 'abs-range', text: ' (once the check has run).' });
  const element = el('div', { className: 'mse-scale' }, intro);
  const deeper = el('div', { className: 'mse-scale-why' });
  if (s) {
    const { gradients, rounding } = scaleItems(s);
    const worst = `So the relative errors are larger here, most on the smallest entries: the line under the table names the worst one and its size.`;
    deeper.append(
      el(
        'ul',
        { className: 'note' },
        el('li', { text: gradients }),
        el('li', {}, rounding, range),
        el('li', { text: worst }),
      ),
    );
  }
  const setReport = (rows) => {
    const abs = Array.from(rows ?? [], (r) => r.maxAbs);
    if (abs.length === 0) return;
    const lo = formatSci(Math.min(...abs), 2);
    const hi = formatSci(Math.max(...abs), 2);
    range.textContent = `, where they run from ${lo} to ${hi}.`;
  };
  return { element, deeper, setReport };
}

/** mseScale of the lesson's model against lesson 4's arrays, or null if it cannot be measured. */
function measuredScale(mha, data, model) {
  if (!data || data.C !== model.C) return null;
  try {
    return mseScale(mha, data, model);
  } catch (err) {
    console.error(err);
    return null;
  }
}

/** The class as the lessons build it and what each button calls: a program that runs as is. */
function layerListing(sentence) {
  return codeDetails(
    'The layer object: class MultiHeadAttention and what each button calls, on this ' +
      'lesson’s sentence (runs as is; prints the losses the table shows after Step and Run ' +
      `${RUN_STEPS} steps)`,
    layerObjectScript({ lr: COURSE.lr, runSteps: RUN_STEPS, sentence, tokens: tokenize(sentence) }),
  );
}

/**
 * The box "Your course and this page" with the 10 steps of lr 0.1 the course runs, computed at
 * once on the lesson's model (course.values: what it shows besides the check's rows).
 */
function lessonCourseBox(mha, model, custom) {
  const course = courseBox('lesson5', { custom: !!custom });
  const s = { C: model.C, h: model.heads, steps: COURSE.steps, lr: COURSE.lr, causal: false };
  course.values = { losses10: trainAtOnce(mha, s, model).losses, gradcheck: null };
  course.update(course.values);
  return course;
}

/** The "Copy as NumPy" block of the lesson; get() is its script for the current training. */
function lessonScript(sentence, tokens, trainer, heads, panel) {
  const get = () =>
    trainingScript({
      title: `Lesson 5 - guided project: the layer on the sentence, MSE training (${trainer.steps} step(s) taken on the page)`,
      sentence,
      tokens,
      C,
      heads,
      seed: SEED,
      rng: COURSE.rng,
      lrs: trainer.lrs,
      convention: panel.convention,
      threshold: panel.threshold,
      checkpoints: 'lesson5',
    });
  return { ...numpyBlock(get, { what: 'lesson 5' }), get };
}

/**
 * The lesson's downloads: its arrays (the model at its initial weights, then the training so
 * far) and the .ipynb of the whole page (ipynbCells: the page's sections).
 */
function downloads(mha, model, trainer, ipynbCells) {
  const arrays = () =>
    lesson5Arrays(mha, model, {
      weights: trainer.weights,
      att: trainer.att,
      losses: trainer.losses,
      lrs: trainer.lrs,
    });
  return downloadsRow(
    arraysButton(5, arrays).element,
    ipynbCells && ipynbButton(ipynbCells, { id: 'l5-notebook', version: mha.version }).element,
  );
}

/** A found lr as the field shows it: 12 significant digits (0.04999999999999997 -> 0.05). */
const fieldLr = (lr) => String(Number(lr.toPrecision(12)));

/**
 * The controls, and with a student's run (custom.training: lr, steps, losses) its box and the
 * loss table's columns of the student's losses: { run, ui, yours, columns } (null without).
 */
function controlsFor(custom) {
  const run = custom?.training ?? null;
  return {
    run,
    ui: trainingControls(run ? fieldLr(run.lr) : undefined),
    yours: run && yourRunBox(run),
    columns: yoursColumns(run),
  };
}

/** Lesson 5's model: the sentence's, or (custom: a notebook's arrays) the student's. */
function lessonModel(mha, sentence, custom) {
  if (custom) return customModel(custom);
  const tokens = tokenize(sentence);
  return sentenceModel(mha, { tokens, C, heads: COURSE.heads, seed: SEED, rng: COURSE.rng });
}

/**
 * Lesson 5 into `body`: the layer on the sentence (or a notebook's arrays and run), trained step
 * by step, and its gradient check (started by afterReady).
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderLesson5({ mha, body, data, compute, ipynbCells, custom = null }) {
  const sentence = DEFAULT_SENTENCE;
  const model = lessonModel(mha, sentence, custom);
  const trainer = new SteppedTrainer(mha, compute, model);
  const { T, heads, tokens } = model;
  const objectCode = layerListing(sentence);
  const { run, ui, yours, columns } = controlsFor(custom);
  const att = attentionMaps(trainer.att, tokens, heads);
  const attTitle = el('h3');
  const chips = tokenChips(tokens, model.ids, att.highlight);
  const chart = lossChartBesideTable({ losses: trainer.losses, title: 'MSE loss after each step' });
  const lossSlot = el('div');
  const figs = figuresList();
  const panel = checkPanel(mha, compute, model);
  const note = checkNote(measuredScale(mha, data, model), panel.base);
  panel.onChange((p) => note.setReport(p.rows));
  const script = lessonScript(sentence, tokens, trainer, heads, panel);

  function fill(initial = false) {
    if (!initial) {
      // the maps and the chart were made with these very values
      att.update(trainer.att);
      chart.update(trainer.losses);
    }
    attTitle.textContent =
      trainer.steps === 0
        ? 'Attention of the initial weights (0 steps)'
        : `Attention after ${stepsText(trainer.steps)}`;
    lossSlot.replaceChildren(lossTable(trainer, columns));
    yours?.update(trainer.losses);
    figs.set(lesson5Figures(trainer));
    script.refresh();
  }
  const wired = wireTraining(ui, trainer, fill);
  const runYours = yours ? wireYours(run, yours, ui, trainer, fill, wired) : null;

  fill(true);
  const course = lessonCourseBox(mha, model, custom);
  panel.onChange((p) => course.update({ ...course.values, gradcheck: p.rows }));
  body.append(
    course.element,
    custom
      ? el('p', { className: 'note', text: customIntro(custom) })
      : introParagraph(sentence, T),
    objectCode.element,
    el('p', { className: 'formula', text: 'L = mean((Y − target)²),   W ← W − lr · dL/dW' }),
    yours ? yours.element : '',
    ui.element,
    el('div', { className: 'figure-row' }, chart.element, lossSlot),
    goDeeper(
      `the attention of the ${heads} heads, at the initial weights or after the steps taken`,
      attTitle,
      chips,
      el('div', { className: 'figure-grid pairs' }, ...att.maps.map((m) => m.element)),
    ),
    figs.element,
    el('h3', { text: 'Gradient check on the sentence' }),
    note.element,
    panel.element,
    goDeeper('why its errors are larger than lesson 4’s, measured', note.deeper),
    script.element,
    downloads(mha, model, trainer, ipynbCells),
  );
  body.append(checkpointBox('lesson5', trainer, { what: 'lesson 5' }).element); // step 0
  return lesson5View(mha, { model, trainer, panel, script, runYours });
}

/** What the page holds of lesson 5: its figures, its script, its check (run by afterReady). */
function lesson5View(mha, { model, trainer, panel, script, runYours }) {
  const { T, heads, tokens } = model;
  const dims = { B: 1, T, C: model.C, heads };
  const total = gradcheckSize(mha, dims);
  const samples = checkSamples(mha, dims); // 0 (every entry) at the sentence's size
  return {
    figures: () => ({
      tokens: [...tokens],
      losses: [...trainer.losses],
      att: Array.from(trainer.att),
      gradcheck: panel.rows,
      step: trainer.steps,
    }),
    script: script.get,
    afterReady() {
      const opts = { B: 1, T, loss: 'mse', target: model.target, samples };
      const check = { C: model.C, heads, W: model.W, X: model.X, opts };
      panel.run(check, { priority: 2, total: samples ? undefined : total });
      runYours?.(); // the student's steps at the student's lr, at once
    },
    dispose() {
      panel.cancel();
      trainer.free();
    },
  };
}
