// compare.js - how the notebook check compares a student's array with the array it should be: the
// tolerance from the array's precision (float64, float32, float16 or printed text), the error
// figures (maxAbs, maxRel, normRel), the first entry beyond tolerance, and one report row.
//
//   const tol = toleranceFor(expected, { dtype: '<f4' });   // { abs, perEntry, text }
//   const c = compareArrays(yours, expected, tol);          // { pass, maxAbs, ..., firstIndex }

import { shapeText } from './names.js';

const FLOOR = 1e-300; // the absolute tolerance when the expected array is all zeros

// Relative tolerance (of max|expected|) by the precision a result was saved in
const PRECISIONS = Object.freeze({
  f8: { rel: 1e-10, label: 'float64' },
  f4: { rel: 1e-5, label: 'float32' },
  f2: { rel: 1e-3, label: 'float16' },
  text: { rel: 1e-10, label: 'printed text' },
});

/** 'f8', 'f4', 'f2' or 'text' from a dtype ('<f4', '>f8', 'text', …; absent: float64). */
export function precisionOf(dtype) {
  if (dtype === 'text') return 'text';
  const m = /^[<>=|]?f(\d+)$/.exec(dtype ?? '');
  if (m && m[1] === '4') return 'f4';
  if (m && m[1] === '2') return 'f2';
  return 'f8';
}

const fmt = (x) => Number(x.toPrecision(2)).toExponential();

/** Entry i of a (B, h, T, T) array lies above the diagonal (key after query). */
export const aboveDiagonal = (T) => (i) => i % T > Math.floor(i / T) % T;

/** max |x| over the entries compared (finite ones; `skip(i)` true: not compared). */
function scaleOf(x, skip) {
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    if (skip && skip(i)) continue;
    const a = Math.abs(x[i]);
    if (a > s && a !== Infinity) s = a;
  }
  return s;
}

/** Printed text of a float32/float16 array (repr says dtype=...) carries that dtype's precision. */
function textPrecision(kind, printedDtype) {
  const computed = { float32: 'f4', float16: 'f2' }[printedDtype];
  if (kind !== 'text' || !computed) return PRECISIONS[kind];
  return { rel: PRECISIONS[computed].rel, label: `printed ${printedDtype} text` };
}

/**
 * The tolerance of a comparison with `reference`: { abs, perEntry, text }. float64 (or an absent
 * or non-float dtype): 1e-10 × max|reference| (a scalar: × |reference|); float32 1e-5, float16
 * 1e-3; printed text: per entry resolution[i] + 1e-10 × max|reference| (1e-5 × when repr said
 * dtype=float32, `printedDtype`). An all-zero reference
 * gets the absolute floor 1e-300. `slack`: a further relative tolerance (× max|reference|) for
 * what printed inputs carry, said in the text as `slackText`.
 */
export function toleranceFor(reference, opts) {
  const { dtype, resolution = null, scalar = false, skip = null } = opts;
  const { slack = 0, slackText = 'printed inputs', printedDtype = null } = opts;
  const kind = precisionOf(dtype);
  const { rel, label } = textPrecision(kind, printedDtype);
  const scale = scaleOf(reference, skip);
  const of = scalar ? '|expected|' : 'max|expected|';
  const base = scale > 0 ? (rel + slack) * scale : FLOOR;
  let baseText =
    scale > 0
      ? `${rel.toExponential()} × ${of} = ${fmt(rel * scale)}`
      : `expected is ${scalar ? '0' : 'all zeros'}: absolute floor ${FLOOR}`;
  if (slack > 0 && scale > 0) baseText += ` + ${fmt(slack)} × ${of} for your ${slackText}`;
  if (kind === 'text' && resolution) {
    const perEntry = Float64Array.from(resolution, (r) => r + (scale > 0 ? base : 0) || FLOOR);
    let worst = 0;
    for (const r of resolution) worst = Math.max(worst, r);
    const digits = `half a unit of each entry's last printed digit (up to ${fmt(worst)})`;
    return { abs: worst + base, perEntry, text: `${label}: ${digits} + ${baseText}` };
  }
  const name = kind === 'f8' && dtype && !/f8$/.test(dtype) ? `${dtype} (as float64)` : label;
  return { abs: base, perEntry: null, text: `${name}: ${baseText}` };
}

/**
 * What an array's printed digits leave open, relative to its size: max resolution / max|data|
 * for printed text (dtype 'text'), 0 otherwise.
 */
export function relativeResolution(a) {
  if (!a || a.dtype !== 'text' || !a.resolution) return 0;
  let res = 0;
  for (const r of a.resolution) res = Math.max(res, r);
  const scale = scaleOf(a.data, null);
  return scale > 0 ? res / scale : 0;
}

