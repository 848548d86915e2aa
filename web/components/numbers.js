// numbers.js - numbers in the page: shown short, with the full float64 on hover and under the
// page's "full precision" toggle (one switch for every number on the page).

import { el } from './dom.js';
import { fmt, full } from '../model/format.js';

let fullPrecision = false; // the page-wide toggle (#full-precision)

/** A number shown short, with its full value on hover (title) and under the precision toggle. */
export function num(x, digits = 6) {
  const s = el('span', { className: 'fig-num', dataset: { full: full(x), short: fmt(x, digits) } });
  s.title = `full precision: ${full(x)}`;
  s.textContent = fullPrecision ? full(x) : fmt(x, digits);
  return s;
}

/** A list of numbers, e.g. [1.02, 0, 0, 0] -> "[1.02169, 0, 0, 0]" with each entry a num(). */
export function numList(xs, digits = 6) {
  const out = [document.createTextNode('[')];
  xs.forEach((x, i) => {
    if (i) out.push(document.createTextNode(', '));
    out.push(num(x, digits));
  });
  out.push(document.createTextNode(']'));
  return out;
}

export function isFullPrecision() {
  return fullPrecision;
}

/** Switch every number on the page between short and full precision. */
export function setFullPrecision(on) {
  fullPrecision = !!on;
  for (const s of document.querySelectorAll('span.fig-num')) {
    s.textContent = fullPrecision ? s.dataset.full : s.dataset.short;
  }
}
