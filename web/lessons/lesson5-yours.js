// lesson5-yours.js - lesson 5 driven by a student's own run (issue 19, item 2): what of the run
// lesson 5 takes from the notebook (lr and steps, and where they came from), what it could not
// use, a "Run your N steps" button, and the student's losses beside the page's.

import { el } from '../components/dom.js';
import { button } from '../components/controls.js';
import { num } from '../components/numbers.js';
import { agreementText, lossesAgreement, runLine, stepsText } from '../model/training.js';

/** A learning rate in a sentence: at most 6 significant digits (0.05, 10). */
const plainLr = (lr) => String(Number(lr.toPrecision(6)));

/**
 * The box over lesson 5's controls while a student's arrays are in use. run: studentRun's result.
 * Returns { element, button (#l5-run-yours), update(losses) (the page's losses so far),
 * stopped(k) (the run ended after k of its steps) }.
 */
export function yourRunBox(run) {
  const steps = stepsText(run.steps);
  const runBtn = button('l5-run-yours', `Run your ${steps}`, 'btn btn-primary');
  const status = el('p', { id: 'l5-yours-status', className: 'note', attrs: { role: 'status' } });
  const compare = el('p', { id: 'l5-yours-compare', attrs: { 'aria-live': 'polite' } });
  const messages = [...run.notes, ...run.messages];
  const element = el(
    'div',
    {
      id: 'l5-yours',
      className: 'custom-run',
      attrs: { role: 'region', 'aria-label': 'Your run' },
    },
    el('h3', { text: 'Your run' }),
    el('p', { id: 'l5-yours-run', text: runLine(run) }),
    messages.length
      ? el('ul', { className: 'note' }, ...messages.map((m) => el('li', { text: m })))
      : '',
    runBtn,
    status,
    compare,
  );
  const update = (losses) => {
    const done = losses.length - 1;
    status.textContent =
      done < run.steps ? `${stepsText(done)} of your ${run.steps} taken.` : `Your ${steps} taken.`;
    if (!run.yours) return;
    const agreement = lossesAgreement(run.yours.losses, losses);
    compare.textContent = agreementText(run.yours.key, agreement) ?? '';
    // a run that is not the notebook's is worth the reader's eye (the text says why)
    compare.className = agreement.rows.length && !agreement.agree ? 'error' : 'note';
  };
  const stopped = (k) => {
    status.textContent = `Your run stopped after ${stepsText(k)} of ${run.steps}: the loss stopped being finite (the run diverged at lr ${plainLr(run.lrs[Math.max(k - 1, 0)])}). The steps taken are shown.`;
  };
  return { element, button: runBtn, update, stopped };
}

/** The loss table's extra columns with the student's losses: headers and the cells of step k. */
export function yoursColumns(run) {
  if (!run?.yours) return null;
  const { key, losses } = run.yours;
  return {
    headers: [`your ${key}[k]`, 'relative difference'],
    cells(k, page) {
      if (k >= losses.length) return ['—', '—'];
      const a = lossesAgreement([losses[k]], [page]);
      const rel = a.rows[0].rel;
      return [num(losses[k], 10), rel === 0 ? '0' : rel.toExponential(1)];
    },
  };
}
