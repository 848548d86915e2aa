// index.js - the playground: every setting editable; everything re-renders live; the state lives
// in the URL. Composes the form (controls.js), the state (state.js), the views (views.js), the
// training run (training.js) and the gradient check (checks.js).

import { el } from '../../components/dom.js';
import { copyButton } from '../../components/export.js';
import { debounce } from '../../components/controls.js';
import { codeDetails, numpyBlock } from '../../components/code.js';
import { autoFull, stepCount } from '../../model/playground.js';
import { AGREEMENT_SENTENCE, PE_AGREEMENT } from '../../model/agreement.js';
import { settingsToQuery } from '../../model/settings.js';
import { playgroundScript, xSnippet } from '../../model/numpy-scripts.js';
import { playgroundForm } from './controls.js';
import {
  FROM_ARRAYS,
  readURL,
  writeURL,
  computeView,
  nextSettings,
  firstSettings,
} from './state.js';
import { attentionViews, yView, trainingView, figuresView } from './views.js';
import { playgroundTrainer } from './training.js';
import { checksView } from './checks.js';

/** How the playground's numbers compare with a notebook's (web/model/agreement.js). */
const AGREEMENT_NOTE = `${AGREEMENT_SENTENCE} ${PE_AGREEMENT}`;

/**
 * The NumPy script of the view: its settings, the steps taken so far, the check (when it runs by
 * itself) and the attention the maps show (initial, or after the steps taken).
 */
function viewScript(mha, view, shown, panel) {
  if (!view) return '# nothing rendered yet';
  const s = view.settings;
  const taken = Math.max(0, view.losses.length - 1);
  const which = shown.weights === 'trained' ? `after ${stepCount(shown.steps)}` : 'initial weights';
  return playgroundScript({
    title: `Playground - ${settingsToQuery(s)} - attention: ${which}`,
    sentence: s.s,
    tokens: view.tokens,
    C: s.C,
    heads: s.h,
    seed: s.seed,
    rng: s.rng,
    pe: s.pe,
    causal: s.causal,
    lrs: new Array(taken).fill(s.lr),
    convention: panel.convention,
    threshold: panel.threshold,
    check: autoFull(mha, s, view.tokens.length),
    attSteps: shown.steps,
  });
}

function viewX(view) {
  const s = view.settings;
  return xSnippet({
    sentence: s.s,
    tokens: view.tokens,
    C: s.C,
    seed: s.seed,
    rng: s.rng,
    pe: s.pe,
  });
}

/** Every part of the playground but the form, wired to one state object. */
function playgroundParts({ mha, compute, state, err }) {
  const isCurrent = (view) => state.view === view;
  const attention = attentionViews(() => state.view);
  const shownNow = () => (state.view ? attention.shown(state.view) : null);
  const parts = {
    attention,
    y: yView(() => state.view),
    training: trainingView(),
    figures: figuresView(),
    xDetails: codeDetails('How X is built for these settings (NumPy)', ''),
    checks: checksView({ mha, compute, isCurrent }),
  };
  parts.script = numpyBlock(() => viewScript(mha, state.view, shownNow(), parts.checks.panel), {
    what: 'the playground',
  });
  parts.trainer = playgroundTrainer({
    mha,
    compute,
    err,
    isCurrent,
    onLosses: (view, { figures }) => {
      parts.training.render(view);
      parts.attention.progress(view);
      parts.script.refresh();
      if (figures) parts.figures.render(view);
    },
  });
  return parts;
}

/** Show a new view (new model): every part renders it, then training and the checks start. */
function showView(parts, view) {
  parts.trainer.train(view); // first: small views train at once, so the toggle can offer it
  parts.attention.render(view);
  parts.y.render(view);
  parts.xDetails.set(viewX(view));
  parts.figures.render(view);
  parts.script.refresh();
  parts.checks.start(view);
}

/** Only lr or steps changed: same X, weights and initial attention; retrain only. */
function retrain(parts, view) {
  parts.trainer.train(view); // its onLosses relabels (or redraws) the attention maps
  parts.figures.render(view);
  parts.script.refresh();
}

function playgroundBody(form, parts) {
  const linkBtn = copyButton('Copy link to this view', () => location.href);
  const { attention, checks } = parts;
  return [
    form.element,
    el('p', { className: 'note pe-note', text: AGREEMENT_NOTE }),
    el(
      'div',
      { className: 'actions link-actions' },
      linkBtn,
      el('span', { className: 'note', text: 'The address bar always holds the current settings.' }),
    ),
    attention.chipsSlot,
    attention.row,
    attention.focus.slot,
    attention.grid.title,
    attention.grid.slot,
    parts.y.details,
    el('h3', { text: 'Training' }),
    parts.training.slot,
    parts.figures.element,
    el('h3', { text: 'Gradient check for this sentence' }),
    checks.intro,
    checks.actions,
    checks.panel.element,
    parts.xDetails.element,
    parts.script.element,
  ];
}

