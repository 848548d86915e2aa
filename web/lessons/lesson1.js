// lesson1.js - Why one head isn't enough: two independent single heads on the sentence.

import { table } from '../components/tables.js';
import { DEFAULT_SENTENCE, checkSentence, lesson1 } from '../model.js';
import { lesson1Script } from './numpy.js';
import {
  el,
  figuresList,
  numpyBlock,
  tokenChips,
  field,
  errorLine,
  debounce,
  num,
  figureRow,
  lazyHeatmap,
} from './common.js';

export function renderLesson1({ mha, body }) {
  let sentence = DEFAULT_SENTENCE;
  let r = lesson1(mha, { tokens: checkSentence(sentence).tokens });

  const input = el('input', {
    id: 'l1-sentence',
    value: sentence,
    attrs: {
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'l1-error',
      size: 60,
    },
  });
  const err = errorLine('l1-error');
  const controls = el(
    'div',
    { className: 'controls' },
    field('Sentence', input, '1–64 tokens; C = 64, hs = 16, seed 42 (default_rng)'),
    err.element,
  );

  const chipsSlot = el('div', { className: 'chips-slot' });
  const caption = 'rows whose argmax differs';
  const common = (title, name) => ({
    rows: r.T,
    cols: r.T,
    rowLabels: r.tokens,
    colLabels: r.tokens,
    title,
    shape: `(${r.T}, ${r.T})`,
    highlightRows: r.argmaxDiffRows,
    highlightLabel: caption,
    exportName: name,
  });
  const hA = lazyHeatmap({
    ...common('head A: softmax(qAkAᵀ/√16)', 'lesson1-head-A'),
    data: r.A1,
    scale: 'unit',
  });
  const hB = lazyHeatmap({
    ...common('head B: softmax(qBkBᵀ/√16)', 'lesson1-head-B'),
    data: r.A2,
    scale: 'unit',
  });
  const hD = lazyHeatmap({
    ...common('difference A − B', 'lesson1-difference'),
    data: r.diff,
    scale: 'diverging',
    legendLabel: 'A − B',
  });
  const maps = [hA, hB, hD];

  const figs = figuresList();
  const argmaxSlot = el('div', { className: 'argmax-table' });
  const script = numpyBlock(() => lesson1Script({ sentence, tokens: r.tokens }), {
    what: 'lesson 1',
  });

  function highlight(t) {
    for (const h of maps) h.highlight(t === null ? -1 : t, t === null ? -1 : t);
  }

  function fill() {
    chipsSlot.replaceChildren(tokenChips(r.tokens, r.ids, highlight));
    const k = r.argmaxDiffRows.length;
    const rowsText = k ? r.argmaxDiffRows.map((t) => `${t} ‘${r.tokens[t]}’`).join(', ') : 'none';
    figs.set([
      { key: 'maxGap', label: 'max |A − B| (the largest weight gap)', value: r.maxGap },
      {
        key: 'argmaxDiff',
        label: 'rows whose argmax differs',
        value: `${k} of ${r.T}`,
        note: k ? `rows ${rowsText}` : 'the two heads agree on every row',
      },
    ]);
    argmaxSlot.replaceChildren(
      table({
        headers: [
          'query (row)',
          'head A attends most to',
          'weight',
          'head B attends most to',
          'weight',
          'same?',
        ],
        rows: r.tokens.map((tok, t) => [
          `${t} ${tok}`,
          `${r.argmax1[t]} ${r.tokens[r.argmax1[t]]}`,
          num(r.A1[t * r.T + r.argmax1[t]], 4),
          `${r.argmax2[t]} ${r.tokens[r.argmax2[t]]}`,
          num(r.A2[t * r.T + r.argmax2[t]], 4),
          r.argmax1[t] === r.argmax2[t] ? 'same' : 'differs',
        ]),
        caption:
          "Each query token's most-attended key in the two heads (first maximum on ties, like np.argmax)",
        numeric: [2, 4],
      }),
    );
    script.refresh();
  }

  function recompute() {
    const text = input.value;
    const c = checkSentence(text);
    if (c.error) {
      err.set(c.error);
      input.setAttribute('aria-invalid', 'true');
      return;
    }
    err.clear();
    input.removeAttribute('aria-invalid');
    sentence = text;
    r = lesson1(mha, { tokens: c.tokens });
    const opts = (title) => ({
      rows: r.T,
      cols: r.T,
      rowLabels: r.tokens,
      colLabels: r.tokens,
      shape: `(${r.T}, ${r.T})`,
      highlightRows: r.argmaxDiffRows,
      title,
    });
    hA.update(r.A1, opts('head A: softmax(qAkAᵀ/√16)'));
    hB.update(r.A2, opts('head B: softmax(qBkBᵀ/√16)'));
    hD.update(r.diff, opts('difference A − B'));
    fill();
  }
  input.addEventListener('input', debounce(recompute, 150));
  input.addEventListener('change', () => recompute());

  fill();
  body.append(
    controls,
    chipsSlot,
    el('p', {
      className: 'note',
      text: "Hover a token (above) or a cell to highlight its row and column. Outlined rows: the two heads' most-attended keys differ.",
    }),
    el('div', { className: 'figure-grid cols-2' }, hA.element, hB.element, hD.element),
    figs.element,
    argmaxSlot,
    script.element,
  );

  return {
    figures: () => ({
      tokens: [...r.tokens],
      A1: Array.from(r.A1),
      A2: Array.from(r.A2),
      maxGap: r.maxGap,
      argmaxDiffRows: [...r.argmaxDiffRows],
    }),
  };
}
