// playground.js - every setting editable; everything re-renders live; the state lives in the URL.

import { table } from '../components/tables.js';
import { lossChart } from '../components/chart.js';
import { copyButton } from '../components/export.js';
import {
  DEFAULTS,
  C_OPTIONS,
  RNG_OPTIONS,
  MAX_STEPS,
  divisors,
  validateSettings,
  parseQuery,
  settingsToQuery,
  sentenceModel,
  Trainer,
  layerWith,
  borrowLayer,
  returnLayer,
  pendingReport,
  gradcheckJob,
  gradcheckSize,
  slice2d,
  meanOverHeads,
} from '../model.js';
import { trainingScript, xSnippet } from './numpy.js';
import {
  el,
  num,
  field,
  errorLine,
  debounce,
  tokenChips,
  codeDetails,
  numpyBlock,
  figuresList,
  thousands,
  GradcheckPanel,
  lazyHeatmap,
} from './common.js';
import { L5_THRESHOLD } from './lesson5.js';

const SAMPLES = 32;
const GRID_CELLS = 16384; // at most this many cells in the all-heads grid
const GRID_MAX = 16;

/**
 * The pass threshold of the MSE check: 1e-5 at lesson 5's size n = T*C = 512 (see lesson5.js),
 * scaled with n above it, because MSE's gradients shrink as 1/n while the finite differences'
 * rounding floor (~1e-13 absolute) does not.
 */
export function pgThreshold(T, C) {
  return L5_THRESHOLD * Math.max(1, (T * C) / 512);
}

/** Whether the full check starts on its own (about the size of lesson 5's, a few seconds). */
function autoFull(s, T) {
  return T * s.C * s.C <= 8 * 64 * 64 && gradcheckSize({ T, C: s.C, heads: s.h }) <= 25000;
}

