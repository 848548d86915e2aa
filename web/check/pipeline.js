// pipeline.js - the layer's graph (steps.js) evaluated from one student's arrays: every array they
// gave replaces its node, the rest is recomputed, and a mistake (a catalogue variant, or an
// analysis's) can be switched on at any node to see whether it reproduces what they saved.
//
//   new Pipeline(sizes, inputs)   provide(node, data), step(node), value(node), adopt(...)
//   simulate(sizes, inputs)       every node, no mistake (tests: agrees with the engine)

import { graph } from './steps.js';

/**
 * The layer's graph evaluated from a student's arrays: `inputs` (X, Wq..Wo, target or dY) and
 * every result given so far (`provide`) replace their node; the other nodes are recomputed, with
 * the mistakes `adopt`ed at them. `extra` (a Map node -> { variant, param }) switches on mistakes
 * for one evaluation without changing the pipeline.
 */
export class Pipeline {
  #memo = new Map(); // node -> value with the pipeline's own mistakes
  #shared = new Map(); // "node|id|param" -> value of one mistaken step on unchanged parents

  constructor(sizes, inputs) {
    this.s = sizes;
    this.nodes = graph(sizes);
    this.given = new Map(Object.entries(inputs));
    this.inputs = new Set(Object.keys(inputs));
    this.expected = null;
    this.sites = new Map(); // node -> { variant, param } adopted (nodes not given)
    this.changed = new Set(); // inputs given again: not the values the engine was seeded with
    this.children = new Map(Object.keys(this.nodes).map((n) => [n, []]));
    for (const [n, { parents }] of Object.entries(this.nodes)) {
      for (const p of parents) this.children.get(p)?.push(n);
    }
  }

  /**
   * The values of the layer with no mistake from the inputs alone ({ [node]: Float64Array }, the
   * engine's): a node computed from the inputs only, with no mistake on the way, takes its value.
   */
  seed(expected) {
    this.expected = expected;
  }

  // node's value is the seeded one: no result given and no mistake from the inputs to node
  #pure(node) {
    if (!this.expected || !this.expected[node] || this.sites.has(node)) return false;
    return this.nodes[node].parents.every(
      (p) => (this.inputs.has(p) && !this.changed.has(p)) || (!this.given.has(p) && this.#pure(p)),
    );
  }

  /**
   * Use the student's array for node from now on. An input given again (a weight as it was used,
   * not as saved) is no longer the seeded values' and the engine's, which hold the saved one.
   */
  provide(node, data) {
    if (this.inputs.has(node) && this.given.get(node) !== data) {
      this.changed.add(node);
      this.engine = null;
    }
    this.given.set(node, data);
    this.#invalidate(node);
  }

  /** Recompute node (not given) with this mistake from now on. */
  adopt(node, choice) {
    this.sites.set(node, choice);
    this.#invalidate(node);
  }

  /** Recompute node with the course's step again (a mistake adopted there was another row's). */
  unadopt(node) {
    this.sites.delete(node);
    this.#invalidate(node);
  }

  /**
   * The mistakes adopted at steps node is computed from (not given) that node's array disproves:
   * the sites whose course's steps give `yours` back (compared by `agree`), or null.
   */
  disproved(node, yours, agree) {
    const hidden = new Set(this.hiddenAncestors(node));
    const sites = [...this.sites.keys()].filter((site) => hidden.has(site));
    if (!sites.length) return null;
    const course = (site) => ({ variant: { id: 'course', fn: (p) => this.nodes[site].step(p) } });
    const extra = new Map(sites.map((site) => [site, course(site)]));
    // (a row the variants do not change, one that agrees either way, disproves none of them)
    if (agree(yours, this.step(node))) return null;
    return agree(yours, this.step(node, extra)) ? sites : null;
  }

