// course-results.js - what the course's own notebook prints in each lesson, beside what this page
// shows, and why they differ (DOM-free): the one table the "Your course and this page" boxes are
// drawn from. The course draws its own random numbers (its seed, its order of draws, its weight
// scales), so its X, weights, dY and target are not the page's; the page draws its own,
// documented ones (seed 42, default_rng, standard normals / √C, in the order its scripts show).
// Shapes, checks and conclusions agree; the numbers do not, until the student's arrays are loaded.

import { LESSON_SAVES, lessonSaveLine } from '../check/names.js';

/** How a student brings their own numbers onto the page, the same for every lesson. */
export const HOW_YOURS =
  'Your own numbers here: save them with this lesson’s line, check the file and press “Use my ' +
  'arrays in the lessons”.';

/** The id of Check your notebook's file input; its drop zone (a button) is `${id}-zone`. */
export const CHECK_FILE_ID = 'nb-file';

/**
 * Lesson `key`'s "Check this lesson's arrays": a plain link (back and forward work) to the drop
 * zone of Check your notebook, where the file its line writes (LESSON_SAVES) goes.
 */
export function checkLink(key) {
  return {
    href: `#${CHECK_FILE_ID}-zone`,
    text: 'Check this lesson’s arrays',
    file: LESSON_SAVES[key].file,
  };
}

/** The smallest and largest positive finite errors of a check's rows, or null before any. */
export function errorRange(rows, field = 'maxRel') {
  const v = Array.from(rows ?? [], (r) => r[field]).filter((x) => x > 0 && Number.isFinite(x));
  return v.length ? { lo: Math.min(...v), hi: Math.max(...v) } : null;
}

/** "per entry 4.1e−9 to 1.7e−6; norm-wise 1.3e−11 to 2.5e−10" for a check's rows, or null. */
function checkRanges(f, sci) {
  const entry = errorRange(f.gradcheck, 'maxRel');
  const norm = errorRange(f.gradcheck, 'normRel');
  if (!entry || !norm) return null;
  const range = (r) => `${sci(r.lo)} to ${sci(r.hi)}`;
  return `per entry ${range(entry)}; norm-wise ${range(norm)}`;
}

const shapeList = (shapes) => shapes.map((s) => `(${s.join(', ')})`).join(' → ');

/**
 * Per lesson: its np.savez line (names of its own: LESSON_SAVES of web/check/names.js), `why`
 * where the gap has a cause other than the draws (said in the box instead of leaving it to Start
 * here's why), and the rows of its box, each
 * { what, course (as the course prints it), page(f, sci) (text from the page's values f; sci
 * formats an error; null: not computed yet) }. Lessons 2 and 3 print checks and shapes, which do
 * not depend on the draws: the course's column says so instead of quoting numbers.
 */
export const COURSE_RESULTS = Object.freeze({
  lesson1: {
    save: lessonSaveLine('lesson1'),
    rows: [
      {
        what: 'largest weight gap, max |A1 − A2|',
        course: '0.26',
        page: (f) => f.maxGap.toFixed(3),
      },
      {
        what: 'rows whose argmax differs',
        course: '7 of 8',
        page: (f) => `${f.argmaxDiff} of ${f.T}`,
      },
    ],
  },
  lesson2: {
    save: lessonSaveLine('lesson2'),
    rows: [
      {
        what: 'max |merge_heads(split_heads(q)) − q|',
        course: '0.0, whatever the draws',
        page: (f) => (f.roundTrip === 0 ? '0.0' : String(f.roundTrip)),
      },
    ],
  },
  lesson3: {
    save: lessonSaveLine('lesson3'),
    rows: [
      {
        what: 'shapes: X → Q → att → Y',
        course: '(2, 6, 64) → (2, 4, 6, 16) → (2, 4, 6, 6) → (2, 6, 64)',
        page: (f) => shapeList(f.shapes),
      },
      {
        what: 'largest |softmax row sum − 1|',
        course: '~1e-16: rows sum to 1 whatever the draws',
        page: (f, sci) => sci(f.rowSumMaxErr),
      },
    ],
  },
  lesson4: {
    save: lessonSaveLine('lesson4'),
    why:
      'Here the gap is not the draws: the check table reports, by default, the strict maximum ' +
      'over entries of |a − n| / max(|a|, |n|), which the tensor’s tiniest entry sets (the ' +
      '“norm-wise” error, ‖a − n‖ / (‖a‖ + ‖n‖) over the whole tensor, is what many ' +
      'courses print); the page’s own arrays checked in NumPy give the same figures. Pick the ' +
      'error form your notebook prints with the convention selector above the table to ' +
      'compare like with like.',
    rows: [
      {
        what: 'gradient-check errors, over the gradients (the check table’s stencil and ε)',
        course: 'between 10⁻¹⁰ and 10⁻⁷',
        page: checkRanges,
      },
    ],
  },
  lesson5: {
    save: lessonSaveLine('lesson5'),
    why:
      'The losses differ by more than draws can explain: against a standard-normal target, ' +
      'as the page draws it, the expected MSE is E[Y²] + 1, at least 1, so a first loss of 0.65 ' +
      'means the course’s target (its scale) or its loss is not the page’s. Compare how the ' +
      'loss falls, not where it starts, or load your notebook’s arrays (this lesson’s line) to ' +
      'see its own losses here.',
    rows: [
      {
        what: 'gradient-check errors (the check table’s stencil and ε)',
        course: 'around 10⁻⁷',
        page: checkRanges,
      },
      {
        what: 'MSE loss, before → after 10 steps of lr 0.1',
        course: '0.6508 → 0.3840',
        page: (f) => f.losses10 && `${f.losses10[0].toFixed(4)} → ${f.losses10[10].toFixed(4)}`,
      },
    ],
  },
});

/** A row's page column: null while computing, a dash and why for another input, else the value. */
function pageText(row, f, sci) {
  if (!f) return null;
  if (f.otherInput) return `— (${f.otherInput})`;
  return row.page(f, sci) ?? null;
}

/**
 * The rows of lesson `key`'s box for the page's values f: [{ what, course, page }] (page: text,
 * or null while it is being computed); sci formats an error. f.otherInput: the page computes
 * from another input than the course's (an edited sentence), said in every row instead.
 */
export function courseBoxRows(key, f, sci = (x) => x.toExponential(1)) {
  const entry = COURSE_RESULTS[key];
  if (!entry) throw new Error(`courseBoxRows: no course results for ${key}`);
  return entry.rows.map((row) => ({
    what: row.what,
    course: row.course,
    page: pageText(row, f, sci),
  }));
}
