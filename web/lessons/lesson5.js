// lesson5.js - Guided project: the layer as a reusable object, trained on the Lantern Bay sentence.

import { table } from '../components/tables.js';
import { lossChart } from '../components/chart.js';
import {
  DEFAULT_SENTENCE,
  quoteValue,
  pendingReport,
  tokenize,
  sentenceModel,
  Trainer,
  layerWith,
  gradcheckJob,
  gradcheckSize,
  slice2d,
  meanOverHeads,
  MAX_LR,
} from '../model.js';
import { trainingScript } from './numpy.js';
import {
  el,
  figuresList,
  numpyBlock,
  num,
  field,
  errorLine,
  tokenChips,
  codeDetails,
  GradcheckPanel,
  lazyHeatmap,
} from './common.js';

// MSE divides by n = T*C = 512, so its gradients are ~1/512 of the dot loss's, while the rounding
// floor of the finite differences (~1e-13 absolute) stays: the smallest entries (~4e-8) then show
// relative errors up to ~1.5e-6 (measured on the sentence). 1e-5 keeps a ~7x headroom.
export const L5_THRESHOLD = 1e-5;

export function renderLesson5({ mha, body, scheduler }) {
  const sentence = DEFAULT_SENTENCE;
  const tokens = tokenize(sentence);
  const model = sentenceModel(mha, { tokens, C: 64, heads: 4, seed: 42, rng: 'default_rng' });
  const trainer = new Trainer(mha, model);
  const { T, heads } = model;

  const objectCode = codeDetails(
    'The layer object (what each button calls)',
    `layer = MultiHeadAttention(Wq, Wk, Wv, Wo, heads=4)   # the weights live in the object

# one step of gradient descent on L = mean((Y - target)**2):
Y = layer.forward(X)                  # caches Q, K, V, att, ... for backward
dY = 2 * (Y - target) / Y.size        # dL/dY
layer.backward(dY)                    # fills layer.grads: dWq, dWk, dWv, dWo (and dX)
layer.step(lr)                        # W -= lr * dW for each of the four weights`,
    { open: true },
  );

  // --- controls
  const stepBtn = el('button', {
    id: 'l5-step',
    type: 'button',
    className: 'btn btn-primary',
    text: 'Step',
  });
  const runBtn = el('button', {
    id: 'l5-run',
    type: 'button',
    className: 'btn',
    text: 'Run 10 steps',
  });
  const resetBtn = el('button', {
    id: 'l5-reset',
    type: 'button',
    className: 'btn',
    text: 'Reset',
  });
  const lrInput = el('input', {
    id: 'l5-lr',
    value: '0.1',
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
  const controls = el(
    'div',
    { className: 'controls' },
    field('learning rate lr', lrInput),
    stepBtn,
    runBtn,
    resetBtn,
    err.element,
  );

  // --- attention of the current weights
  const attMaps = [];
  for (let i = 0; i < heads; i++) {
    attMaps.push(
      lazyHeatmap({
        data: slice2d(trainer.att, i, T, T),
        rows: T,
        cols: T,
        rowLabels: tokens,
        colLabels: tokens,
        title: `head ${i}`,
        shape: `att[0, ${i}] (${T}, ${T})`,
        scale: 'unit',
        cellSize: 30,
        exportName: `lesson5-att-h${i}`,
      }),
    );
  }
  attMaps.push(
    lazyHeatmap({
      data: meanOverHeads(trainer.att, 0, heads, T),
      rows: T,
      cols: T,
      rowLabels: tokens,
      colLabels: tokens,
      title: 'mean over heads',
      shape: `(${T}, ${T})`,
      scale: 'unit',
      cellSize: 30,
      exportName: 'lesson5-att-mean',
    }),
  );
  const attTitle = el('h3');
  const chips = tokenChips(tokens, model.ids, (t) => {
    for (const m of attMaps) m.highlight(t === null ? -1 : t, t === null ? -1 : t);
  });

  const chart = lossChart({ losses: trainer.losses, title: 'MSE loss after each step' });
  const chartValues = chart.element.querySelector('details.chart-values');
  if (chartValues) {
    chartValues.open = false;
    chartValues.dataset.touched = '1';
  } // the loss table beside the chart has the values
  const lossSlot = el('div');
  const figs = figuresList();

  const panel = new GradcheckPanel({
    id: 'l5-gradcheck',
    scheduler,
    threshold: L5_THRESHOLD,
    caption: 'Gradient check of the MSE loss on the sentence (initial weights, every entry)',
    label: 'Lesson 5 gradient check',
  });
  panel.showPending(
    'The full check starts as soon as the page has rendered.',
    pendingReport({ B: 1, T, C: 64, heads }),
  );

  const script = numpyBlock(
    () =>
      trainingScript({
        title: `Lesson 5 - guided project: the layer on the sentence, MSE training (${trainer.steps} step(s) taken on the page)`,
        sentence,
        tokens,
        C: 64,
        heads,
        seed: 42,
        rng: 'default_rng',
        lrs: trainer.lrs,
        threshold: L5_THRESHOLD,
      }),
    { what: 'lesson 5' },
  );

  function fill(initial = false) {
    const att = trainer.att;
    if (!initial) {
      // the maps and the chart were made with these very values
      for (let i = 0; i < heads; i++) attMaps[i].update(slice2d(att, i, T, T));
      attMaps[heads].update(meanOverHeads(att, 0, heads, T));
      chart.update(trainer.losses);
    }
    attTitle.textContent =
      trainer.steps === 0
        ? 'Attention of the initial weights (step 0)'
        : `Attention after step ${trainer.steps}`;
    lossSlot.replaceChildren(
      table({
        headers: ['step', 'lr used', 'loss after the step'],
        rows: trainer.losses.map((L, k) => [
          String(k),
          k === 0 ? '(initial weights)' : num(trainer.lrs[k - 1]),
          num(L, 10),
        ]),
        caption: 'The loss table (hover a loss for full precision)',
        numeric: [1, 2],
      }),
    );
    const first = trainer.losses[0];
    figs.set([
      { key: 'step', label: 'steps taken', value: trainer.steps },
      { key: 'loss0', label: 'loss at step 0', value: first, digits: 10 },
      { key: 'loss', label: `loss after step ${trainer.steps}`, value: trainer.loss, digits: 10 },
      { key: 'drop', label: 'change since step 0', value: trainer.loss - first, digits: 6 },
    ]);
    script.refresh();
  }

  function readLr() {
    const v = lrInput.value.trim();
    const lr = Number(v);
    if (v === '' || !Number.isFinite(lr) || lr <= 0 || lr > MAX_LR) {
      const got = lrInput.validity?.badInput
        ? 'something that is not a number'
        : quoteValue(lrInput.value);
      err.set(
        `The learning rate must be a number greater than 0 and at most ${MAX_LR}; got ${got}. Nothing was changed.`,
      );
      lrInput.setAttribute('aria-invalid', 'true');
      return null;
    }
    err.clear();
    lrInput.removeAttribute('aria-invalid');
    return lr;
  }

  let running = null; // the timer of "Run 10 steps"
  function setBusy(b) {
    stepBtn.disabled = b;
    // not runBtn.disabled: disabling the focused button drops keyboard focus to <body> mid-run
    // (a click while running is ignored by its handler)
    runBtn.setAttribute('aria-disabled', String(b));
    runBtn.textContent = b ? 'Running…' : 'Run 10 steps';
  }
  function stopRun() {
    if (running) {
      clearTimeout(running);
      running = null;
      setBusy(false);
    }
  }
  function doStep(lr) {
    try {
      trainer.step(lr);
    } catch (e) {
      err.set(`Training stopped: ${e.message}`);
      stopRun();
      setBusy(false);
      fill();
      return false;
    }
    fill();
    return true;
  }

  stepBtn.addEventListener('click', () => {
    const lr = readLr();
    if (lr !== null) doStep(lr);
  });
  runBtn.addEventListener('click', () => {
    const lr = readLr();
    if (lr === null || running) return;
    setBusy(true);
    let left = 10;
    const tick = () => {
      running = null;
      if (!doStep(lr)) return;
      left -= 1;
      if (left > 0) running = setTimeout(tick, 80);
      else setBusy(false);
    };
    running = setTimeout(tick, 0);
  });
  resetBtn.addEventListener('click', () => {
    stopRun();
    err.clear();
    trainer.reset();
    fill();
  });
  lrInput.addEventListener('input', () => {
    readLr();
  });

  fill(true);
  body.append(
    el(
      'p',
      { className: 'sentence-display' },
      el('span', { className: 'label', text: 'Sentence: ' }),
      el('q', { text: sentence }),
      el('span', {
        className: 'note',
        text: ` (C = 64, h = 4, seed 42, default_rng; X from the embeddings as above, then Wq, Wk, Wv, Wo, then target = rng.standard_normal((1, ${T}, 64)))`,
      }),
    ),
    objectCode.element,
    el('p', { className: 'formula', text: 'L = mean((Y − target)²),   W ← W − lr · dL/dW' }),
    controls,
    el('div', { className: 'figure-row' }, chart.element, lossSlot),
    attTitle,
    chips,
    el('div', { className: 'figure-grid' }, ...attMaps.map((m) => m.element)),
    figs.element,
    el('h3', { text: 'Gradient check on the sentence' }),
    el('p', {
      className: 'note',
      text: `Same five-point check as lesson 4, now for the MSE loss at the initial weights. Pass threshold: relative error ≤ 10⁻⁵, not 10⁻⁷. MSE divides by n = T·C = ${T * 64}, so its gradients are about ${T * 64} times smaller than lesson 4's while the finite differences' rounding floor (about 10⁻¹³ absolute) stays the same; on the smallest entries (about 4·10⁻⁸) that alone gives relative errors near 1.5·10⁻⁶. The absolute errors stay below 10⁻¹².`,
    }),
    panel.element,
    script.element,
  );

  const total = gradcheckSize({ B: 1, T, C: 64, heads });
  return {
    figures: () => ({
      tokens: [...tokens],
      losses: [...trainer.losses],
      att: Array.from(trainer.att),
      gradcheck: panel.rows,
      step: trainer.steps,
    }),
    afterReady() {
      panel.run(
        gradcheckJob(() => layerWith(mha, 64, heads, model.W), model.X, {
          B: 1,
          T,
          loss: 'mse',
          target: model.target,
        }),
        { priority: 2, total },
      );
    },
    panel,
  };
}
