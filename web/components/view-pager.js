// view-pager.js - the links at the end of a view to the one before and the one after (the page
// shows one view at a time: web/lessons/index.js VIEWS).

import { el } from './dom.js';

/** One link of the pager: "Previous" / "Next" over the view's title. */
function pagerLink(view, rel, label) {
  return el(
    'a',
    { className: `pager-${rel}`, attrs: { href: `#${view.id}`, rel } },
    el('span', { className: 'pager-label', text: label }),
    el('span', { className: 'pager-title', text: view.title }),
  );
}

/**
 * <nav id=…> with a link to `prev` and one to `next` (views, or undefined at either end).
 */
export function viewPager({ id, prev, next }) {
  return el(
    'nav',
    { id, className: 'view-pager', attrs: { 'aria-label': 'Previous and next' } },
    prev ? pagerLink(prev, 'prev', '← Previous') : el('span'),
    next ? pagerLink(next, 'next', 'Next →') : el('span'),
  );
}
