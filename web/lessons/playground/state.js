// state.js - the playground's state and the URL that holds it.
//
// One state object: { view } where view is what is shown, for the last valid settings:
//   { settings, tokens, model, att (1, h, T, T), Y (1, T, C), losses, trained, T, h }
// where att is the attention at the initial weights and trained { steps, att } the attention after
// the steps taken so far (null before the first step).
// (null before the first render). Updates are explicit: nextSettings() says what new raw settings
// change; a new model gets a computeView(), new lr or steps only replace view.settings and retrain.
// The address bar is written from valid settings only; a URL with bad settings is left as it is.

import {
  DEFAULTS,
  parseQuery,
  sameModel,
  sameSettings,
  settingsToQuery,
  validateSettings,
} from '../../model/settings.js';
import { sentenceModel, sentenceSpec, undrawnModel } from '../../model/sentence-model.js';
import { customModel } from '../../model/custom-arrays.js';
import { withLayer } from '../../model/layers.js';

/** The settings a notebook's arrays decide (their controls are hidden while the arrays are in). */
export const FROM_ARRAYS = ['s', 'C', 'h', 'seed', 'rng', 'pe'];

/** Raw settings with those of FROM_ARRAYS at their defaults when custom arrays are in use. */
export function customRaw(raw, custom) {
  if (!custom) return raw;
  const r = { ...raw };
  for (const k of FROM_ARRAYS) r[k] = DEFAULTS[k];
  return r;
}

/** Valid settings as custom arrays run them: their C and heads, no positional encoding. */
function withCustom(settings, custom) {
  return custom ? { ...settings, C: custom.C, h: custom.heads, pe: false } : settings;
}

/** The raw settings of the page's address (empty outside a browser). */
export function readURL() {
  return parseQuery(typeof location === 'object' ? location.search : '');
}

// The address bar's next query (writeURL): written a task later, once however many came.
const urlWrite = { query: null };

/**
 * Put valid settings in the address bar (replaceState: no new history entry), a task later: a
 * replaceState waits on the browser's own process (up to tens of ms on a busy machine), so it
 * stays out of the task that renders the view. The last settings given win.
 */
export function writeURL(settings) {
  const first = urlWrite.query === null;
  urlWrite.query = settingsToQuery(settings);
  if (first) setTimeout(flushURL, 0);
}

function flushURL() {
  const q = urlWrite.query;
  urlWrite.query = null;
  try {
    if (location.search !== q) history.replaceState(history.state, '', `${q}${location.hash}`);
  } catch {
    // some file:// setups refuse history changes; the view still works
  }
}

/**
 * Forward passes up to this size (T·C², under a millisecond) run here, in the same task: cheaper
 * than the round trip to the worker, and an edit re-renders at once. Larger ones run in the
 * compute engine.
 */
const FORWARD_HERE = 2 ** 19;

/**
 * The view of valid settings. A small model is drawn here and its forward pass runs here (the same
 * bits as playgroundForward and customForward); a larger one (T·C² over FORWARD_HERE) is drawn
 * by the compute engine where it runs (its weights at GPT-2 size are 19 MB: drawing them takes
 * tens of ms, and so would copying them to a worker), so the view's model is undrawnModel's
 * (tokens, vocabulary, sizes, spec) and every job gets the spec. losses start with the loss at
 * the initial weights (as Trainer measures it), the others and trained (the attention after the
 * steps taken) come with training. With custom arrays (a notebook's) the model is theirs and so
 * are the tokens (positions). Returns { now: the view } or { job (the forward pass), view (a
 * promise of it) }.
 */
export function computeView(mha, compute, settings, tokens, custom = null) {
  const { causal } = settings;
  const { C, h: heads, seed, rng, pe } = settings;
  const spec = sentenceSpec({ tokens, C, heads, seed, rng, pe, causal });
  const here = custom || tokens.length * C * C <= FORWARD_HERE;
  let model;
  if (custom) model = customModel(custom, { causal });
  else model = here ? sentenceModel(mha, spec) : undrawnModel(spec);
  const viewOf = ({ Y, attention: att, loss }) => ({
    settings,
    tokens: custom ? model.tokens : tokens,
    model,
    att,
    Y,
    // the loss at the initial weights (row 0)
    losses: [loss ?? mha.mseLoss(Y, model.target).loss],
    trained: null,
    T: model.T,
    h: settings.h,
  });
  const args = { C: model.C, heads: model.heads, W: model.W, X: model.X, B: 1, T: model.T };
  if (here) {
    const r = withLayer(mha, args.C, args.heads, args.W, (l) =>
      l.forward(args.X, { ...args, causal }),
    );
    return { now: viewOf(r) };
  }
  const job = compute.forward({
    ...{ C, heads, model: spec, B: 1, T: model.T, causal },
    group: 'playground',
    name: 'pg-forward',
  });
  return { job, view: job.promise.then(viewOf) };
}

/**
 * A job's layer and arrays for a view: { C, heads, W, X, target } with the view's arrays, or
 * { C, heads, model } (the spec: the engine draws them, target included) when the model was not
 * drawn here.
 */
export function viewArrays(view) {
  const { model } = view;
  if (model.spec) return { C: model.C, heads: model.heads, model: model.spec };
  return { C: model.C, heads: model.heads, W: model.W, X: model.X, target: model.target };
}

/**
 * What new raw settings mean for the state: { errors } when refused; else { settings, tokens,
 * change } with change 'none' (the same view), 'training' (only lr or steps: same X, weights and
 * attention; retrain only) or 'view' (a new model).
 */
export function nextSettings(state, raw) {
  const { settings: valid, tokens, errors } = validateSettings(customRaw(raw, state.custom));
  if (Object.keys(errors).length) return { errors };
  const settings = withCustom(valid, state.custom);
  const cur = state.view?.settings;
  let change = 'view';
  if (cur && sameSettings(cur, settings)) change = 'none';
  else if (cur && sameModel(cur, settings)) change = 'training';
  return { settings, tokens, errors, change };
}

/** The settings of the first render: the URL's when valid, else the defaults (with the errors). */
export function firstSettings(raw, custom = null) {
  const first = validateSettings(customRaw(raw, custom));
  const valid = !Object.keys(first.errors).length;
  const use = valid ? first : validateSettings({});
  const settings = withCustom(use.settings, custom);
  return { valid, errors: first.errors, settings, tokens: use.tokens };
}
