// controls.js - form controls of the lessons: a labelled field, an error line, a select of
// numbered items, and a debounce for live inputs.

import { el } from './dom.js';

/**
 * A labelled control for a .controls row: <label>text <input></label> (checkbox: box first, then
 * text, on one line). With a hint: [label, <span class="note">hint</span>] (el() and the
 * .controls row take arrays).
 */
export function field(labelText, control, hint) {
  const isBox = control.type === 'checkbox';
  const text = el('span', { className: 'label-text', text: labelText });
  const lab = el(
    'label',
    { attrs: { for: control.id } },
    isBox ? [control, text] : [text, control],
  );
  if (isBox) lab.classList.add('control-inline');
  if (control.type === 'text') lab.classList.add('grow');
  if (!hint) return lab;
  return [lab, el('span', { className: 'note hint', text: hint })];
}

/** An error line (class "error", role="alert", hidden while empty) next to controls. */
export function errorLine(id) {
  const p = el('p', { id, className: 'error', attrs: { role: 'alert' } });
  return {
    element: p,
    set(msg) {
      const lines = Array.isArray(msg) ? msg : [msg];
      p.replaceChildren();
      lines.forEach((m, i) => {
        if (i) p.append(' ', el('br'));
        p.append(document.createTextNode(m));
      });
    },
    clear() {
      p.replaceChildren();
    },
    get text() {
      return p.textContent;
    },
  };
}

/** <select id=id> of n options valued '0' ... 'n-1', shown as `${word} ${i}` ('head 0'). */
export function indexSelect(id, n, word) {
  return el(
    'select',
    { id },
    ...Array.from({ length: n }, (_, i) =>
      el('option', { value: String(i), text: `${word} ${i}` }),
    ),
  );
}

/** A text input of the lessons (no autocomplete or spellcheck), described by its error line. */
export function textInput(id, describedBy, attrs = {}) {
  return el('input', {
    id,
    attrs: {
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': describedBy,
      ...attrs,
    },
  });
}

/** A button of the lessons (type="button"). */
export function button(id, text, className = 'btn') {
  return el('button', { id, type: 'button', className, text });
}

/** Debounce f by ms; g.flush(...args) runs f at once (and drops a pending call). */
export function debounce(f, ms) {
  let timer = 0;
  const g = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => f(...args), ms);
  };
  g.flush = (...args) => {
    clearTimeout(timer);
    f(...args);
  };
  return g;
}
