// lesson1.js - Why one head isn't enough: two independent single heads on the sentence.

import { COURSE } from '../model/defaults.js';
import { el } from '../components/dom.js';
import { table } from '../components/tables.js';
import { figuresList } from '../components/figures.js';
import { numpyBlock } from '../components/code.js';
import { tokenChips } from '../components/token-chips.js';
import { field, errorLine, debounce, textInput } from '../components/controls.js';
import { num } from '../components/numbers.js';
import { heatmap } from '../components/heatmap.js';
import { goDeeper } from '../components/go-deeper.js';
import { arraysButton, downloadsRow } from '../components/downloads.js';
import { checkpointBox } from '../components/checkpoints.js';
import { courseBox } from '../components/course-box.js';
import { DEFAULT_SENTENCE, MAX_TOKENS, checkSentence } from '../model/tokens.js';
import { lesson1, lesson1Captions, lesson1FromArrays } from '../model/lesson1.js';
import { compareSection } from './lesson1-compare.js';
import { lesson1Script } from '../model/numpy-scripts.js';
import { lesson1Arrays } from '../model/lesson-arrays.js';
import { fmt } from '../model/format.js';

// each map's caption is its NumPy (lesson1Captions: A1, A2, diff), the figure's max_gap too
const CAPTIONS = Object.fromEntries(lesson1Captions().map((c) => [c.name, c]));
const captionOf = (name) => `${name} = ${CAPTIONS[name].code}`;
const MAPS = [
  ['A1', 'head A', 'lesson1-head-A', { scale: 'unit' }, 'argmax1'],
  ['A2', 'head B', 'lesson1-head-B', { scale: 'unit' }, 'argmax2'],
  ['diff', 'difference A − B', 'lesson1-difference', { scale: 'diverging', legendLabel: 'A − B' }],
];

/** What the rings of the two heads' maps mark. */
const RING_LABEL = 'each row’s argmax (the key it attends most to)';

/** The options the three (T, T) maps share, for result r; the heads' maps ring each argmax. */
function mapOptions(r, title, argmaxKey) {
  const rings = argmaxKey ? { markCells: r[argmaxKey].map((c, t) => [t, c]) } : {};
  return {
    rows: r.T,
    cols: r.T,
    rowLabels: r.tokens,
    colLabels: r.tokens,
    title,
    shape: `(${r.T}, ${r.T})`,
    highlightRows: r.argmaxDiffRows,
    ...rings,
    ...(argmaxKey ? { markLabel: RING_LABEL } : {}),
  };
}

function attentionMaps(r) {
  return MAPS.map(([key, title, exportName, extra, argmaxKey]) =>
    heatmap({
      ...mapOptions(r, title, argmaxKey),
      highlightLabel: 'rows whose argmax differs',
      exportName,
      data: r[key],
      caption: captionOf(key),
      ...extra,
    }),
  );
}

function lesson1Figures(r) {
  const k = r.argmaxDiffRows.length;
  const rowsText = k ? r.argmaxDiffRows.map((t) => `${t} ‘${r.tokens[t]}’`).join(', ') : 'none';
  return [
    { key: 'maxGap', label: `${captionOf('max_gap')} (the largest weight gap)`, value: r.maxGap },
    {
      key: 'argmaxDiff',
      label: 'rows whose argmax differs',
      value: `${k} of ${r.T}`,
      note: k ? `rows ${rowsText}` : 'the two heads agree on every row',
    },
  ];
}

function argmaxTable(r) {
  return table({
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
    caption: `Each query token's most-attended key in the two heads (first maximum on ties, like np.argmax)`,
    numeric: [2, 4],
    stack: true,
  });
}

/**
 * The weights are random draws, not trained: the table's "attends most to" is about these
 * projections, not about language. Quotes the map's strongest row as the example.
 */
function untrainedNote(r) {
  const { query, key, weight } = r.strongest;
  return el('p', {
    className: 'note untrained-note',
    text: `These weights are random and untrained: Wq, Wk and Wv of both heads are fresh draws from the generator, not learned from text. So when ‘${r.tokens[query]}’ attends most to ‘${r.tokens[key]}’ in head A (weight ${fmt(weight, 4)}), that is a property of these random projections of random embeddings, not of English. A trained model's heads learn their patterns from data; what this lesson shows is only that two heads with different projections already read the same X differently.`,
  });
}

/** 'C = 64, hs = 16, seed 42 (default_rng)': what lesson 1 draws its heads with. */
const SETTING = `C = ${COURSE.C}, hs = ${COURSE.hs}, seed ${COURSE.seed} (${COURSE.rng})`;

function sentenceControl(sentence) {
  const input = textInput('l1-sentence', 'l1-error', { size: 60 });
  input.value = sentence;
  const err = errorLine('l1-error');
  const controls = el(
    'div',
    { className: 'controls' },
    field('Sentence', input, `1–${MAX_TOKENS} tokens; ${SETTING}`),
    err.element,
  );
  return { input, err, controls };
}

