// figures.js - the "figures" list a student compares with the notebook, and a row of figures.

import { el } from './dom.js';
import { num } from './numbers.js';

/**
 * One term of the list: <div class="stat"><dt>label</dt><dd data-figure=key>value</dd>
 * [<dd class="note figure-note">note</dd>]</div>. A div holding only dt/dd is a valid group of
 * a <dl>; the note is a second description of the same term.
 */
function figureItem(it) {
  const v = typeof it.value === 'number' ? num(it.value, it.digits ?? 6) : it.value;
  const dd = el('dd', { dataset: it.key ? { figure: it.key } : undefined }, v);
  const stat = el('div', { className: 'stat' }, el('dt', { text: it.label }), dd);
  if (it.note) stat.append(el('dd', { className: 'note figure-note', text: it.note }));
  return stat;
}

/**
 * The "figures" list (a <dl class="stats">): items [{ key, label, value, note, digits }], value a
 * number (-> num()), a string, a Node or an array of those. Returns { element, set(items) }.
 */
export function figuresList(title = 'Numbers to compare with your notebook') {
  const dl = el('dl', { className: 'stats figures-list' });
  const box = el(
    'div',
    { className: 'figures', attrs: { role: 'group', 'aria-label': title } },
    el('h3', { className: 'figures-title', text: title }),
    dl,
  );
  return {
    element: box,
    set(items) {
      dl.replaceChildren(...items.map(figureItem));
    },
  };
}

/** A row of figures that wraps. */
export function figureRow(...children) {
  return el('div', { className: 'figure-row' }, ...children);
}
