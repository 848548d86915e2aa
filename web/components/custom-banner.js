// custom-banner.js - the banner over every figure computed from a student's arrays: "Custom
// arrays in use (from your notebook) — nothing leaves your browser", the sizes, what was drawn
// because the notebook did not have it, and a "Back to the course's arrays" button; over a lesson
// the loaded arrays cannot feed (lesson 1 without Wq1 … Wv2, say), why it shows the course's.

import { el } from './dom.js';
import { customSizesText, sectionArrays, CUSTOM_SEED } from '../model/custom-arrays.js';
import { runLine } from '../model/training.js';

/** What of lesson 4's dY and lesson 5's target is the student's and what was drawn. */
function drawnText(custom) {
  const drawn = [];
  if (!custom.given.dY) drawn.push('dY = rng.standard_normal((B, T, C))');
  if (!custom.given.target) drawn.push('target = rng.standard_normal((1, T, C))');
  if (!drawn.length) return 'dY and target are yours too.';
  return `Not in your file, so drawn with rng = np.random.default_rng(${CUSTOM_SEED}): ${drawn.join(', then ')}.`;
}

/** The "Back to the course's arrays" button. */
function backButton(id, onBack) {
  return el('button', {
    id,
    type: 'button',
    className: 'btn',
    text: 'Back to the course’s arrays',
    on: { click: () => onBack() },
  });
}

const TITLE = 'Custom arrays in use (from your notebook) — nothing leaves your browser';

/** "Lesson 1 from your X, Wq1, …: T = 6, C = 64, hs = 16 (…)." for lesson1Part's part. */
export function lesson1Text(p) {
  const batch = p.B > 1 ? ` (batch item 0 of X, which has B = ${p.B})` : '';
  return `Lesson 1 from your ${p.names.join(', ')}: T = ${p.T}, C = ${p.C}, hs = ${p.hs}${batch}; the tokens are the positions t0 … t${p.T - 1}.`;
}

/** "Lesson 2 from your x and Wq: B = 1, T = 6, C = 64, h = 4 (hs = 16)." for lesson2Part's. */
export function lesson2Text(p) {
  return `Lesson 2 from your ${p.names.join(' and ')}: ${customSizesText(p)}.`;
}

/** "Lesson 4 from your l4_X, l4_Wq, …: B = 2, T = 6, C = 64, h = 4 (hs = 16)." */
function mainText(key, c) {
  const title = key === 'playground' ? 'The playground' : key.replace('lesson', 'Lesson ');
  return `${title} from your ${c.names.join(', ')}: ${customSizesText(c)}; ${drawnText(c)}`;
}

/** A lesson's line of the banner: what of the notebook it uses, or why it shows the course's. */
function lessonLine(custom, key) {
  if (key === 'lesson1') return custom.lesson1 ? lesson1Text(custom.lesson1) : custom.why.lesson1;
  if (key === 'lesson2') return custom.lesson2 ? lesson2Text(custom.lesson2) : custom.why.lesson2;
  return null;
}

/** Whether lessons 3-5 do not all take the same arrays (a lesson's own file is loaded). */
const ownFiles = (custom) =>
  ['lesson3', 'lesson4', 'lesson5'].some(
    (k) => sectionArrays(custom, k) !== sectionArrays(custom, 'playground'),
  );

/**
 * Lessons 3-5's and the playground's lines where they take different arrays (a lesson's own
 * file), else none.
 */
function mainLines(custom) {
  if (!ownFiles(custom)) return [];
  return ['lesson3', 'lesson4', 'lesson5', 'playground'].map((k) => {
    const c = sectionArrays(custom, k);
    return c ? mainText(k, c) : (custom.why[k] ?? custom.why.main);
  });
}

/** Whether the section `key` (lesson1 … playground) computes from the notebook's arrays. */
export function usesCustom(custom, key) {
  return !!sectionArrays(custom, key);
}

/**
 * The banner over section `key` (lesson1, lesson2, lesson3 … playground) while a notebook's arrays
 * are in use: customBanner where the section uses them, else why it shows the course's, with the
 * same Back button. Returns the <div class="custom-banner">.
 */
export function lessonBanner({ id, key, custom, onBack }) {
  if (usesCustom(custom, key) && key !== 'lesson1' && key !== 'lesson2') {
    const own = sectionArrays(custom, key);
    const banner = customBanner({ id, custom: own, onBack });
    // a lesson's own file: which of its arrays it uses
    if (ownFiles(custom) && key !== 'playground') {
      const from = `From your ${own.names.join(', ')}.`;
      banner.querySelector('button').before(el('p', { className: 'note', text: from }));
    }
    // lesson 5: the lr and steps of the student's run, and where they came from
    if (key === 'lesson5' && own.training) {
      const line = el('p', { className: 'note', text: runLine(own.training) });
      banner.querySelector('button').before(line);
    }
    return banner;
  }
  const used = usesCustom(custom, key);
  const text = used
    ? `${lessonLine(custom, key)} The explanations and the Copy as NumPy script still describe the course’s arrays.`
    : (lessonLine(custom, key) ?? custom.why[key] ?? custom.why.main);
  return el(
    'div',
    { className: `custom-banner${used ? '' : ' custom-banner-unused'}` },
    el('p', {
      className: 'custom-banner-title',
      text: used ? TITLE : 'Your arrays are loaded, but this section shows the course’s',
    }),
    el('p', { className: 'note', text }),
    backButton(id, onBack),
  );
}

/**
 * The banner: { id } for its button, the custom arrays (see customArrays), onBack() for the
 * button; all: the notebook section's banner, which also says what lessons 1 and 2 show. Returns
 * the <div class="custom-banner">. Where lessons 3-5 do not use them (custom.main false), says
 * why, and what lessons 1 and 2 use.
 */
export function customBanner({ id, custom, onBack, all = false }) {
  const back = backButton(id, onBack);
  // the notebook section's banner (all) also says what lessons 1 and 2 show
  const lessons = all
    ? ` ${[lessonLine(custom, 'lesson1'), lessonLine(custom, 'lesson2'), ...mainLines(custom)].join(' ')}`
    : '';
  if (!custom.main || (all && ownFiles(custom))) {
    const lines = [
      custom.why.main,
      lessonLine(custom, 'lesson1'),
      lessonLine(custom, 'lesson2'),
      ...mainLines(custom),
    ].filter(Boolean);
    return el(
      'div',
      { className: 'custom-banner' },
      el('p', { className: 'custom-banner-title', text: TITLE }),
      el('p', { className: 'note', text: lines.join(' ') }),
      back,
    );
  }
  const batch = custom.B > 1 ? ' Lesson 5 and the playground train on batch item 0.' : '';
  return el(
    'div',
    { className: 'custom-banner' },
    el('p', { className: 'custom-banner-title', text: TITLE }),
    el('p', {
      className: 'note',
      text: `${customSizesText(custom)}. ${drawnText(custom)}${batch}${lessons} The explanations and the Copy as NumPy scripts still describe the course’s arrays.`,
    }),
    back,
  );
}
