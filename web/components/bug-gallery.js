// bug-gallery.js - one case of "A gallery of common bugs" (web/model/bug-gallery.js) on screen: the
// student's line, the course's, the check's row for it as the check's table words it (status, max
// abs and norm rel error, first differing entry, diagnosis), and the mistaken tensor beside the
// course's (two heatmaps on one scale, built lazily), or their numbers for a scalar. And the list
// of the catalogue's records with no line to draw, with why. Every text goes in with textContent;
// the diagnosis id stays data (data-mistake), as in the check's table.

import { el } from './dom.js';
import { heatmap } from './heatmap.js';
import { STATUS_TEXT, diagnosisText, firstDifferenceText } from '../model/custom-arrays.js';
import { galleryFigure } from '../model/bug-gallery.js';
import { fmt, shapeText } from '../model/format.js';
import { positionLabels } from '../model/labels.js';

const num3 = (v) => (v === null || v === undefined ? '—' : fmt(v, 3));

/** A label and its text, as one line of a case. */
const line = (label, ...rest) =>
  el('p', {}, el('span', { className: 'label', text: label }), ...rest);

/** The heatmap options of one of the two maps of a case. */
function mapOptions(c, fig, view, who) {
  const { rows, cols } = view;
  const T = c.shape.length >= 3 ? c.shape[c.shape.length - 2] : 0;
  let cellSize = 30;
  if (cols >= 32) cellSize = 12;
  else if (cols >= 16) cellSize = 14;
  const square = rows === cols && rows === T;
  return {
    data: view.data,
    rows,
    cols,
    rowLabels: rows === T ? positionLabels(T) : undefined,
    colLabels: square ? positionLabels(T) : undefined,
    rowAxis: rows === T ? 'token (row)' : 'row',
    colAxis: square ? 'key (column)' : 'column',
    title: `${who}: ${fig.name}${view.where}`,
    shape: `of ${shapeText(c.shape)}`,
    scale: fig.scale,
    maxAbs: fig.scale === 'diverging' ? fig.maxAbs || 1 : undefined,
    numbers: rows * cols <= 36 ? 'auto' : false,
    legendLabel: fig.name,
    cellSize,
    exportName: `bug-gallery-${c.id}-${who === 'yours' ? 'yours' : 'course'}`,
  };
}

/** The mistaken map beside the course's, or the two numbers of a scalar. */
function caseFigures(c) {
  const fig = galleryFigure(c);
  if (!fig) {
    // (the loss is the gallery's own: its target is made so that the gradient is lesson 4's dY,
    // so neither number is an MSE the course prints: said before the numbers)
    const what =
      c.site === 'loss'
        ? 'The loss against this gallery’s made-up target (built so that its gradient is ' +
          'lesson 4’s dY; not a loss the course prints)'
        : c.site;
    return el(
      'p',
      { className: 'bug-scalar' },
      `${what}: your line gives ${num3(c.mistaken?.[0])}, the right line ${num3(c.right?.[0])}`,
    );
  }
  const maps = [
    heatmap(mapOptions(c, fig, fig.yours, 'yours')),
    heatmap(mapOptions(c, fig, fig.course, 'the course’s')),
  ];
  // wide, thin maps ((T, C) = (6, 64)) one above the other, at the width of the card
  const layout = fig.yours.cols >= 32 ? 'cols-1' : 'cols-2';
  return el('div', { className: `figure-grid ${layout} bug-maps` }, ...maps.map((m) => m.element));
}

/** "max |yours − the course’s| = 5.91; ‖yours‖ / ‖the course’s‖ = 1.03 (…)" */
export function numbersText({ maxAbs, ratio, nonFinite }) {
  const parts = [`max |yours − the course’s| = ${num3(maxAbs)}`];
  if (ratio !== null) parts.push(`‖yours‖ / ‖the course’s‖ = ${num3(ratio)}`);
  let text = parts.join('; ');
  if (nonFinite) text += ` (over the finite entries: ${nonFinite} are −∞ or NaN in one of them)`;
  return `${text}.`;
}

/** What the check says of the case: its row (status, errors, first difference, diagnosis). */
function checkLines(c) {
  const r = c.row;
  if (!r) return [el('p', { className: 'error', text: 'The check found no difference.' })];
  const status = el('span', {
    className: `status status-${r.status}`,
    text: STATUS_TEXT[r.status],
  });
  const errors = ` · max abs error ${num3(r.maxAbs)} · norm rel error ${num3(r.normRel)}`;
  const out = [line(`The check’s row for ${r.name}: `, status, errors)];
  if (r.first) {
    out.push(line('first differing entry: ', el('code', { text: firstDifferenceText(r) })));
  }
  if (r.diagnosis) out.push(line('diagnosis: ', diagnosisText(r.diagnosis)));
  const { follows } = c.summary;
  if (follows) {
    const rows = follows === 1 ? 'row differs' : 'rows differ';
    out.push(el('p', { className: 'note', text: `${follows} later ${rows} only because of it.` }));
  }
  return out;
}

/** One case of the gallery (galleryCase's result): an <article> headed by the student's line. */
export function galleryCard(c, index) {
  const headingId = `bug-${c.id}-h`;
  const card = el('article', {
    className: 'bug-case',
    attrs: { 'aria-labelledby': headingId },
    dataset: { mistake: c.id, site: c.site, recognised: c.recognised ? '1' : '0' },
  });
  card.append(
    el('h4', { id: headingId }, `${index + 1}. `, el('code', { text: c.what })),
    line('The course: ', el('code', { text: c.courseLine })),
  );
  if (c.error) {
    card.append(
      el('p', { className: 'error', text: `This case could not be computed: ${c.error}` }),
    );
    return card;
  }
  card.append(
    el(
      'div',
      { className: 'bug-check', attrs: { role: 'group', 'aria-label': 'What the check says' } },
      ...checkLines(c),
    ),
    caseFigures(c),
    el('p', { className: 'note bug-numbers', text: numbersText(c.numbers) }),
  );
  return card;
}

const REASON_HEADINGS = {
  analysis: 'Found by analysing your own arrays',
  wording: 'How the check words a result',
  edit: 'Edits of the course’s lines and of the loop, searched on your arrays',
  sizes: 'No step at the course’s sizes',
};

/** The records with no line to draw, grouped by why: headings, the why, their messages. */
export function textOnlyList(textOnly) {
  const box = el('div', { className: 'bug-text-only' });
  for (const reason of Object.keys(REASON_HEADINGS)) {
    const items = textOnly.filter((t) => t.reason === reason);
    if (!items.length) continue;
    box.append(
      el('h5', { text: `${REASON_HEADINGS[reason]} (${items.length})` }),
      el('p', { className: 'note', text: `Not drawn: ${items[0].why}.` }),
      el('ul', {}, ...items.map((t) => el('li', { dataset: { mistake: t.id }, text: t.message }))),
    );
  }
  return box;
}
