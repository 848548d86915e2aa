// training.js - the playground's training run for a view: `steps` SGD steps at `lr` from the
// initial weights, at once when small, else as a job in slices (the loss chart grows as it goes);
// the view keeps the losses and the attention after the steps taken so far (view.trained).

import { trainAtOnce } from '../../model/training.js';
import { trainedAttention, trainsAtOnce } from '../../model/playground.js';
import { trainingRun } from '../../jobs/trainer.js';

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

/** The trainer's losses and its attention after the steps taken so far, into the view. */
function follow(view, trainer) {
  view.losses = [...trainer.losses];
  view.trained =
    trainer.steps > 0 ? { steps: trainer.steps, att: Float64Array.from(trainer.att) } : null;
}

/**
 * The playground's trainer: train(view) cancels a run in progress and trains the view;
 * onLosses(view, final) is called whenever view.losses changed (final: the run ended, by
 * finishing or failing; the figures list follows only progress and completion, as before).
 * ctx: { mha, scheduler, err, isCurrent(view), onLosses(view, { figures }) }.
 */
export function playgroundTrainer({ mha, scheduler, err, isCurrent, onLosses }) {
  const run = { job: null };

  function cancel() {
    if (run.job) {
      run.job.cancel();
      run.job.free?.();
      run.job = null;
    }
  }

  function train(view) {
    cancel();
    const s = view.settings;
    if (trainsAtOnce(s, view.T)) {
      trainNow(mha, view, err);
      onLosses(view, { figures: false });
      return;
    }
    const { trainer, start, free } = trainingRun(mha, view.model, { steps: s.steps, lr: s.lr });
    follow(view, trainer);
    onLosses(view, { figures: false });
    const progress = (figures) => () => {
      if (!isCurrent(view)) return;
      follow(view, trainer);
      onLosses(view, { figures });
    };
    run.job = scheduler.submit({
      priority: 6,
      name: 'pg-train',
      start,
      onProgress: progress(true),
      onDone: progress(true),
      onError: (e) => {
        if (!isCurrent(view)) return;
        follow(view, trainer);
        onLosses(view, { figures: false });
        err.set(`Training stopped: ${e.message}`);
      },
    });
    run.job.free = free; // a job cancelled before its first slice has no cleanup yet
  }

  return { train, cancel };
}
