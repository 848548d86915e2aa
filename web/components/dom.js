// dom.js - the one DOM/SVG helper module of the page: HTML elements (el), SVG
// elements (svgEl), and the typographic minus used wherever a number is shown.
// User text only ever goes through textContent / createTextNode.

export const SVG_NS = 'http://www.w3.org/2000/svg';

/** U+2212, the minus sign of tables, ticks and cells (a hyphen is too short beside digits). */
export const MINUS = '\u2212';

/** An SVG element with attributes (values set as strings). */
export function svgEl(name, attrs) {
  const e = document.createElementNS(SVG_NS, name);
  if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}

function setAll(e, entries, set) {
  if (entries) for (const [k, v] of Object.entries(entries)) set(k, v);
}

/**
 * el('div', { className, id, text, attrs: {...}, dataset: {...}, on: { click: fn } }, ...children)
 * Children: Nodes, strings (as text), arrays, null/undefined (skipped).
 */
export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  const { className, id, text, attrs, dataset, on, style, ...rest } = props ?? {};
  if (className) e.className = className;
  if (id) e.id = id;
  setAll(e, attrs, (k, v) => {
    if (v !== undefined && v !== null && v !== false) {
      e.setAttribute(k, v === true ? '' : String(v));
    }
  });
  setAll(e, dataset, (k, v) => (e.dataset[k] = String(v)));
  setAll(e, on, (k, f) => e.addEventListener(k, f));
  setAll(e, style, (k, v) => e.style.setProperty(k, v));
  for (const [k, v] of Object.entries(rest)) e[k] = v;
  if (text !== undefined) e.textContent = String(text);
  append(e, children);
  return e;
}

function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}
