// token-chips.js - the tokens of a sentence as chips: hovering or focusing one highlights its
// row and column in the lesson's figures.

import { el } from './dom.js';

/** One chip: the token, its row of E (if ids), and the hover/focus handlers. */
function chip(tok, t, ids, onHover) {
  const li = el(
    'li',
    { className: 'token-chip', tabIndex: 0, dataset: { t } },
    el('span', { className: 'token-text', text: tok }),
    ids ? el('span', { className: 'note token-row', text: `row ${ids[t]}` }) : null,
  );
  li.title = `token ${t}: “${tok}”${ids ? `, row ${ids[t]} of E` : ''}`;
  const on = () => {
    li.classList.add('is-active');
    onHover?.(t);
  };
  const off = () => {
    li.classList.remove('is-active');
    onHover?.(null);
  };
  li.addEventListener('mouseenter', on);
  li.addEventListener('focus', on);
  li.addEventListener('mouseleave', off);
  li.addEventListener('blur', off);
  return li;
}

/**
 * Token chips (<ol class="token-chips">, the index comes from the list counter): each token with
 * its embedding row; hovering or focusing one calls onHover(t) (onHover(null) on leave), so the
 * lesson can highlight its row and column.
 */
export function tokenChips(tokens, ids, onHover) {
  const list = el('ol', {
    className: 'token-chips',
    attrs: { 'aria-label': 'tokens in order; hover or focus one to highlight its row and column' },
  });
  tokens.forEach((tok, t) => list.append(chip(tok, t, ids, onHover)));
  return list;
}
