// agreement.js - what the page's numbers have in common with a NumPy notebook's, and how closely
// (DOM-free): the one statement the page, its "Start here" box and its scripts use wherever they
// speak of agreement with NumPy. Measured with Debian 12's NumPy 1.24.2 + OpenBLAS 0.3.21
// (tests/model/agreement.test.mjs measures it again on every run).
//
// Three kinds of numbers:
//   exact       the random draws (E and X, Wq, Wk, Wv, Wo, lesson 4's dY, lesson 5's target):
//               the page draws NumPy's own streams, so they are NumPy's bit for bit;
//   lastDigits  everything computed from them (Q ... Y, losses, gradients, training): NumPy's
//               BLAS adds each product's terms in another order, and its exp may round the last
//               bit differently, so a full-precision print may differ in its last digit or two;
//   magnitude   the gradient check's errors: finite differences are rounding noise themselves.

/** The three kinds, by key. */
export const KINDS = Object.freeze(['exact', 'lastDigits', 'magnitude']);

/**
 * A real example of "the last digit or two": lesson 4's loss, as the page computes it (in full
 * precision) and as `python3` prints it from lesson 4's Copy-as-NumPy script on Debian 12 (NumPy
 * 1.24.2, OpenBLAS 0.3.21; OpenBLAS's Haswell kernel prints 16.99083421603364).
 */
export const EXAMPLE = Object.freeze({
  what: "lesson 4's loss L = sum(dY ⊙ Y)",
  page: '16.990834216033655',
  numpy: '16.990834216033637',
});

/**
 * A real example of "only in magnitude": lesson 5's gradient check at the tables' first
 * convention (two points, ε = 1e-5, as the scripts), the largest relative error on Wk, on the page
 * and in NumPy (Debian 12's, over OpenBLAS: 1.09e-5 to 1.22e-5 with its kernels and CPUs, which
 * is why the page says "about").
 */
export const CHECK_EXAMPLE = Object.freeze({
  what: "lesson 5's largest relative error on Wk",
  page: '4.76e-6',
  numpy: 'about 1.1e-5 or 1.2e-5',
});

/** The random draws: what is bit-identical to NumPy. */
const EXACT = Object.freeze({
  kind: 'exact',
  title: 'Exactly, bit for bit',
  short: "bit-identical to NumPy's",
  brief: "the random draws: X and the weights (and lesson 4's dY, lesson 5's target)",
  text:
    "the random draws. The page draws from NumPy's own streams, np.random.default_rng(seed) " +
    '(or np.random.seed(seed) with np.random.randn), so E and X, the weights Wq, Wk, Wv, Wo, ' +
    "lesson 4's dY and lesson 5's target are NumPy's, bit for bit (X with the positional " +
    'encoding off).',
});

/** Everything computed from the draws: agrees to the last digit or two. */
const LAST_DIGITS = Object.freeze({
  kind: 'lastDigits',
  title: 'To the last digit or two',
  short: 'agrees with NumPy to the last digit or two',
  brief: 'everything computed from them: Q, K, V, scores, att, Y, the losses, the gradients',
  text:
    'everything computed from them: Q, K, V, scores, att, Y, the losses, every gradient and ' +
    'every training step. NumPy hands matrix products to a BLAS library (Basic Linear Algebra ' +
    'Subprograms, such as OpenBLAS), which adds up their terms in ' +
    'another order, which depends on your CPU, and its exp may round the last bit differently, ' +
    'so a full-precision print can differ in its last digit or two (or not at all); an entry ' +
    'much smaller than the largest of its array can differ a few digits earlier, as the ' +
    `difference is about 10⁻¹⁵ of that largest entry. Example: ${EXAMPLE.what} is ` +
    `${EXAMPLE.page} here (tick "full precision" to see every digit) and ${EXAMPLE.numpy} in ` +
    'NumPy.',
});

/** The gradient check's errors: agree only in magnitude. */
const MAGNITUDE = Object.freeze({
  kind: 'magnitude',
  title: 'Only in magnitude',
  short: 'agrees with NumPy in magnitude only',
  brief: "the gradient check's errors (finite differences are rounding noise themselves)",
  text:
    "the gradient check's errors. A finite-difference error is itself rounding noise (the " +
    'difference of two nearly equal losses), so with the same stencil (the points x ± ε, or ' +
    'x ± ε and x ± 2ε, at which the loss is evaluated) and ε (the tables start ' +
    "with a notebook's: two points, ε = 10⁻⁵) your notebook's should be of the same size as " +
    `the page's, not the same digits: norm-wise within a factor of three. The largest error per ` +
    'entry is set by the tiniest entry, so it can differ tenfold or more between two CPUs, even ' +
    `between two runs of NumPy with different BLAS kernels. Example: ${CHECK_EXAMPLE.what} is ` +
    `${CHECK_EXAMPLE.page} here and ${CHECK_EXAMPLE.numpy} in NumPy, depending on the machine.`,
});

/** The statement, by kind: { kind, title, short, brief, text }. */
export const AGREEMENT = Object.freeze({
  exact: EXACT,
  lastDigits: LAST_DIGITS,
  magnitude: MAGNITUDE,
});

/** The statement in one sentence, for places with room for one. */
export const AGREEMENT_SENTENCE =
  "The random draws (X and the weights) are bit-identical to NumPy's; everything computed " +
  "from them agrees with NumPy to the last digit or two; the gradient check's errors agree in " +
  'magnitude only.';

/**
 * The positional encoding: with it on, X itself is computed (sin, cos and ** are not correctly
 * rounded, and the browser's differ from NumPy's in the last bit), so it joins the second kind.
 */
export const PE_AGREEMENT =
  'With the positional encoding on, X is computed too: sin, cos and ** are not correctly ' +
  "rounded, and the browser's Math.sin, Math.cos and ** may differ from NumPy's in the last " +
  'bit, so X then agrees with NumPy to the last digit or two (like everything computed from ' +
  'it), not bit for bit.';

/** The same statement as Python comment lines, for the Copy-as-NumPy scripts. */
export const SCRIPT_NOTE = [
  "# The random draws (X, the weights, dY, target) are the page's bit for bit; every number",
  '# computed from them agrees with the page to the last digit or two (NumPy sums matrix',
  '# products in another order); gradient-check errors agree in magnitude only.',
].join('\n');
