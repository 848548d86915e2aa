// trainer.js - the guided project's training loop on a layer of its own (Trainer), and a training
// run as a Scheduler job (one step per iteration).

import { layerWith } from '../model/layers.js';
import { divergedMessage } from '../model/training.js';

/**
 * The guided project's training loop on one layer object: each step is zero_grad, forward, MSE
 * loss, backward, W -= lr * dW. `losses[k]` is the loss after k steps (losses[0]: initial weights).
 * model: { C, heads, W, X, target, T, B (default 1), causal }.
 */
export class Trainer {
  constructor(mha, model) {
    this.mha = mha;
    this.model = model;
    this.layer = layerWith(mha, model.C, model.heads, model.W);
    this.reset();
  }

  #evaluate() {
    const { X, B = 1, T, causal, target } = this.model;
    const { Y, attention } = this.layer.forward(X, { B, T, causal });
    this.Y = Y;
    this.att = attention;
    this.loss = this.mha.mseLoss(Y, target).loss;
  }

  reset() {
    const v = this.layer.weights;
    for (const k of Object.keys(this.model.W)) v[k].set(this.model.W[k]);
    this.layer.zeroGrad();
    this.lrs = [];
    this.#evaluate();
    this.losses = [this.loss];
  }

  /** One step of gradient descent with learning rate lr; returns the new loss. */
  step(lr) {
    if (!Number.isFinite(this.loss)) throw new Error(divergedMessage(this.loss));
    // the layer's cache already holds the forward pass of the current weights (#evaluate ran it
    // after the last change), so backward starts from there: one forward per step, not two
    this.layer.zeroGrad();
    const { dY } = this.mha.mseLoss(this.Y, this.model.target);
    this.layer.backward(dY);
    this.layer.sgdStep(lr);
    this.lrs.push(lr);
    this.#evaluate();
    this.losses.push(this.loss);
    return this.loss;
  }

  get steps() {
    return this.lrs.length;
  }

  free() {
    this.layer.free();
  }
}

/**
 * A training run for the Scheduler: a new Trainer on `model`, `steps` steps at `lr`, one per
 * iteration (yielding the steps taken). Returns { trainer, start, free }: free() releases the
 * trainer's layer once (also the job's cleanup, so a job cancelled before its first slice is
 * released by calling free()).
 */
export function trainingRun(mha, model, { steps, lr }) {
  const trainer = new Trainer(mha, model);
  let freed = false;
  const free = () => {
    if (!freed) {
      freed = true;
      trainer.free();
    }
  };
  const start = () => ({
    iterator: (function* () {
      for (let k = 0; k < steps; k++) {
        trainer.step(lr);
        yield k + 1;
      }
    })(),
    cleanup: free,
  });
  return { trainer, start, free };
}
