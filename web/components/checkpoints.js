// checkpoints.js - the "Checkpoint — what this lesson's script prints" box of every lesson: a few
// entries by their NumPy expressions (web/model/checkpoints.js), every digit, and a copy button.
// The lesson's Copy-as-NumPy script prints the same lines.

import { el } from './dom.js';
import { copyButton } from './export.js';
import { checkpointLine, checkpoints, pythonValues } from '../model/checkpoints.js';
import { AGREEMENT } from '../model/agreement.js';

const NOTE =
  'These are the lines this lesson’s Copy-as-NumPy script prints, on the page’s arrays (with ' +
  'your notebook’s arrays in use, on yours). print(np.asarray(expr).tolist()) shows every digit ' +
  '(NumPy’s own print rounds to 8). How closely a NumPy run agrees: Start here.';

/** How an entry agrees with NumPy, in agreement.js's words (+ a random draw / computed). */
function kindText(kind) {
  return `${AGREEMENT[kind].title} (${kind === 'exact' ? 'a random draw' : 'computed'})`;
}

/**
 * One entry: <div class="checkpoint"><dt><code>label =</code> <span>kind</span></dt>
 * <dd data-checkpoint=label><code>values</code></dd></div>.
 */
function checkpointItem(c) {
  return el(
    'div',
    { className: 'checkpoint' },
    el(
      'dt',
      {},
      el('code', { text: `${c.label} =` }),
      ' ',
      el('span', { className: 'note checkpoint-kind', text: kindText(c.kind) }),
    ),
    el(
      'dd',
      { className: 'checkpoint-values', dataset: { checkpoint: c.label } },
      el('code', { text: pythonValues(c.values) }),
    ),
  );
}

/**
 * The box of a lesson ('lesson1' ... 'lesson5') for its model result r (see checkpoints() in
 * web/model/checkpoints.js), folded: its lines made when it is first opened (and again after an
 * update while open). Returns { element, update(r) } (after a recompute: a new sentence, the
 * causal mask).
 */
export function checkpointBox(lesson, r, { what = 'this lesson' } = {}) {
  const dl = el('dl', { className: 'checkpoint-list' });
  let latest = r;
  let shown = null; // the result whose lines the list shows
  const copy = copyButton('Copy checkpoint', () =>
    checkpoints(lesson, latest).map(checkpointLine).join('\n'),
  );
  copy.setAttribute('aria-label', `Copy checkpoint: the lines of ${what}`);
  // folded, as the script is: the lines to hold a notebook's output against, when wanted
  const element = el(
    'details',
    {
      className: 'checkpoints',
      dataset: { lesson },
      attrs: { role: 'group', 'aria-label': `Checkpoint of ${what}: what its script prints` },
    },
    el(
      'summary',
      {},
      el('h3', {
        className: 'checkpoints-title',
        text: 'Checkpoint — what this lesson’s script prints',
      }),
    ),
    dl,
    el('p', { className: 'note checkpoints-note', text: NOTE }),
    el('div', { className: 'actions' }, copy),
  );
  const fill = () => {
    if (!element.open || shown === latest) return;
    shown = latest;
    dl.replaceChildren(...checkpoints(lesson, latest).map(checkpointItem));
  };
  element.addEventListener('toggle', fill);
  const update = (res) => {
    latest = res;
    fill();
  };
  return { element, update };
}
