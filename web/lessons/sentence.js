// sentence.js - "The Lantern Bay sentence": tokens, embedding rows, X, and how to rebuild X in
// NumPy.

import { el } from '../components/dom.js';
import { figuresList } from '../components/figures.js';
import { codeDetails } from '../components/code.js';
import { tokenChips } from '../components/token-chips.js';
import { field } from '../components/controls.js';
import { numList } from '../components/numbers.js';
import { lazyHeatmap } from '../components/lazy-figure.js';
import { DEFAULT_SENTENCE, tokenize } from '../model/tokens.js';
import { sentenceInput } from '../model/input.js';
import { xSnippet } from '../model/numpy-scripts.js';

const C = 64;
const SEED = 42;

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
      '. The page takes 1 to 64 tokens.',
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
  return lazyHeatmap({
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
    `off by default. Math.sin and Math.cos may differ in the last bit between NumPy, JavaScript engines and browsers, so with it on X agrees with NumPy to about 1e-16 relative, not bit for bit.`,
  );
  return { box, field: f };
}

function sentenceFigures(tokens, inp) {
  return [
    { label: 'tokens T', value: tokens.length },
    { label: 'distinct words V (rows of E)', value: inp.vocab.length },
    { label: 'X.shape', value: `(1, ${tokens.length}, ${C})` },
    { label: 'X[0, 0, :4]', value: numList(Array.from(inp.X.subarray(0, 4)), 8) },
  ];
}

export function renderSentence({ mha, body }) {
  const sentence = DEFAULT_SENTENCE;
  const tokens = tokenize(sentence);
  const state = { pe: false, inp: sentenceInput(mha, tokens, { C, seed: SEED, pe: false }) };
  const rules = rulesList();
  const chips = tokenChips(tokens, state.inp.ids, (t) => hm.highlight(t === null ? -1 : t, -1));
  const pe = peCheckbox();
  const hm = xHeatmap(state.inp.X, tokens);
  const figs = figuresList();
  const snippet = codeDetails(
    'How X is built: the NumPy snippet that rebuilds X exactly',
    xSnippet({ sentence, tokens, C, seed: SEED, pe: false }),
    { className: 'how-x' },
  );
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
    rules,
    el('div', { className: 'controls' }, pe.field),
    hm.element,
    figs.element,
    snippet.element,
  );
  return { figures: () => ({ tokens, pe: state.pe }) };
}