export function renderPlayground({ mha, body, scheduler }) {
  // ---------------------------------------------------------------- controls
  const sentenceIn = el('input', {
    id: 'pg-sentence',
    attrs: {
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'pg-error',
    },
  });
  const cSel = el(
    'select',
    { id: 'pg-C', attrs: { 'aria-describedby': 'pg-error' } },
    ...C_OPTIONS.map((c) => el('option', { value: String(c), text: String(c) })),
  );
  const hSel = el('select', { id: 'pg-heads', attrs: { 'aria-describedby': 'pg-error' } });
  const seedIn = el('input', {
    id: 'pg-seed',
    attrs: {
      type: 'number',
      min: '0',
      step: '1',
      inputmode: 'numeric',
      'aria-describedby': 'pg-error',
    },
  });
  const rngSel = el(
    'select',
    { id: 'pg-rng', attrs: { 'aria-describedby': 'pg-error' } },
    ...RNG_OPTIONS.map((r) =>
      el('option', { value: r, text: r === 'legacy' ? 'legacy (np.random.seed)' : 'default_rng' }),
    ),
  );
  const causalBox = el('input', { id: 'pg-causal', attrs: { type: 'checkbox' } });
  const peBox = el('input', { id: 'pg-pe', attrs: { type: 'checkbox' } });
  const lrIn = el('input', {
    id: 'pg-lr',
    attrs: {
      type: 'number',
      min: '0',
      step: '0.01',
      inputmode: 'decimal',
      'aria-describedby': 'pg-error',
    },
  });
  const stepsIn = el('input', {
    id: 'pg-steps',
    attrs: {
      type: 'number',
      min: '1',
      max: String(MAX_STEPS),
      step: '1',
      inputmode: 'numeric',
      'aria-describedby': 'pg-error',
    },
  });
  const err = errorLine('pg-error');
  const linkBtn = copyButton('Copy link to this view', () => location.href);

  const controlFor = {
    s: sentenceIn,
    C: cSel,
    h: hSel,
    seed: seedIn,
    rng: rngSel,
    causal: causalBox,
    pe: peBox,
    lr: lrIn,
    steps: stepsIn,
  };
  const controls = el(
    'div',
    { className: 'controls' },
    field('Sentence (1–64 tokens)', sentenceIn),
    field('C (width)', cSel),
    field('heads h', hSel),
    field('seed', seedIn),
    field('random generator', rngSel),
    field('causal mask', causalBox),
    field('positional encoding', peBox),
    field('learning rate', lrIn),
    field('training steps', stepsIn),
    err.element,
  );
  const peNote = el('p', {
    className: 'note pe-note',
    text: "Positional encoding: the page computes it with the browser's Math.sin, Math.cos and **, which are not correctly rounded, so NumPy, JavaScript engines and browsers may differ in the last bit. With it on, X agrees with your notebook to about 1e-16 relative (what is computed from X to a few times that), not bit for bit; with it off, every number is bit-identical.",
  });

  function fillHeads(C, h) {
    const ds = divisors(C);
    const opts = ds.map((d) => el('option', { value: String(d), text: `${d} (hs = ${C / d})` }));
    if (Number.isInteger(h) && !ds.includes(h)) {
      opts.push(el('option', { value: String(h), text: `${h} (does not divide ${C})` }));
    }
    hSel.replaceChildren(...opts);
    hSel.value = String(h);
  }

  function setControls(raw) {
    const r = { ...DEFAULTS, ...raw };
    sentenceIn.value = String(r.s);
    cSel.value = String(r.C);
    if (cSel.value !== String(r.C)) {
      // not an offered width: keep the text so the error can name it
      cSel.append(el('option', { value: String(r.C), text: `${r.C} (not offered)` }));
      cSel.value = String(r.C);
    }
    const C = Number(r.C);
    fillHeads(C_OPTIONS.includes(C) ? C : 64, Number.isInteger(Number(r.h)) ? Number(r.h) : r.h);
    if (hSel.value !== String(r.h)) {
      hSel.append(el('option', { value: String(r.h), text: String(r.h) }));
      hSel.value = String(r.h);
    }
    seedIn.value = String(r.seed);
    rngSel.value = String(r.rng);
    if (rngSel.value !== String(r.rng)) {
      rngSel.append(el('option', { value: String(r.rng), text: String(r.rng) }));
      rngSel.value = String(r.rng);
    }
    const yes = (v) =>
      v === true || ['1', 'true', 'on', 'yes'].includes(String(v).trim().toLowerCase());
    causalBox.checked = yes(r.causal);
    peBox.checked = yes(r.pe);
    lrIn.value = String(r.lr);
    stepsIn.value = String(r.steps);
  }

  // a number field whose text is not a number reads as '' in the DOM: say so in the message
  const numText = (input) => (input.validity?.badInput ? 'not a number' : input.value);
  function readControls() {
    return {
      s: sentenceIn.value,
      C: cSel.value,
      h: hSel.value,
      seed: numText(seedIn),
      rng: rngSel.value,
      causal: causalBox.checked,
      pe: peBox.checked,
      lr: numText(lrIn),
      steps: numText(stepsIn),
    };
  }

  // ---------------------------------------------------------------- outputs
  const chipsSlot = el('div');
  const headSel = el('select', { id: 'pg-head' });
  const headField = el('div', { className: 'controls' }, field('show head', headSel));
  const focusSlot = el('div');
  const gridTitle = el('h3');
  const gridSlot = el('div', { className: 'figure-grid' });
  const ySlot = el('div');
  const yDetails = el(
    'details',
    { className: 'y-details' },
    el('summary', { text: 'Show the layer output Y = layer(X) as a heatmap' }),
    ySlot,
  );
  yDetails.addEventListener('toggle', () => showY());
  const trainSlot = el('div', { className: 'figure-row' });
  const figs = figuresList();
  const xDetails = codeDetails('How X is built for these settings (NumPy)', '');
  const fullBtn = el('button', {
    id: 'pg-full-check',
    type: 'button',
    className: 'btn',
    text: 'Run the full check',
  });
  const fullNote = el('span', { className: 'note' });
  const thresholdNote = el('strong');
  const panel = new GradcheckPanel({
    id: 'pg-gradcheck',
    scheduler,
    threshold: L5_THRESHOLD,
    caption: 'Gradient check of the MSE loss for the typed sentence (initial weights)',
    label: 'Playground gradient check',
  });

  // ---------------------------------------------------------------- state
  let cur = null; // { settings, tokens, model, att, Y, losses, lrs }
  let focusMap = null;
  let gridMaps = [];
  let yMap = null;
  let chart = null;
  let trainJob = null;

  const script = numpyBlock(
    () => {
      if (!cur) return '# nothing rendered yet';
      const s = cur.settings;
      return trainingScript({
        title: `Playground - ${settingsToQuery(s)}`,
        sentence: s.s,
        tokens: cur.tokens,
        C: s.C,
        heads: s.h,
        seed: s.seed,
        rng: s.rng,
        pe: s.pe,
        causal: s.causal,
        lrs: new Array(s.steps).fill(s.lr),
        threshold: L5_THRESHOLD,
        check: autoFull(s, cur.tokens.length),
      });
    },
    { what: 'the playground' },
  );

  function gridCount(T, h) {
    return Math.max(1, Math.min(h, GRID_MAX, Math.floor(GRID_CELLS / (T * T))));
  }

  function showFocus() {
    const { model, att } = cur;
    const T = model.T,
      h = model.heads;
    const v = headSel.value;
    const data = v === 'mean' ? meanOverHeads(att, 0, h, T) : slice2d(att, Number(v), T, T);
    const title = v === 'mean' ? `mean over ${h} heads` : `head ${v}`;
    const opts = {
      rows: T,
      cols: T,
      rowLabels: cur.tokens,
      colLabels: cur.tokens,
      title,
      shape: v === 'mean' ? `att[0].mean(0) (${T}, ${T})` : `att[0, ${v}] (${T}, ${T})`,
    };
    if (!focusMap) {
      focusMap = lazyHeatmap({ data, ...opts, scale: 'unit', exportName: 'playground-attention' });
      focusSlot.replaceChildren(focusMap.element);
    } else {
      focusMap.update(data, opts);
    }
  }

  // Y is drawn when its <details> is opened (it is in figures() either way)
  function showY() {
    if (!cur || !yDetails.open) return;
    const { Y, tokens, settings } = cur;
    const T = tokens.length;
    const yOpts = {
      rows: T,
      cols: settings.C,
      rowLabels: tokens,
      rowAxis: 'token (row)',
      colAxis: 'feature (column)',
      title: 'Y = layer(X) at the initial weights',
      shape: `(1, ${T}, ${settings.C})`,
    };
    if (!yMap) {
      yMap = lazyHeatmap(
        {
          data: Y,
          ...yOpts,
          scale: 'diverging',
          numbers: false,
          legendLabel: 'Y',
          exportName: 'playground-Y',
        },
        { eager: true },
      );
      ySlot.replaceChildren(yMap.element);
    } else {
      yMap.update(Y, { ...yOpts, colLabels: undefined, cellSize: undefined });
    }
  }

  function renderTraining() {
    const s = cur.settings;
    const losses = cur.losses;
    if (!chart) {
      chart = lossChart({ losses, title: `MSE loss, ${s.steps} steps at lr = ${s.lr}` });
      const values = chart.element.querySelector('details.chart-values');
      if (values) {
        values.open = false;
        values.dataset.touched = '1';
      } // the loss table beside the chart has the values
    } else {
      chart.update(losses);
    }
    chart.element
      .querySelector('.chart-title')
      ?.replaceChildren(document.createTextNode(`MSE loss, ${s.steps} steps at lr = ${s.lr}`));
    trainSlot.replaceChildren(
      chart.element,
      table({
        headers: ['step', 'loss after the step'],
        rows: losses.map((L, k) => [String(k), num(L, 10)]),
        caption:
          losses.length - 1 < s.steps
            ? `Training… ${losses.length - 1} of ${s.steps} steps`
            : `The loss table (${s.steps} steps, lr = ${s.lr})`,
        numeric: [1],
      }),
    );
  }

  function setFigures() {
    const s = cur.settings;
    const L = cur.losses;
    figs.set([
      {
        key: 'T',
        label: 'tokens T / distinct words V',
        value: `${cur.tokens.length} / ${cur.model.vocab.length}`,
      },
      { key: 'shape', label: 'X.shape', value: `(1, ${cur.tokens.length}, ${s.C})` },
      { key: 'hs', label: 'head size hs = C / h', value: s.C / s.h },
      { key: 'loss0', label: 'loss at step 0', value: L[0], digits: 10 },
      {
        key: 'lossN',
        label: `loss after step ${L.length - 1}`,
        value: L[L.length - 1],
        digits: 10,
      },
    ]);
  }

  function startChecks() {
    const s = cur.settings;
    const { model } = cur;
    const T = model.T;
    const makeLayer = () => layerWith(mha, s.C, s.h, model.W);
    const opts = { B: 1, T, causal: s.causal, loss: 'mse', target: model.target };
    const auto = autoFull(s, T);
    const total = gradcheckSize({ T, C: s.C, heads: s.h });
    fullNote.textContent = auto
      ? `the full check (${thousands(total)} entries) runs by itself after the sampled one`
      : `${thousands(total)} entries: this size takes a while, so it runs only when you ask`;
    const token = cur;
    panel.threshold = pgThreshold(T, s.C);
    thresholdNote.textContent = `Pass: max relative error ≤ ${panel.threshold.toPrecision(3).replace(/\.?0+$/, '')} for n = T·C = ${T * s.C}.`;
    panel.showPending('', pendingReport({ T, C: s.C, heads: s.h }));
    panel.run(gradcheckJob(makeLayer, model.X, { ...opts, samples: SAMPLES }), {
      samples: SAMPLES,
      priority: 5,
      onDone: () => {
        if (auto && cur === token) {
          panel.run(gradcheckJob(makeLayer, model.X, opts), { priority: 1, total });
        }
      },
    });
    fullBtn.onclick = () => {
      if (cur !== token) return;
      panel.run(gradcheckJob(makeLayer, model.X, opts), { priority: 4, total });
    };
  }

  /**
   * The losses of `steps` SGD steps from the initial weights in one wasm call (layer.train: one
   * forward per step): losses[k] = the loss after k steps, k = 0 ... steps (the last of the
   * steps + 1 calls only measures). On divergence the list ends at the first non-finite loss and
   * `error` says so, as Trainer.step would.
   */
  function trainAtOnce(s, model) {
    const layer = borrowLayer(mha, s.C, s.h, model.W);
    try {
      return {
        losses: Array.from(
          layer.train(model.X, model.target, {
            B: 1,
            T: model.T,
            steps: s.steps + 1,
            lr: s.lr,
            causal: s.causal,
          }),
        ),
      };
    } catch (e) {
      if (!e.losses) throw e;
      const all = Array.from(e.losses);
      const bad = all.findIndex((L) => !Number.isFinite(L));
      const losses = bad < 0 ? all : all.slice(0, bad + 1);
      // Trainer.step refuses to step from a non-finite loss; a non-finite final loss is just shown
      if (bad < 0 || bad >= s.steps) return { losses };
      return {
        losses,
        error: `the loss is ${losses[losses.length - 1]}: training diverged (the learning rate is too large). Reset and use a smaller learning rate.`,
      };
    } finally {
      returnLayer(mha, layer);
    }
  }

  function train() {
    if (trainJob) {
      trainJob.cancel();
      trainJob.free?.();
      trainJob = null;
    }
    const s = cur.settings;
    const token = cur;
    const cost = s.steps * cur.tokens.length * s.C * s.C;
    if (cost <= 4e6) {
      // small: train right away (a few ms)
      try {
        const r = trainAtOnce(s, cur.model);
        cur.losses = r.losses;
        if (r.error) err.set(`Training stopped: ${r.error}`);
      } catch (e) {
        cur.losses = [];
        err.set(`Training stopped: ${e.message}`);
      }
      renderTraining();
      return;
    }
    const trainer = new Trainer(mha, cur.model);
    let freed = false;
    const free = () => {
      if (!freed) {
        freed = true;
        trainer.free();
      }
    };
    cur.losses = [...trainer.losses];
    renderTraining();
    trainJob = scheduler.submit({
      priority: 6,
      name: 'pg-train',
      start: () => ({
        iterator: (function* () {
          for (let k = 0; k < s.steps; k++) {
            trainer.step(s.lr);
            yield k + 1;
          }
        })(),
        cleanup: free,
      }),
      onProgress: () => {
        if (cur === token) {
          cur.losses = [...trainer.losses];
          renderTraining();
          setFigures();
        }
      },
      onDone: () => {
        if (cur === token) {
          cur.losses = [...trainer.losses];
          renderTraining();
          setFigures();
        }
      },
      onError: (e) => {
        if (cur === token) {
          cur.losses = [...trainer.losses];
          renderTraining();
          err.set(`Training stopped: ${e.message}`);
        }
      },
    });
    trainJob.free = free; // a job cancelled before its first slice has no cleanup yet
  }

  function render(settings, tokens) {
    const model = sentenceModel(mha, {
      tokens,
      C: settings.C,
      heads: settings.h,
      seed: settings.seed,
      rng: settings.rng,
      pe: settings.pe,
      causal: settings.causal,
    });
    const layer = borrowLayer(mha, settings.C, settings.h, model.W);
    let att, Y;
    try {
      ({ attention: att, Y } = layer.forward(model.X, {
        B: 1,
        T: model.T,
        causal: settings.causal,
      }));
    } finally {
      returnLayer(mha, layer);
    }
    cur = { settings, tokens, model, att, Y, losses: [] };
    const T = model.T,
      h = settings.h;

    chipsSlot.replaceChildren(
      tokenChips(tokens, model.ids, (t) => {
        const r = t === null ? -1 : t;
        focusMap?.highlight(r, r);
        for (const m of gridMaps) m.highlight(r, r);
      }),
    );

    const prev = headSel.value;
    headSel.replaceChildren(
      el('option', { value: 'mean', text: `mean over ${h} heads` }),
      ...Array.from({ length: h }, (_, i) => el('option', { value: String(i), text: `head ${i}` })),
    );
    headSel.value = prev === 'mean' || (Number(prev) < h && prev !== '') ? prev : '0';
    if (!headSel.value) headSel.value = '0';
    showFocus();

    const n = gridCount(T, h);
    gridTitle.textContent =
      n < h ? `All heads: the first ${n} of ${h} (pick any head above)` : `All ${h} heads`;
    gridMaps = [];
    const numbers = T <= 10 ? 'auto' : false;
    for (let i = 0; i < n; i++) {
      gridMaps.push(
        lazyHeatmap({
          data: slice2d(att, i, T, T),
          rows: T,
          cols: T,
          rowLabels: tokens,
          colLabels: tokens,
          title: `head ${i}`,
          shape: `(${T}, ${T})`,
          scale: 'unit',
          numbers,
          cellSize: T <= 8 ? 26 : undefined,
          exportName: `playground-att-h${i}`,
        }),
      );
    }
    gridSlot.replaceChildren(...gridMaps.map((m) => m.element));

    showY();

    xDetails.set(
      xSnippet({
        sentence: settings.s,
        tokens,
        C: settings.C,
        seed: settings.seed,
        rng: settings.rng,
        pe: settings.pe,
      }),
    );
    train();
    setFigures();
    script.refresh();
    startChecks();
  }

  function showErrors(errors) {
    const order = ['s', 'C', 'h', 'seed', 'rng', 'causal', 'pe', 'lr', 'steps'];
    for (const k of order) {
      const c = controlFor[k];
      if (errors[k]) c.setAttribute('aria-invalid', 'true');
      else c.removeAttribute('aria-invalid');
    }
    const msgs = order.filter((k) => errors[k]).map((k) => errors[k]);
    if (msgs.length) {
      err.set([
        ...msgs,
        cur
          ? 'The view below still shows the last valid settings.'
          : 'The view below shows the default settings.',
      ]);
    } else err.clear();
  }

  function writeURL(settings) {
    try {
      const q = settingsToQuery(settings);
      if (location.search !== q) history.replaceState(history.state, '', `${q}${location.hash}`);
    } catch {
      // some file:// setups refuse history changes; the view still works
    }
  }

  function update() {
    const { settings, tokens, errors } = validateSettings(readControls());
    showErrors(errors);
    if (Object.keys(errors).length) return false;
    if (cur && settingsToQuery(cur.settings) === settingsToQuery(settings)) return true;
    const modelKey = (x) => JSON.stringify([x.s, x.C, x.h, x.seed, x.rng, x.causal, x.pe]);
    if (cur && modelKey(cur.settings) === modelKey(settings)) {
      // only lr or steps changed: same X, weights and attention; retrain only
      cur.settings = settings;
      train();
      setFigures();
      script.refresh();
    } else {
      render(settings, tokens);
    }
    writeURL(settings);
    return true;
  }

  const later = debounce(update, 200);
  sentenceIn.addEventListener('input', later);
  seedIn.addEventListener('input', later);
  lrIn.addEventListener('input', later);
  stepsIn.addEventListener('input', later);
  for (const c of [sentenceIn, seedIn, lrIn, stepsIn]) {
    c.addEventListener('change', () => later.flush());
  }
  cSel.addEventListener('change', () => {
    const C = Number(cSel.value);
    const h = Number(hSel.value);
    fillHeads(C, h);
    update();
  });
  for (const c of [hSel, rngSel, causalBox, peBox]) c.addEventListener('change', () => update());
  headSel.addEventListener('change', () => showFocus());

  // ---------------------------------------------------------------- first render (from the URL)
  const raw = parseQuery(typeof location === 'object' ? location.search : '');
  setControls(raw);
  // validate what the URL says (a number field would turn 'NaN' into an empty string)
  const first = validateSettings(raw);
  const firstValid = !Object.keys(first.errors).length;
  if (!firstValid) {
    showErrors(first.errors);
    const d = validateSettings({});
    render(d.settings, d.tokens);
  } else {
    render(first.settings, first.tokens);
  }

  body.append(
    controls,
    peNote,
    el(
      'div',
      { className: 'actions' },
      linkBtn,
      el('span', { className: 'note', text: 'The address bar always holds the current settings.' }),
    ),
    chipsSlot,
    headField,
    focusSlot,
    gridTitle,
    gridSlot,
    yDetails,
    el('h3', { text: 'Training' }),
    trainSlot,
    figs.element,
    el('h3', { text: 'Gradient check for this sentence' }),
    el(
      'p',
      { className: 'note' },
      `Live re-renders use a sampled check: ${SAMPLES} evenly spaced entries of each tensor (all entries of smaller ones). The full check visits every entry in small chunks, so the page stays responsive; changing a setting restarts it. The loss is lesson 5's MSE; its threshold is 10⁻⁵ at lesson 5's size (n = T·C = 512) and grows in proportion to n above that, because MSE's gradients shrink as 1/n while the rounding floor of the finite differences (about 10⁻¹³ absolute, see the max abs error column) does not. `,
      thresholdNote,
    ),
    el('div', { className: 'actions' }, fullBtn, fullNote),
    panel.element,
    xDetails.element,
    script.element,
  );

  return {
    figures: () =>
      cur
        ? {
            tokens: [...cur.tokens],
            C: cur.settings.C,
            heads: cur.settings.h,
            att: Array.from(cur.att),
            Y: Array.from(cur.Y),
            gradcheck: panel.rows,
            sampled: panel.sampled,
            losses: [...cur.losses],
            settings: { ...cur.settings },
          }
        : null,
    settings: () => (cur ? { ...cur.settings } : null),
    afterReady() {
      // the address bar holds the full state from the start (a link copied right away reproduces
      // this view); a URL with bad settings is left as it is, with its error message showing
      if (firstValid && cur) writeURL(cur.settings);
    },
    panel,
  };
}
