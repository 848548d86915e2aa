// bug-gallery.js - "A gallery of common bugs", a part of "Check your notebook": every mistake the
// check knows (web/model/bug-gallery.js, from the check's catalogue) done once on the course's
// arrays of lessons 3 and 4, with the check's row for it and the mistaken tensor beside the
// course's. Nothing is computed before the reader opens it: on the first opening the cases are
// computed and drawn one per frame (each runs the check once), so the page's first load does not
// pay for them.

import { el } from '../components/dom.js';
import { afterFrame } from '../jobs/scheduler.js';
import { galleryCard, textOnlyList } from '../components/bug-gallery.js';
import { galleryCase, galleryContext, galleryEntries, gallerySizes } from '../model/bug-gallery.js';
import { COURSE } from '../model/defaults.js';

const INTRO =
  'Each mistake below is one line of a notebook done the wrong way, run on the course’s arrays ' +
  `of lessons 3 and 4 (seed ${COURSE.seed}, B = ${COURSE.B}, T = ${COURSE.T}, C = ${COURSE.C}, ` +
  `h = ${COURSE.heads}; the target of lesson 5’s MSE loss ` +
  'is chosen so that dY is lesson 4’s): the check is run on that notebook, as on yours, and ' +
  'its row for the mistake is shown with the mistaken tensor beside the course’s (batch item ' +
  '0, head 0). If your numbers look like one of these, you have found your bug before saving ' +
  'anything.';

/** Compute and draw every case, one per frame; then the text-only records. */
async function build(mha, { list, status, details }, { shown, textOnly }) {
  const ctx = galleryContext(mha);
  let named = 0; // cases whose row in the check names their own mistake
  for (const [i, entry] of shown.entries()) {
    const c = galleryCase(mha, ctx, entry);
    if (c.recognised) named += 1;
    list.append(galleryCard(c, i));
    status.textContent = `Drawing the gallery: ${i + 1} of ${shown.length} mistakes…`;
    await afterFrame();
  }
  list.append(
    el('h4', { text: `The check’s other diagnoses, in words (${textOnly.length})` }),
    textOnlyList(textOnly),
  );
  status.textContent =
    `${shown.length} mistakes drawn from the course’s arrays; the check names the mistake made ` +
    `in ${named} of them; ${textOnly.length} more diagnoses in words below.`;
  details.dataset.built = '1';
}

/**
 * The gallery: a heading, what it is, and a <details id="nb-gallery"> whose cases are computed
 * and drawn the first time it opens (data-built="1" when all are drawn). Returns { element: the
 * nodes to append }.
 */
export function renderBugGallery({ mha }) {
  const entries = galleryEntries(gallerySizes(COURSE));
  const status = el('p', { className: 'note', attrs: { role: 'status' } });
  const list = el('div', { className: 'bug-gallery-list' });
  const details = el(
    'details',
    { id: 'nb-gallery', className: 'bug-gallery' },
    el('summary', {
      text: `Show the gallery: ${entries.shown.length} mistakes drawn on the course’s arrays, ${entries.textOnly.length} more in words`,
    }),
    status,
    list,
  );
  let started = false;
  details.addEventListener('toggle', () => {
    if (!details.open || started) return;
    started = true;
    build(mha, { list, status, details }, entries).catch((e) => {
      status.textContent = `The gallery could not be drawn: ${e.message}`;
    });
  });
  const element = [
    el('h3', { text: 'A gallery of common bugs' }),
    el('p', { text: INTRO }),
    details,
  ];
  return { element };
}
