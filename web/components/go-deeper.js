// go-deeper.js - a lesson's "Go deeper" fold: what the course's lesson does not need on its main
// line (derivations, other sizes, the ε sweep, ...), one per lesson, closed until opened. What it
// holds may be built when it is first opened: the view then costs only its main line.

import { el } from './dom.js';

/**
 * <details class="go-deeper"> whose summary reads "Go deeper: <what>". `parts`: its elements
 * (empty strings are left out), or a function returning them, called once, when the fold is first
 * opened (a click on its summary builds them before it opens; `open` set by a script, on its
 * toggle event); data-built="1" once they are in.
 */
export function goDeeper(what, ...parts) {
  const details = el(
    'details',
    { className: 'go-deeper' },
    el('summary', {}, el('strong', { text: 'Go deeper' }), `: ${what}`),
  );
  const fill = (list) => {
    details.append(...list.filter(Boolean));
    details.dataset.built = '1';
  };
  if (typeof parts[0] !== 'function') {
    fill(parts);
    return details;
  }
  const build = parts[0];
  const once = () => {
    if (!details.dataset.built) fill(build());
  };
  details.querySelector('summary').addEventListener('click', once);
  details.addEventListener('toggle', () => details.open && once());
  return details;
}
