// notebook-banner.js - the banner over every figure computed from a student's arrays: "Custom
// arrays in use (from your notebook) — nothing leaves your browser", the sizes, what was drawn
// because the notebook did not have it, and a "Back to the course's arrays" button.

import { el } from './dom.js';
import { customSizesText, CUSTOM_SEED } from '../model/notebook-check.js';

/** What of lesson 4's dY and lesson 5's target is the student's and what was drawn. */
function drawnText(custom) {
  const drawn = [];
  if (!custom.given.dY) drawn.push('dY = rng.standard_normal((B, T, C))');
  if (!custom.given.target) drawn.push('target = rng.standard_normal((1, T, C))');
  if (!drawn.length) return 'dY and target are yours too.';
  return `Not in your file, so drawn with rng = np.random.default_rng(${CUSTOM_SEED}): ${drawn.join(', then ')}.`;
}

/**
 * The banner: { id } for its button, the custom arrays (see customArrays), onBack() for the
 * button. Returns the <div class="custom-banner">.
 */
export function customBanner({ id, custom, onBack }) {
  const back = el('button', {
    id,
    type: 'button',
    className: 'btn',
    text: 'Back to the course’s arrays',
    on: { click: () => onBack() },
  });
  const batch = custom.B > 1 ? ' Lesson 5 and the playground train on batch item 0.' : '';
  return el(
    'div',
    { className: 'custom-banner' },
    el('p', {
      className: 'custom-banner-title',
      text: 'Custom arrays in use (from your notebook) — nothing leaves your browser',
    }),
    el('p', {
      className: 'note',
      text: `${customSizesText(custom)}. ${drawnText(custom)}${batch} The explanations and the Copy as NumPy scripts still describe the course’s arrays.`,
    }),
    back,
  );
}