/** The sentence control's listeners: recompute lesson 1 when its text is a valid sentence. */
function listenSentence(ui, onTokens) {
  function recompute() {
    const text = ui.input.value;
    const c = checkSentence(text);
    if (c.error) {
      ui.err.set(c.error);
      ui.input.setAttribute('aria-invalid', 'true');
      return;
    }
    ui.err.clear();
    ui.input.removeAttribute('aria-invalid');
    onTokens(text, c.tokens);
  }
  ui.input.addEventListener('input', debounce(recompute, 150));
  ui.input.addEventListener('change', () => recompute());
}

/** What window.mhaPage.figures() reads of lesson 1 (the argmaxes and comparison: added keys). */
function lesson1FigureData(r) {
  const c = r.compare;
  return {
    tokens: [...r.tokens],
    A1: Array.from(r.A1),
    A2: Array.from(r.A2),
    maxGap: r.maxGap,
    argmaxDiffRows: [...r.argmaxDiffRows],
    argmax1: [...r.argmax1],
    argmax2: [...r.argmax2],
    compare: c && {
      heads: c.heads,
      hs: c.hs,
      singleArgmax: [...c.singleArgmax],
      fourArgmax: c.fourArgmax.map((a) => [...a]),
      distinct: [...c.distinct],
      disagreeRows: [...c.disagreeRows],
    },
  };
}

const HOVER_NOTE = `Hover a token (above) or a cell to highlight its row and column. Ringed cells: each row's argmax in that head. Outlined rows: the two heads' most-attended keys differ.`;

/**
 * Lesson 1 into `body`: the course's sentence, or (custom: lesson1Part of a notebook's arrays)
 * the student's X and two heads (no sentence control, no checkpoints: those are the course's).
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderLesson1({ mha, body, custom = null }) {
  const state = { sentence: DEFAULT_SENTENCE, r: null };
  state.r = custom
    ? lesson1FromArrays(mha, custom)
    : lesson1(mha, { tokens: checkSentence(state.sentence).tokens });
  const ui = custom ? null : sentenceControl(state.sentence);
  const chipsSlot = el('div', { className: 'chips-slot' });
  const maps = attentionMaps(state.r);
  const figs = figuresList();
  const argmaxSlot = el('div', { className: 'argmax-table' });
  const untrainedSlot = el('div');
  const compareSlot = el('div');
  const checks = custom ? null : checkpointBox('lesson1', state.r, { what: 'lesson 1' });
  const getScript = () => lesson1Script({ sentence: state.sentence, tokens: state.r.tokens });
  const script = numpyBlock(getScript, { what: 'lesson 1' });

  function highlight(t) {
    for (const h of maps) h.highlight(t === null ? -1 : t, t === null ? -1 : t);
  }
  function fill() {
    const r = state.r;
    chipsSlot.replaceChildren(tokenChips(r.tokens, r.ids, highlight));
    figs.set(lesson1Figures(r));
    argmaxSlot.replaceChildren(argmaxTable(r));
    untrainedSlot.replaceChildren(custom ? '' : untrainedNote(r));
    compareSlot.replaceChildren(compareSection(r).element);
    checks?.update(r);
    // another sentence than the course's: its numbers are not the course's to compare with
    course.update(
      state.sentence === DEFAULT_SENTENCE || custom
        ? { maxGap: r.maxGap, argmaxDiff: r.argmaxDiffRows.length, T: r.T }
        : { otherInput: 'another sentence than the course’s: edit it back to compare' },
    );
    script.refresh();
  }
  if (ui) {
    listenSentence(ui, (text, tokens) => {
      state.sentence = text;
      state.r = lesson1(mha, { tokens });
      MAPS.forEach(([key, title, , , argmaxKey], i) =>
        maps[i].update(state.r[key], mapOptions(state.r, title, argmaxKey)),
      );
      fill();
    });
  }

  const course = courseBox('lesson1', { custom: !!custom });
  fill();
  body.append(
    course.element,
    ...(ui ? [ui.controls] : []),
    chipsSlot,
    el('p', { className: 'note', text: HOVER_NOTE }),
    el('div', { className: 'figure-grid' }, ...maps.map((m) => m.element)),
    figs.element,
    ...(checks ? [checks.element] : []),
    untrainedSlot,
    argmaxSlot,
    goDeeper(
      `one head of hs = ${COURSE.C} against ${COURSE.heads} heads of hs = ${COURSE.hs}`,
      compareSlot,
    ),
    script.element,
    // the .npz of the course's arrays: not offered for a notebook's (the student has them)
    ...(custom
      ? []
      : [
          downloadsRow(
            arraysButton(1, () => lesson1Arrays(mha, { tokens: state.r.tokens })).element,
          ),
        ]),
  );
  return { figures: () => lesson1FigureData(state.r), script: getScript };
}
