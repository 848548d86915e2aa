// lesson1-compare.js - lesson 1's comparison at equal parameter count: one head of hs = C (one
// attention distribution per query) against four heads of hs = C / 4 (four per query), on the
// same X with the same Wq, Wk, Wv (each (C, C)); see oneVsFour in web/model/lesson1.js.

import { el } from '../components/dom.js';
import { table } from '../components/tables.js';
import { heatmap } from '../components/heatmap.js';
import { COMPARE_SEED } from '../model/lesson1.js';

/** The rings of a (T, T) map: each row's argmax. */
const rings = (argmax) => argmax.map((c, t) => [t, c]);

const RING_LABEL = 'each row’s argmax (the key it attends most to)';

/** The options of one of the comparison's (T, T) maps. */
function mapOptions(r, data, argmax, { title, shape, exportName }) {
  return {
    data,
    rows: r.T,
    cols: r.T,
    rowLabels: r.tokens,
    colLabels: r.tokens,
    title,
    shape,
    scale: 'unit',
    exportName,
    markCells: rings(argmax),
    markLabel: RING_LABEL,
  };
}

/** The single head's map and the four heads' maps: [{ key, options }]. */
function compareMaps(r) {
  const c = r.compare;
  const maps = [
    mapOptions(r, c.single, c.singleArgmax, {
      title: `one head, hs = ${r.C}`,
      shape: `(${r.T}, ${r.T})`,
      exportName: 'lesson1-one-head',
    }),
  ];
  for (let i = 0; i < c.heads; i++) {
    const data = c.four.subarray(i * r.T * r.T, (i + 1) * r.T * r.T);
    maps.push(
      mapOptions(r, data, c.fourArgmax[i], {
        title: `head ${i} of ${c.heads}, hs = ${c.hs}`,
        shape: `att[0, ${i}]: (${r.T}, ${r.T})`,
        exportName: `lesson1-four-heads-${i}`,
      }),
    );
  }
  return maps;
}

/** Per query row: the single head's argmax, each of the four heads', how many keys they name. */
function compareTable(r) {
  const c = r.compare;
  const key = (k) => `${k} ${r.tokens[k]}`;
  const heads = c.fourArgmax.map((_, i) => `head ${i} (hs = ${c.hs})`);
  return table({
    headers: [
      'query (row)',
      `one head (hs = ${r.C}) attends most to`,
      ...heads,
      `different keys among the ${c.heads}`,
    ],
    rows: r.tokens.map((tok, t) => [
      `${t} ${tok}`,
      key(c.singleArgmax[t]),
      ...c.fourArgmax.map((a) => key(a[t])),
      String(c.distinct[t]),
    ]),
    caption: `Each query's argmax: one head of hs = ${r.C} against ${c.heads} heads of hs = ${c.hs} (first maximum on ties, like np.argmax)`,
    numeric: [c.heads + 2],
    stack: true,
  });
}

/** The conclusion, from the numbers: on how many rows the four heads disagree. */
export function compareConclusion(r) {
  const c = r.compare;
  const k = c.disagreeRows.length;
  const off = c.offSingle.filter((n) => n > 0).length;
  const single = `the one head of hs = ${r.C} names a single key for every query`;
  if (!k) {
    return `On all ${r.T} rows the ${c.heads} heads of hs = ${c.hs} attend most to the same key, so here the split changed the weights but not the argmax; ${single}.`;
  }
  const rows = c.disagreeRows.map((t) => `${t} ‘${r.tokens[t]}’`).join(', ');
  return `On ${k} of ${r.T} rows (${rows}) the ${c.heads} heads of hs = ${c.hs} do not all attend most to the same key, and on ${off} of ${r.T} rows at least one of them attends most to another key than the one head does: at the same parameter count, ${single}, while the ${c.heads} heads can name up to ${c.heads}.`;
}

/** Where the comparison's weights come from, in NumPy. */
function weightsText(r) {
  const draw = 'Wq, Wk, Wv = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(3))';
  return r.custom
    ? `With your X, the comparison's weights are drawn with rng = np.random.default_rng(${COMPARE_SEED}); ${draw}.`
    : `Its weights are drawn from the same rng after head B's: ${draw}.`;
}

function explainText(r) {
  const c = r.compare;
  return `Both read the same X with the same Wq, Wk and Wv, each (C, C) = (${r.C}, ${r.C}): ${3 * r.C * r.C} projection weights either way. The one head uses all ${r.C} columns at once (hs = ${r.C}) and gives each query one attention distribution; the ${c.heads} heads cut the columns into ${c.heads} blocks of ${c.hs} (head i: columns ${c.hs}·i to ${c.hs}·i + ${c.hs - 1}), each with its own softmax, and give each query ${c.heads}. ${weightsText(r)}`;
}

/**
 * The comparison's part of lesson 1 for result r (lesson1 or lesson1FromArrays): { element } (a
 * note when r.compare is null: C not divisible by 4).
 */
export function compareSection(r) {
  const head = el('h3', {
    text: `One head of hs = ${r.C} or ${r.compare?.heads ?? 4} heads, at equal parameter count`,
  });
  if (!r.compare) {
    const text = `C = ${r.C} does not divide into 4 heads: no comparison for these arrays.`;
    return { element: el('div', { className: 'l1-compare' }, head, el('p', { text })) };
  }
  const maps = compareMaps(r).map((o) => heatmap(o));
  const element = el(
    'div',
    { className: 'l1-compare' },
    head,
    el('p', { className: 'note', text: explainText(r) }),
    el('div', { className: 'figure-grid cols-2' }, ...maps.map((m) => m.element)),
    el('p', { className: 'l1-compare-conclusion', text: compareConclusion(r) }),
    el('div', { className: 'argmax-table' }, compareTable(r)),
  );
  return { element };
}
