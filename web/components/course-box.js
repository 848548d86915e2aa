// course-box.js - "Your course and this page": a short box at the top of a lesson with what the
// course's notebook prints beside what the page shows, why they differ and how to bring the
// student's own arrays (the table is web/model/course-results.js).

import { el } from './dom.js';
import { table } from './tables.js';
import { formatSci, uniqueId } from './scales.js';
import { copyButton } from './export.js';
import { COURSE_RESULTS, HOW_YOURS, checkLink, courseBoxRows } from '../model/course-results.js';

const CUSTOM_NOTE =
  'The page’s column is computed from your notebook’s arrays (and, for an array your file ' +
  'lacks, from the page’s own draws: the banner above lists them). The course’s column is the ' +
  'course’s own run, with its own draws.';

/**
 * The lesson's np.savez line, its Copy button and "Check this lesson's arrays", a plain link to
 * the drop zone of Check your notebook.
 */
function saveLine(key) {
  const line = COURSE_RESULTS[key].save;
  const name = key.replace('lesson', 'lesson ');
  const copy = copyButton('Copy', () => line);
  copy.setAttribute('aria-label', `Copy the line: np.savez for ${name}`);
  const link = checkLink(key);
  return el(
    'div',
    { className: 'course-box-save' },
    el('pre', { className: 'numpy savez-line' }, el('code', { text: line })),
    copy,
    el('a', { className: 'check-lesson', text: link.text, attrs: { href: link.href } }),
  );
}

/**
 * The box of lesson `key` ('lesson1' ... 'lesson5'). custom: the lesson shows a student's
 * arrays. Returns { element, update(f) } (f: the page's values, see COURSE_RESULTS; null: being
 * computed).
 */
export function courseBox(key, { custom = false } = {}) {
  const id = uniqueId('course-box');
  const slot = el('div', { className: 'course-box-table' });
  // why the course's numbers are not the page's (said once, in Start here); how to bring yours
  const how = custom
    ? el('p', { className: 'note', text: CUSTOM_NOTE })
    : [
        el(
          'p',
          { className: 'note' },
          'Why the numbers differ and which ones match yours: ',
          el('a', { text: 'Start here', attrs: { href: '#start-why-different' } }),
          `. ${HOW_YOURS}`,
        ),
        saveLine(key),
      ];
  const element = el(
    'div',
    {
      className: 'course-box',
      dataset: { lesson: key },
      attrs: { role: 'group', 'aria-labelledby': id },
    },
    el('h3', { id, text: custom ? 'Your notebook and the course' : 'Your course and this page' }),
    slot,
    COURSE_RESULTS[key].why
      ? el('p', { className: 'note why-gap', text: COURSE_RESULTS[key].why })
      : '',
    how,
  );
  const update = (f) => {
    const rows = courseBoxRows(key, f, (x) => formatSci(x, 1));
    slot.replaceChildren(
      table({
        headers: ['result', 'the course prints', custom ? 'your arrays give' : 'this page shows'],
        rows: rows.map((r) => [r.what, r.course, r.page ?? 'computing…']),
        caption: `${key.replace('lesson', 'Lesson ')}: the course’s printed results beside the page’s`,
        className: 'course-box-rows',
        stack: true,
      }),
    );
  };
  update(null);
  return { element, update };
}
