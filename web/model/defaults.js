// defaults.js - the course's defaults, in one place (DOM-free; imports nothing). Every other
// module of web/ that needs the seed, a size, the sentence, lesson 5's run or the check's ε reads
// it from here; web/mha.js keeps its own API defaults (the engine sits below the model).

/**
 * The course's setting:
 *   seed, rng     default_rng(42): every section restarts this stream
 *   B, T, C       lessons 3 and 4: 2 sequences of 6 tokens of 64 features
 *   heads, hs     4 heads of hs = C / heads = 16
 *   sentence      the Lantern Bay sentence (lesson 1, the sentence, lesson 5, the playground)
 *   lr, steps     lesson 5's run: lr 0.1, "Run 10 steps"
 *   eps           the gradient check's step: 1e-5 for the two-point central difference a notebook
 *                 writes, 1e-3 for the five-point stencil
 */
export const COURSE = Object.freeze({
  seed: 42,
  rng: 'default_rng',
  B: 2,
  T: 6,
  C: 64,
  heads: 4,
  hs: 16,
  sentence: 'The lanterns of Lantern Bay guide boats home',
  lr: 0.1,
  steps: 10,
  eps: Object.freeze({ twoPoint: 1e-5, fivePoint: 1e-3 }),
});
