// training.js - the playground's training run for a view: `steps` SGD steps at `lr` from the
// initial weights, at once when small, else as a job in slices (the loss chart grows as it goes).

import { trainAtOnce } from '../../model/training.js';
import { trainsAtOnce } from '../../model/playground.js';
import { trainingRun } from '../../jobs/trainer.js';

/** Train small views at once: view.losses is set, an error goes to the error line. */
function trainNow(mha, view, err) {
  try {
    const r = trainAtOnce(mha, view.settings, view.model);
    view.losses = r.losses;
    if (r.error) err.set(`Training stopped: ${r.error}`);
  } catch (e) {
    view.losses = [];
    err.set(`Training stopped: ${e.message}`);
  }
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
    view.losses = [...trainer.losses];
    onLosses(view, { figures: false });
    const follow = (figures) => () => {
      if (!isCurrent(view)) return;
      view.losses = [...trainer.losses];
      onLosses(view, { figures });
    };
    run.job = scheduler.submit({
      priority: 6,
      name: 'pg-train',
      start,
      onProgress: follow(true),
      onDone: follow(true),
      onError: (e) => {
        if (!isCurrent(view)) return;
        view.losses = [...trainer.losses];
        onLosses(view, { figures: false });
        err.set(`Training stopped: ${e.message}`);
      },
    });
    run.job.free = free; // a job cancelled before its first slice has no cleanup yet
  }

  return { train, cancel };
}