/** Listen to the form: text and number fields after a pause, selects and boxes at once. */
function wireForm(form, update, { parts, state }) {
  const c = form.controls;
  const later = debounce(update, 200);
  for (const k of ['s', 'seed', 'lr', 'steps']) c[k].addEventListener('input', later);
  for (const k of ['s', 'seed', 'lr', 'steps']) {
    c[k].addEventListener('change', () => later.flush());
  }
  c.C.addEventListener('change', () => {
    form.fillHeads();
    form.syncPreset();
    update();
  });
  c.h.addEventListener('change', () => form.syncPreset());
  form.preset.addEventListener('change', () => form.usePreset() && update());
  for (const k of ['h', 'rng', 'causal', 'pe']) c[k].addEventListener('change', () => update());
  const { attention } = parts;
  attention.focus.select.addEventListener('change', () => attention.headChanged(state.view));
}

/** With a notebook's arrays: hide what they decide and what would describe the sentence's. */
function hideForCustom(form, parts, nodes) {
  for (const k of FROM_ARRAYS) form.controls[k].closest('label').hidden = true;
  form.preset.closest('label').hidden = true; // C and h are the arrays' too
  for (const n of [parts.xDetails.element, parts.script.element]) n.hidden = true;
  for (const n of nodes.filter((x) => x.matches?.('.pe-note, .link-actions'))) n.hidden = true;
}

/**
 * The playground into `body`: the settings' controls (from the address), the view they give, its
 * training and gradient check; state() is its settings.
 * @param {import('../index.js').SectionContext} ctx
 * @returns {import('../index.js').SectionView}
 */
export function renderPlayground({ mha, body, compute, custom = null }) {
  // asked counts the views asked for; shown is the number of the one on screen
  const state = { view: null, custom, asked: 0, shown: 0, job: null };
  const form = playgroundForm();
  const parts = playgroundParts({ mha, compute, state, err: form.err });

  /**
   * A new model: the old setting's jobs (forward, training, checks) stop at once; the forward
   * pass runs in the compute engine, and its view is shown unless a newer one was asked for.
   * Resolves with the view once shown (null if dropped).
   */
  function show(settings, tokens) {
    const asked = ++state.asked;
    compute.cancelGroup('playground');
    if (state.view) parts.checks.panel.invalidate();
    const next = computeView(mha, compute, settings, tokens, custom);
    const shown = (view) => {
      if (asked !== state.asked) return null;
      Object.assign(state, { view, shown: asked, job: null });
      showView(parts, view);
      return view;
    };
    const failed = (e) => {
      if (!e.cancelled && asked === state.asked) form.err.set(`Not computed: ${e.message}`);
      return null;
    };
    if (next.now) return Promise.resolve(shown(next.now));
    state.job = next.job;
    return next.view.then(shown, failed);
  }

  function update() {
    const next = nextSettings(state, form.read());
    form.showErrors(next.errors, !!state.view);
    if (!next.settings) return false;
    const pending = state.asked !== state.shown; // a new view is being computed
    if (next.change === 'none' && !pending) return true;
    if (next.change === 'training' && !pending) {
      state.view.settings = next.settings;
      retrain(parts, state.view);
    } else {
      show(next.settings, next.tokens);
    }
    if (!custom) writeURL(next.settings);
    return true;
  }
  wireForm(form, update, { parts, state });

  // first render, from the URL (a number field would turn 'NaN' into an empty string: the URL's
  // own text is validated)
  const raw = readURL();
  form.set(raw);
  const first = firstSettings(raw, custom);
  if (!first.valid) form.showErrors(first.errors, false);
  const firstView = show(first.settings, first.tokens);
  const nodes = playgroundBody(form, parts);
  if (custom) hideForCustom(form, parts, nodes);
  body.append(...nodes);
  return playgroundView(mha, { state, parts, first, firstView, custom });
}

/**
 * What the page holds of the playground: its figures, settings and script; afterReady writes the
 * address; ready is its first view on screen.
 */
function playgroundView(mha, { state, parts, first, firstView, custom }) {
  return {
    figures: () =>
      state.view ? viewFigures(state.view, parts.checks.panel, parts.attention) : null,
    state: () => (state.view ? { ...state.view.settings } : null),
    script: () =>
      viewScript(
        mha,
        state.view,
        state.view && parts.attention.shown(state.view),
        parts.checks.panel,
      ),
    afterReady() {
      // the address bar holds the full state from the start (a link copied right away reproduces
      // this view); a URL with bad settings is left as it is, with its error message showing
      if (first.valid && state.view && !custom) writeURL(state.view.settings);
    },
    // the first view is on screen (at once, unless its forward pass is large: then it comes
    // back from the compute engine)
    ready: firstView,
    dispose() {
      state.asked += 1;
      state.job?.cancel();
      parts.checks.panel.cancel();
      parts.trainer.cancel();
    },
  };
}

/**
 * The view's figures: att is the attention at the initial weights; shown is what the maps show
 * ({ weights: 'initial' | 'trained', steps, att }); trained the attention after the steps taken.
 */
function viewFigures(view, panel, attention) {
  const shown = attention.shown(view);
  return {
    tokens: [...view.tokens],
    C: view.settings.C,
    heads: view.settings.h,
    att: Array.from(view.att),
    shown: { weights: shown.weights, steps: shown.steps, att: Array.from(shown.att) },
    trained: view.trained ? { steps: view.trained.steps, att: Array.from(view.trained.att) } : null,
    Y: Array.from(view.Y),
    gradcheck: panel.rows,
    sampled: panel.sampled,
    losses: [...view.losses],
    settings: { ...view.settings },
  };
}
