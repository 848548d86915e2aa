// training.js - the playground's training run for a view: `steps` SGD steps at `lr` from the
// initial weights, at once when small (a few ms: less than a round trip to the worker, and the
// first render needs no worker), else in the compute engine (a worker, or main-thread slices),
// the loss chart growing as it goes; the view keeps the losses and the attention after the steps
// taken so far (view.trained).

import { trainAtOnce } from '../../model/training.js';
import { trainedAttention, trainsAtOnce } from '../../model/playground.js';
import { viewArrays } from './state.js';

/**
 * Train small views at once: view.losses and view.trained (the attention after the steps taken)
 * are set, an error goes to the error line.
 */
function trainNow(mha, view, err) {
  view.trained = null;
  try {
    const r = trainAtOnce(mha, view.settings, view.model);
    view.losses = r.losses;
    const steps = r.losses.length - 1;
    const att = trainedAttention(mha, view.settings, view.model, steps);
    view.trained = att ? { steps, att } : null;
    if (r.error) err.set(`Training stopped: ${r.error}`);
  } catch (e) {
    view.losses = [];
    err.set(`Training stopped: ${e.message}`);
  }
}

/** What a run reported so far into the view: the losses, and the attention after the steps. */
function follow(view, { losses, att }) {
  view.losses = [...losses];
  const steps = losses.length - 1;
  view.trained = steps > 0 && att ? { steps, att: Float64Array.from(att) } : null;
}

/**
 * A run in the compute engine, as the training view shows it: view.run = { state (running,
 * done, stopped), step, steps, etaMs, ms (since it started), where ('worker' or 'main-thread') }.
 * Null for a run trained at once.
 */
function runState(view, state, more) {
  view.run = { ...view.run, state, ms: performance.now() - view.run.t0, ...more };
}

/**
 * The playground's trainer: train(view) cancels a run in progress and trains the view;
 * onLosses(view, final) is called whenever view.losses changed (final: the run ended, by
 * finishing or failing; the figures list follows only progress and completion, as before).
 * ctx: { mha, compute, err, isCurrent(view), onLosses(view, { figures }) }.
 */
export function playgroundTrainer({ mha, compute, err, isCurrent, onLosses }) {
  const run = { job: null };

  function cancel() {
    run.job?.cancel();
    run.job = null;
  }

  function train(view) {
    cancel();
    const s = view.settings;
    view.run = null;
    if (trainsAtOnce(s, view.T) && !view.model.spec) {
      trainNow(mha, view, err);
      onLosses(view, { figures: false });
      return;
    }
    follow(view, { losses: view.losses.slice(0, 1) }); // the loss at the initial weights
    view.run = { state: 'running', step: 0, steps: s.steps, etaMs: null, ms: 0 };
    Object.assign(view.run, { t0: performance.now(), where: compute.kind });
    onLosses(view, { figures: false });
    const job = compute.train({
      ...viewArrays(view), // an undrawn model's target is its own
      B: 1,
      T: view.T,
      causal: s.causal,
      steps: s.steps,
      lr: s.lr,
      priority: 6,
      group: 'playground',
      name: 'pg-train',
      onStep: (p) => {
        if (!isCurrent(view) || run.job !== job) return;
        follow(view, p);
        runState(view, 'running', { step: p.step, etaMs: p.etaMs });
        onLosses(view, { figures: true });
      },
    });
    run.job = job;
    job.promise.then(
      (r) => {
        if (run.job !== job) return;
        run.job = null;
        follow(view, r);
        runState(view, 'done', { step: r.losses.length - 1, etaMs: 0 });
        if (isCurrent(view)) onLosses(view, { figures: true });
      },
      (e) => {
        if (e.cancelled || run.job !== job) return;
        run.job = null;
        follow(view, { losses: e.losses ?? [], att: e.att }); // up to the step that failed
        runState(view, 'stopped', { step: Math.max(0, view.losses.length - 1), etaMs: null });
        if (!isCurrent(view)) return;
        onLosses(view, { figures: false });
        err.set(`Training stopped: ${e.message}`);
      },
    );
  }

  return { train, cancel };
}