  #invalidate(node) {
    this.#shared.clear();
    const stack = [node];
    while (stack.length) {
      const n = stack.pop();
      this.#memo.delete(n);
      stack.push(...(this.children.get(n) ?? []));
    }
  }

  /** Node's value: the student's array if given, else its step recomputed. */
  value(node, extra = null, scratch = new Map()) {
    if (this.given.has(node)) return this.given.get(node);
    if (!extra || !this.#touched(node, extra, scratch)) {
      if (!this.#memo.has(node)) {
        this.#memo.set(node, this.#pure(node) ? this.expected[node] : this.step(node));
      }
      return this.#memo.get(node);
    }
    const choice = extra.get(node);
    const parentsPlain = this.nodes[node].parents.every((p) => !this.#touched(p, extra, scratch));
    const key = `${node}|${choice?.variant.id}|${choice?.param}`;
    if (choice && parentsPlain) {
      if (!this.#shared.has(key)) this.#shared.set(key, this.step(node, extra, scratch));
      return this.#shared.get(key);
    }
    if (!scratch.has(node)) scratch.set(node, this.step(node, extra, scratch));
    return scratch.get(node);
  }

  // whether a mistake in `extra` reaches node through nodes that are not given
  #touched(node, extra, scratch) {
    if (this.given.has(node)) return false;
    if (extra.has(node)) return true;
    const key = `touched:${node}`;
    if (!scratch.has(key)) {
      scratch.set(
        key,
        this.nodes[node].parents.some((p) => this.#touched(p, extra, scratch)),
      );
    }
    return scratch.get(key);
  }

  /** Node's step (even if it is given) on its parents' values, with extra's or adopted mistakes. */
  step(node, extra = null, scratch = new Map()) {
    const fast = this.engine ? this.#viaEngine(node, extra, scratch) : null;
    if (fast) return fast;
    const p = {};
    const choice = extra?.get(node) ?? this.sites.get(node);
    // a mistake may read arrays the course's step does not (an operand replaced): its `reads`
    for (const n of [...this.nodes[node].parents, ...(choice?.variant.reads ?? [])]) {
      p[n] ??= this.value(n, extra, scratch);
    }
    return choice ? choice.variant.fn(p, choice.param) : this.nodes[node].step(p);
  }

  /**
   * Let `engine` run the course's own steps (no mistake) where it can: engine.forward(from, set,
   * node) sets the tensors `set`, restarts the engine's forward with forwardFrom(from) and returns
   * node; engine.backward(set, dY, node) sets `set`, runs backward(dY) and returns node. `plan`:
   * tensorPlan(mha) (steps.js), where the engine's forward restarts and what its backward reads.
   */
  useEngine(engine, plan) {
    this.engine = engine;
    this.chain = Object.keys(plan.restart);
    this.restart = plan.restart;
    this.backward = new Set(plan.backward);
    this.backwardReads = plan.backwardReads;
  }

  #plain(node, extra) {
    return !extra?.has(node) && !this.sites.has(node);
  }

  // node by the engine: a forward restarted at the earliest step of the chain scores ... Y that
  // is not given and has no mistake up to node, or the backward when every backward step node
  // needs is recomputed without mistake from dY. null when the engine cannot.
  #viaEngine(node, extra, scratch) {
    if (!this.#plain(node, extra)) return null;
    const chain = this.chain;
    let i = chain.indexOf(node);
    if (i >= 0) {
      while (i > 0 && !this.given.has(chain[i - 1]) && this.#plain(chain[i - 1], extra)) i--;
      const { set, from } = this.restart[chain[i]];
      const values = Object.fromEntries(set.map((n) => [n, this.value(n, extra, scratch)]));
      return this.engine.forward(from, values, node);
    }
    const backward = this.backward;
    if (!backward.has(node)) return null;
    for (const n of [node, ...this.hiddenAncestors(node)].filter((x) => backward.has(x))) {
      if (!this.#plain(n, extra)) return null;
      if (this.nodes[n].parents.some((p) => backward.has(p) && this.given.has(p))) return null;
    }
    const values = Object.fromEntries(
      this.backwardReads.map((n) => [n, this.value(n, extra, scratch)]),
    );
    return this.engine.backward(values, this.value('dY', extra, scratch), node);
  }

  /** The nodes node depends on through nodes not given, nearest first. */
  hiddenAncestors(node) {
    const out = [];
    const queue = [...this.nodes[node].parents];
    while (queue.length) {
      const n = queue.shift();
      if (this.given.has(n) || out.includes(n)) continue;
      out.push(n);
      queue.push(...this.nodes[n].parents);
    }
    return out;
  }

  /** The given arrays node is computed from (through nodes not given), parents first. */
  frontier(node) {
    const found = [];
    const seen = new Set();
    const visit = (n) => {
      for (const p of this.nodes[n].parents) {
        if (seen.has(p)) continue;
        seen.add(p);
        if (this.given.has(p)) found.push(p);
        else visit(p);
      }
    };
    visit(node);
    return found;
  }
}

/** Every node of the layer from these inputs with no mistake: { [node]: Float64Array }. */
export function simulate(sizes, inputs) {
  const pipe = new Pipeline(sizes, inputs);
  return Object.fromEntries(Object.keys(pipe.nodes).map((n) => [n, pipe.value(n)]));
}
