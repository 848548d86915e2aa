// check-input.js - the inputs of the notebook check: a drop zone that is also a button opening
// the file picker (.npz / .npy, several files), a paste box for one array as text with its name,
// and the list of loaded arrays (name, shape, dtype, source, a remove button). Each control has
// its own error line (role="alert") right after it; every text is set with textContent.

import { el } from './dom.js';
import { errorLine, field, textInput, button } from './controls.js';
import { table, formatShape } from './tables.js';

/**
 * The drop zone and its hidden <input type="file">: a click, Enter or Space on the zone opens the
 * picker; files dropped on it or picked go to onFiles(File[]). Returns { element, input, zone,
 * err }.
 */
export function fileDrop({ id, onFiles }) {
  const errId = `${id}-error`;
  const input = el('input', {
    id,
    attrs: { type: 'file', multiple: true, accept: '.npz,.npy', hidden: true, tabindex: -1 },
  });
  const zone = el(
    'button',
    {
      id: `${id}-zone`,
      type: 'button',
      className: 'drop-zone',
      attrs: { 'aria-describedby': errId },
    },
    el('span', { className: 'drop-zone-title', text: 'Drop .npz or .npy files here' }),
    el('span', { className: 'drop-zone-hint', text: 'or press to choose files (several at once)' }),
  );
  const err = errorLine(errId);
  zone.addEventListener('click', () => input.click());
  input.addEventListener('change', () => {
    const files = [...(input.files ?? [])];
    input.value = ''; // the same file picked again fires change again
    if (files.length) onFiles(files);
  });
  const over = (on) => (e) => {
    e.preventDefault();
    zone.classList.toggle('is-over', on);
  };
  zone.addEventListener('dragenter', over(true));
  zone.addEventListener('dragover', over(true));
  zone.addEventListener('dragleave', over(false));
  zone.addEventListener('drop', (e) => {
    over(false)(e);
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length) onFiles(files);
  });
  const element = el('div', { className: 'file-drop' }, input, zone, err.element);
  return { element, input, zone, err };
}

/**
 * One array as text (print(repr(a)) or print(a)) with its name and the dtype it was computed in
 * (repr says float32 itself; print does not): onAdd(name, text, computedIn) when "Add this array"
 * is pressed, computedIn '' (as printed), 'float32' or 'float16'. Returns { element, name, text,
 * err, clear() }.
 */
export function pasteBox({ id, onAdd }) {
  const errId = `${id}-error`;
  const name = textInput(`${id}-name`, errId, { placeholder: 'e.g. att', maxlength: 200 });
  const text = el('textarea', {
    id: `${id}-text`,
    attrs: {
      rows: 5,
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: 'array([[0.1234, 0.5678], …])',
      'aria-describedby': errId,
    },
  });
  const computed = el(
    'select',
    { id: `${id}-dtype` },
    el('option', { attrs: { value: '' }, text: 'float64 (or as repr says)' }),
    el('option', { attrs: { value: 'float32' }, text: 'float32' }),
    el('option', { attrs: { value: 'float16' }, text: 'float16' }),
  );
  const add = button(`${id}-add`, 'Add this array');
  const err = errorLine(errId);
  add.addEventListener('click', () => onAdd(name.value, text.value, computed.value));
  const element = el(
    'div',
    { className: 'paste-box' },
    el('div', { className: 'controls' }, field('array name', name), field('computed in', computed)),
    el(
      'label',
      { className: 'paste-label', attrs: { for: text.id } },
      'the array as NumPy prints it',
    ),
    text,
    el('div', { className: 'actions' }, add),
    err.element,
  );
  return {
    element,
    name,
    text,
    err,
    clear() {
      name.value = '';
      text.value = '';
    },
  };
}

/**
 * The loaded arrays as a table (name, shape, dtype, from, a Remove button each); onRemove(key).
 * An empty list gives a one-line note instead.
 */
export function arrayList(list, onRemove) {
  if (!list.length) {
    return el('p', { className: 'note', text: 'No arrays loaded yet.' });
  }
  const rows = list.map((a) => {
    const remove = el('button', {
      type: 'button',
      className: 'btn btn-small',
      text: 'Remove',
      attrs: { 'aria-label': `Remove ${a.name}` },
      on: { click: () => onRemove(a.key) },
    });
    return [
      a.name,
      el('code', { className: 'shape', text: formatShape(a.shape) }),
      a.printedDtype ? `text (${a.printedDtype})` : a.dtype,
      a.source,
      remove,
    ];
  });
  return table({
    headers: ['name', 'shape', 'dtype', 'from', 'remove'],
    rows,
    caption: `Loaded arrays (${list.length})`,
    className: 'notebook-arrays',
  });
}
