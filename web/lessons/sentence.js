// sentence.js - "The Lantern Bay sentence": tokens, embedding rows, X, and how to rebuild X in NumPy.

import { DEFAULT_SENTENCE, tokenize, buildInput } from '../model.js';
import { xSnippet } from './numpy.js';
import { el, figuresList, codeDetails, tokenChips, field, numList, lazyHeatmap } from './common.js';

export function renderSentence({ mha, body }) {
  const sentence = DEFAULT_SENTENCE;
  const tokens = tokenize(sentence);
  const C = 64,
    seed = 42;
  let pe = false;

  function compute() {
    const rng = mha.rng(seed, 'default_rng');
    try {
      return buildInput(rng, tokens, C, { pe });
    } finally {
      rng.free();
    }
  }
  let inp = compute();

  const rules = el(
    'ol',
    { className: 'rules' },
    el(
      'li',
      {},
      'Tokens: words are runs of letters, digits and apostrophes; every other non-space character (punctuation, each emoji) is a token of its own; spaces only separate. In Python: ',
      el('code', { text: 're.findall(r"(?:[^\\W_]|\')+|\\S", sentence)' }),
      '. The page takes 1 to 64 tokens.',
    ),
    el(
      'li',
      {},
      'Vocabulary: the distinct lower-cased tokens in order of first appearance; token t uses row ',
      el('code', { text: 'vocab.index(tokens[t].lower())' }),
      ' of E, so the same word in any case gets the same row.',
    ),
    el(
      'li',
      {},
      'One random stream per view, used in a fixed order: ',
      el('code', { text: 'rng = np.random.default_rng(seed)' }),
      ' (or, for the legacy generator, ',
      el('code', { text: 'np.random.seed(seed)' }),
      ' and ',
      el('code', { text: 'np.random.randn' }),
      '); first ',
      el('code', { text: 'E = rng.standard_normal((V, C))' }),
      ", then each lesson's weights ",
      el('code', { text: 'rng.standard_normal(shape) / np.sqrt(C)' }),
      ', then (lesson 5) the target.',
    ),
    el(
      'li',
      {},
      el('code', { text: 'X = E[ids][None]' }),
      ' has shape (1, T, C); with the positional encoding on, ',
      el('code', { text: 'X += PE' }),
      ' where PE[t, 2i] = sin(t / 10000^(2i/C)) and PE[t, 2i+1] = cos(t / 10000^(2i/C)).',
    ),
  );

  const chips = tokenChips(tokens, inp.ids, (t) => hm.highlight(t === null ? -1 : t, -1));
  const peBox = el('input', { id: 'x-pe', attrs: { type: 'checkbox' } });
  const peField = field(
    'add the sinusoidal positional encoding',
    peBox,
    'off by default. Math.sin and Math.cos may differ in the last bit between NumPy, JavaScript engines and browsers, so with it on X agrees with NumPy to about 1e-16 relative, not bit for bit.',
  );

  const hm = lazyHeatmap({
    data: inp.X,
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

  const figs = figuresList();
  const snippet = codeDetails(
    'How X is built: the NumPy snippet that rebuilds X exactly',
    xSnippet({ sentence, tokens, C, seed, pe }),
    { className: 'how-x' },
  );

  function setFigures() {
    figs.set([
      { label: 'tokens T', value: tokens.length },
      { label: 'distinct words V (rows of E)', value: inp.vocab.length },
      { label: 'X.shape', value: `(1, ${tokens.length}, ${C})` },
      { label: 'X[0, 0, :4]', value: numList(Array.from(inp.X.subarray(0, 4)), 8) },
    ]);
  }
  setFigures();

  peBox.addEventListener('change', () => {
    pe = peBox.checked;
    inp = compute();
    hm.update(inp.X, { title: pe ? 'X = E[ids] + PE' : 'X: the embedding row of each token' });
    snippet.set(xSnippet({ sentence, tokens, C, seed, pe }));
    setFigures();
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
    el('div', { className: 'controls' }, peField),
    hm.element,
    figs.element,
    snippet.element,
  );
  return { figures: () => ({ tokens, pe }) };
}
