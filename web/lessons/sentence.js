// sentence.js - "The Lantern Bay sentence": tokens, embedding rows, X, and (collapsed, in "How X
// is built") the rules of tokens, vocabulary and the random stream and how to rebuild X in NumPy.

import { COURSE } from '../model/defaults.js';
import { el } from '../components/dom.js';
import { figuresList } from '../components/figures.js';
import { codeDetails } from '../components/code.js';
import { tokenChips } from '../components/token-chips.js';
import { field } from '../components/controls.js';
import { numList } from '../components/numbers.js';
import { heatmap } from '../components/heatmap.js';
import { DEFAULT_SENTENCE, MAX_TOKENS, tokenize } from '../model/tokens.js';
import { MAX_PG_TOKENS } from '../model/settings.js';
import { sentenceInput } from '../model/input.js';
import { xSnippet } from '../model/numpy-scripts.js';
import { AGREEMENT, PE_AGREEMENT } from '../model/agreement.js';

const C = COURSE.C;
const SEED = COURSE.seed;

/** The rules of the page: tokens, vocabulary, the one random stream, X. */
function rulesList() {
  const code = (text) => el('code', { text });
  return el(
    'ol',
    { className: 'rules' },
    el(
      'li',
      {},
      `Tokens: words are runs of letters, digits and apostrophes; every other non-space character (punctuation, each emoji) is a token of its own; spaces only separate. In Python: `,
      code('re.findall(r"(?:[^\\W_]|\')+|\\S", sentence)'),
      `. Lesson 1’s sentence field takes 1 to ${MAX_TOKENS} tokens (its maps are T×T), the playground’s up to ${MAX_PG_TOKENS}.`,
    ),
    el(
      'li',
      {},
      'Vocabulary: the distinct lower-cased tokens in order of first appearance; token t uses row ',
      code('vocab.index(tokens[t].lower())'),
      ' of E, so the same word in any case gets the same row.',
    ),
    el(
      'li',
      {},
      'One random stream per view, used in a fixed order: ',
      code('rng = np.random.default_rng(seed)'),
      ' (or, for the legacy generator, ',
      code('np.random.seed(seed)'),
      ' and ',
      code('np.random.randn'),
      '); first ',
      code('E = rng.standard_normal((V, C))'),
      ", then each lesson's weights ",
      code('rng.standard_normal(shape) / np.sqrt(C)'),
      ', then (lesson 5) the target.',
    ),
    el(
      'li',
      {},
      code('X = E[ids][None]'),
      ' has shape (1, T, C); with the positional encoding on, ',
      code('X += PE'),
      ' where PE[t, 2i] = sin(t / 10000^(2i/C)) and PE[t, 2i+1] = cos(t / 10000^(2i/C)).',
    ),
  );
}

function xHeatmap(X, tokens) {
  return heatmap({
    data: X,
    rows: tokens.length,
    cols: C,
    rowLabels: tokens,
    rowAxis: 'token (row)',
    colAxis: 'feature (column)',
    title: 'X: the embedding row of each token',
    shape: `(1, ${tokens.length}, ${C})`,
    scale: 'diverging',
    numbers: false,
    exportName: 'lantern-bay-X',
    legendLabel: 'value of X',
  });
}

function peCheckbox() {
  const box = el('input', { id: 'x-pe', attrs: { type: 'checkbox' } });
  const f = field(
    'add the sinusoidal positional encoding',
    box,
    'off by default (what it changes in NumPy: “How X is built” below)',
  );
  return { box, field: f };
}

/** How X compares with NumPy's: a random draw without PE, computed with it. */
function agreementNote() {
  return el(
    'p',
    { className: 'note' },
    `The snippet rebuilds X in NumPy. With the positional encoding off, X is a random draw: ${AGREEMENT.exact.short}. ${PE_AGREEMENT}`,
  );
}

/**
 * "How X is built", collapsed: the rules (tokens, vocabulary, the one random stream, X and PE),
 * how X compares with NumPy's, and the NumPy snippet that rebuilds it. set(code) replaces the
 * snippet.
 */
function howX(code) {
  const details = codeDetails(
    'How X is built: tokens, vocabulary, the random stream, the NumPy snippet',
    code,
    { className: 'how-x' },
  );
  details.element.querySelector('summary').after(rulesList(), agreementNote());
  return details;
}

function sentenceFigures(tokens, inp) {
  return [
    { label: 'tokens T', value: tokens.length },
    { label: 'distinct words V (rows of E)', value: inp.vocab.length },
    { label: 'X.shape', value: `(1, ${tokens.length}, ${C})` },
    { label: 'X[0, 0, :4]', value: numList(Array.from(inp.X.subarray(0, 4)), 8) },
  ];
}

/**
 * The sentence into `body`: its tokens, the embedding rows and X (with the positional encoding
 * one click away).
 * @param {import('./index.js').SectionContext} ctx
 * @returns {import('./index.js').SectionView}
 */
export function renderSentence({ mha, body }) {
  const sentence = DEFAULT_SENTENCE;
  const tokens = tokenize(sentence);
  const state = { pe: false, inp: sentenceInput(mha, tokens, { C, seed: SEED, pe: false }) };
  const chips = tokenChips(tokens, state.inp.ids, (t) => hm.highlight(t === null ? -1 : t, -1));
  const pe = peCheckbox();
  const hm = xHeatmap(state.inp.X, tokens);
  const figs = figuresList();
  const snippet = howX(xSnippet({ sentence, tokens, C, seed: SEED, pe: false }));
  figs.set(sentenceFigures(tokens, state.inp));

  pe.box.addEventListener('change', () => {
    state.pe = pe.box.checked;
    state.inp = sentenceInput(mha, tokens, { C, seed: SEED, pe: state.pe });
    const title = state.pe ? 'X = E[ids] + PE' : 'X: the embedding row of each token';
    hm.update(state.inp.X, { title });
    snippet.set(xSnippet({ sentence, tokens, C, seed: SEED, pe: state.pe }));
    figs.set(sentenceFigures(tokens, state.inp));
  });

  body.append(
    el(
      'p',
      { className: 'sentence-display' },
      el('span', { className: 'label', text: 'Default sentence: ' }),
      el('q', { text: sentence }),
    ),
    chips,
    el('div', { className: 'controls' }, pe.field),
    hm.element,
    figs.element,
    snippet.element,
  );
  return { figures: () => ({ tokens, pe: state.pe }) };
}
