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

function cancelledStep() {
  const err = new Error('step cancelled (reset)');
  err.cancelled = true;
  return err;
}

/**
 * Lesson 5's layer object as the page holds it while the compute engine takes the steps: W (the
 * weights now), att, Y, loss, losses (losses[k]: after k steps) and lrs (each step's learning
 * rate). step(lr) is one compute.train step from the weights now: the same bits as Trainer.step
 * (the forward pass of the same weights is the same); steps asked for while one runs follow it in
 * order. reset() is back to the initial weights at once (steps in flight are dropped).
 */
export class SteppedTrainer {
  constructor(mha, compute, model) {
    const first = new Trainer(mha, model); // the initial weights' forward and loss, here
    this.initial = { W: model.W, att: first.att, Y: first.Y, loss: first.loss };
    first.free();
    this.compute = compute;
    this.model = model;
    this.generation = 0;
    this.reset();
  }

  reset() {
    this.generation += 1;
    this.job?.cancel();
    this.job = null;
    this.chain = Promise.resolve();
    const { W, att, Y, loss } = this.initial;
    Object.assign(this, { W, att, Y, loss });
    this.losses = [this.loss];
    this.lrs = [];
  }

  get steps() {
    return this.lrs.length;
  }

  /** The weights now: { Wq, Wk, Wv, Wo }. */
  get weights() {
    return this.W;
  }

  /** One step at lr after those asked for before; resolves with the new loss. */
  step(lr) {
    const generation = this.generation;
    const take = () => {
      if (generation !== this.generation) throw cancelledStep();
      const { C, heads, X, target, T, causal } = this.model;
      const args = { C, heads, W: this.W, X, target, B: 1, T, causal, steps: 1, lr };
      this.job = this.compute.train({ ...args, priority: 8, group: 'lesson5', name: 'l5-step' });
      return this.job.promise.then((r) => {
        if (generation !== this.generation) throw cancelledStep();
        Object.assign(this, { W: r.W, att: r.att, Y: r.Y, loss: r.losses[1], job: null });
        this.losses.push(this.loss);
        this.lrs.push(lr);
        return this.loss;
      });
    };
    const p = this.chain.then(take);
    this.chain = p.catch(() => {});
    return p;
  }

  free() {
    this.reset();
  }
}
