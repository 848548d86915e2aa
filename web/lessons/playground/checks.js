// checks.js - the playground's gradient check: a sampled check on every new view, then the full
// check (on its own when the size allows, else on "Run the full check").

import { el } from '../../components/dom.js';
import { groupThousands } from '../../components/tables.js';
import { GradcheckPanel } from '../../components/gradcheck-panel.js';
import {
  L5_LINES,
  backwardOrder,
  gradcheckSize,
  passLinesText,
  pendingReport,
  pgThreshold,
} from '../../model/gradcheck-report.js';
import { PG_SAMPLES, autoFull } from '../../model/playground.js';
import { trimmedPrecision } from '../../model/format.js';
import { viewArrays } from './state.js';

const INTRO = `Live re-renders use a sampled check: ${PG_SAMPLES} evenly spaced entries of each tensor (all entries of smaller ones). The full check visits every entry in small chunks, so the page stays responsive; changing a setting restarts it. The loss is lesson 5's MSE, L = mean((Y − target)²) over the n = T·C entries of Y, so dL/dY = 2(Y − target)/n: each entry of dL/dY is one output's error divided by n/2, and the backward pass, linear in dL/dY, passes that factor on to every gradient. A longer sentence or a wider C makes every gradient smaller; the rounding floor of the finite differences does not shrink with them: it is about u·|L|/ε absolute (u ≈ 1.1·10⁻¹⁶, float64's rounding unit), some 10⁻¹¹·|L| at this ε (see the max abs error column). Relative errors therefore grow with n, and the pass line with them: the same as lesson 5's up to n = 512 (its size), in proportion to n above that. `;

/**
 * The check section: { intro, actions, panel, start(view) }. isCurrent(view) says whether a view
 * is still the one shown (a finished sampled check only starts the full one for its own view).
 */
export function checksView({ mha, compute, isCurrent }) {
  const fullBtn = el('button', {
    id: 'pg-full-check',
    type: 'button',
    className: 'btn',
    text: 'Run the full check',
  });
  const fullNote = el('span', { className: 'note' });
  const thresholdNote = el('strong');
  const panel = new GradcheckPanel({
    id: 'pg-gradcheck',
    compute,
    threshold: L5_LINES,
    caption:
      'Gradient check of the MSE loss for the typed sentence (initial weights; one row per ' +
      "gradient, in lesson 4's order)",
    label: 'Playground gradient check',
    order: backwardOrder(mha),
  });

  function start(view) {
    const s = view.settings;
    const { model, T } = view;
    const { target, ...layer } = viewArrays(view); // no target: the undrawn model's own
    const check = (more) => ({
      ...layer,
      opts: { B: 1, T, causal: s.causal, loss: 'mse', ...(target && { target }), ...more },
    });
    const auto = autoFull(mha, s, T);
    const total = gradcheckSize(mha, { T, C: s.C, heads: s.h });
    fullNote.textContent = auto
      ? `the full check (${groupThousands(total)} entries) runs by itself after the sampled one`
      : `${groupThousands(total)} entries: this size takes a while, so it runs only when you ask`;
    panel.threshold = pgThreshold(T, s.C);
    const fmt = (x) => trimmedPrecision(x, 3);
    thresholdNote.textContent = `Pass line for n = T·C = ${T * model.C}: ${passLinesText(panel.base, fmt)}.`;
    panel.showPending('', pendingReport(mha, { T, C: s.C, heads: s.h }));
    const group = 'playground'; // a settings change cancels them (compute.cancelGroup)
    panel.run(check({ samples: PG_SAMPLES }), {
      priority: 5,
      group,
      onDone: () => {
        if (auto && isCurrent(view)) panel.run(check({}), { priority: 1, total, group });
      },
    });
    fullBtn.onclick = () => {
      if (isCurrent(view)) panel.run(check({}), { priority: 4, total, group });
    };
  }

  return {
    intro: el('p', { className: 'note' }, INTRO, thresholdNote),
    actions: el('div', { className: 'actions' }, fullBtn, fullNote),
    panel,
    start,
  };
}