/**
 * Compare yours with reference entry by entry (entries with skip(i) true are not compared). An
 * entry agrees when |yours − reference| ≤ its tolerance, or both are the same infinity or both
 * NaN. maxRel = max |y−e| / max(|y|,|e|) over entries not both 0; normRel = ‖y−e‖ / (‖y‖ + ‖e‖)
 * (0 if both are 0). A non-finite disagreement makes maxAbs and maxRel Infinity and normRel 1.
 * Returns { pass, maxAbs, maxRel, normRel, firstIndex (-1: none), compared }.
 */
export function compareArrays(yours, reference, tol, skip = null) {
  let maxAbs = 0;
  let maxRel = 0;
  let dd = 0;
  let yy = 0;
  let ee = 0;
  let firstIndex = -1;
  let compared = 0;
  let nonFinite = false;
  for (let i = 0; i < reference.length; i++) {
    if (skip && skip(i)) continue;
    compared++;
    const y = yours[i];
    const e = reference[i];
    const d = Math.abs(y - e);
    const same = y === e || (Number.isNaN(y) && Number.isNaN(e));
    if (!same && !(d <= (tol.perEntry ? tol.perEntry[i] : tol.abs)) && firstIndex < 0) {
      firstIndex = i;
    }
    if (Number.isFinite(y) && Number.isFinite(e)) {
      yy += y * y;
      ee += e * e;
    }
    if (same) continue;
    if (!Number.isFinite(d)) {
      nonFinite = true;
      continue;
    }
    maxAbs = Math.max(maxAbs, d);
    maxRel = Math.max(maxRel, d / Math.max(Math.abs(y), Math.abs(e)));
    dd += d * d;
  }
  if (nonFinite) {
    return { pass: false, maxAbs: Infinity, maxRel: Infinity, normRel: 1, firstIndex, compared };
  }
  const norms = Math.sqrt(yy) + Math.sqrt(ee);
  const normRel = norms > 0 ? Math.sqrt(dd) / norms : 0;
  return { pass: firstIndex < 0, maxAbs, maxRel, normRel, firstIndex, compared };
}

/** Whether yours reproduces reference within the tolerance of its precision. */
export function agrees(yours, reference, opts) {
  return compareArrays(yours, reference, toleranceFor(reference, opts), opts.skip).pass;
}

/** The index (one number per axis) of flat C-order entry i of an array of this shape. */
export function unravel(i, shape) {
  const index = new Array(shape.length);
  let rest = i;
  for (let a = shape.length - 1; a >= 0; a--) {
    index[a] = rest % shape[a];
    rest = Math.floor(rest / shape[a]);
  }
  return index;
}

/** A result row nothing was compared in: status 'missing' or 'shape'. */
export function uncomparedRow(name, status, { shape = null, expectedShape, note = null }) {
  return {
    name,
    status,
    shape,
    expectedShape,
    maxAbs: null,
    maxRel: null,
    normRel: null,
    tolerance: { abs: null, text: 'not compared' },
    first: null,
    compared: 0,
    note,
    diagnosis: null,
    expected: null,
    yours: null,
  };
}

/** "expected (2, 3, 5, 4) or (2, 5, 12)". */
export function shapesText(forms) {
  return `expected ${forms.map((f) => shapeText(f.shape)).join(' or ')}`;
}

/**
 * The row of a result given in an accepted shape: compared with `expected` (same length, C order)
 * within the tolerance of its dtype. `skip(i)`: entries not compared; `note` explains them.
 */
export function comparedRow(
  name,
  array,
  expected,
  { skip = null, note = null, scalar = false, slack = 0 },
) {
  const { dtype, resolution, printedDtype } = array;
  const opts = { dtype, resolution, printedDtype, scalar, skip, slack };
  const tolerance = toleranceFor(expected, opts);
  const c = compareArrays(array.data, expected, tolerance, skip);
  const first =
    c.firstIndex < 0
      ? null
      : {
          index: unravel(c.firstIndex, array.shape),
          yours: array.data[c.firstIndex],
          expected: expected[c.firstIndex],
        };
  return {
    name,
    status: c.pass ? 'match' : 'differs',
    shape: [...array.shape],
    expectedShape: [...array.shape],
    maxAbs: c.maxAbs,
    maxRel: c.maxRel,
    normRel: c.normRel,
    tolerance: { abs: tolerance.abs, text: tolerance.text },
    first,
    compared: c.compared,
    note,
    diagnosis: null,
    expected: Float64Array.from(expected),
    yours: Float64Array.from(array.data),
  };
}
