// go-deeper.js - a lesson's "Go deeper" fold: what the course's lesson does not need on its main
// line (derivations, other sizes, the ε sweep, ...), one per lesson, closed until opened.

import { el } from './dom.js';

/**
 * <details class="go-deeper"> whose summary reads "Go deeper: <what>", holding `parts` (elements;
 * empty strings are left out).
 */
export function goDeeper(what, ...parts) {
  return el(
    'details',
    { className: 'go-deeper' },
    el('summary', {}, el('strong', { text: 'Go deeper' }), `: ${what}`),
    ...parts.filter(Boolean),
  );
}
