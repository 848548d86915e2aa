// The layer the notebook-check module tests share: small enough to check by hand (B = 2, T = 2,
// C = 2, h = 1, hs = 2), with inputs whose every product is exact in a few binary digits.

const f = (...x) => Float64Array.of(...x);

/** The inputs: X (2, 2, 2), the four (2, 2) weights, and an MSE target. */
export const SMALL_INPUTS = Object.freeze({
  X: f(1, 0, 0.5, -1, 2, 1, -0.5, 0.25),
  Wq: f(0.5, -1, 1, 0.25),
  Wk: f(1, 0.5, -0.5, 1),
  Wv: f(0.25, 1, -1, 0.5),
  Wo: f(1, -0.5, 0.5, 1),
  target: f(0, 1, 0, -1, 1, 0, 0.5, 0),
});

/** Its sizes as the check's modules take them; `more` overrides (causal, loss, ...). */
export const smallSizes = (more = {}) => ({
  B: 2,
  T: 2,
  C: 2,
  heads: 1,
  hs: 2,
  N: 4,
  n: 8,
  causal: false,
  loss: 'mse',
  ...more,
});
