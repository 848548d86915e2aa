// format.js - numbers and shapes as the page prints them (DOM-free).

/** U+2212, the minus sign shown beside digits (a hyphen is too short). */
export const MINUS = '\u2212';

/** Short display: integers as is, tiny/huge in e-notation, else `digits` significant digits. */
export function fmt(x, digits = 6) {
  if (typeof x !== 'number') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : `${MINUS}∞`;
  if (x === 0) return '0';
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x).replace('-', MINUS);
  const a = Math.abs(x);
  let s;
  if (a < 1e-3 || a >= 1e6) {
    s = x
      .toExponential(Math.max(0, Math.min(digits, 6) - 1))
      .replace(/\.?0+e/, 'e')
      .replace('e+', 'e');
  } else s = String(Number(x.toPrecision(digits)));
  return s.replace(/-/g, MINUS);
}

/** Full precision: the shortest text that reads back as the same float64 (like Python's repr). */
export function full(x) {
  return String(x);
}

/** Python-style shape: (2, 4, 6, 16). */
export function shapeText(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/** x with `digits` significant digits and no trailing zeros: 1.25e-5 -> '0.0000125'. */
export function trimmedPrecision(x, digits = 3) {
  // trailing zeros of the fraction only (100 stays 100; 1.50e-7 becomes 1.5e-7)
  return x
    .toPrecision(digits)
    .replace(/(\.\d*?)0+(?=$|e)/, '$1')
    .replace(/\.(?=$|e)/, '');
}

/**
 * " About 12 s left." from an estimate in ms ('' without one, or at the end; under 1.5 s: "About
 * a second").
 */
export function timeLeftText(etaMs) {
  if (!Number.isFinite(etaMs) || etaMs <= 0) return '';
  return etaMs < 1500 ? ' About a second left.' : ` About ${Math.round(etaMs / 1000)} s left.`;
}
