// code.js - code blocks: "Copy as NumPy" with the script behind a <details>, and a <details>
// holding a code block. A block that may scroll sideways can take the keyboard focus (tabindex
// 0) and is a named region, so a keyboard user can scroll it too.

import { el } from './dom.js';
import { copyButton } from './export.js';

/** <pre class="numpy"><code></code></pre>, focusable and named `label` (scrolls sideways). */
function scrollablePre(code, label) {
  return el(
    'pre',
    { className: 'numpy', tabIndex: 0, attrs: { role: 'region', 'aria-label': label } },
    code,
  );
}

/** "Copy as NumPy" button plus a collapsible view of the same script. */
export function numpyBlock(getScript, { what = 'this lesson' } = {}) {
  const code = el('code', { className: 'language-python' });
  const details = el(
    'details',
    { className: 'numpy-script' },
    el('summary', { text: 'Show the NumPy script' }),
    scrollablePre(code, `NumPy script of ${what}`),
  );
  const fill = () => {
    code.textContent = getScript();
  };
  details.addEventListener('toggle', () => {
    if (details.open) fill();
  });
  const btn = copyButton('Copy as NumPy', () => getScript());
  btn.classList.add('copy-numpy');
  btn.setAttribute(
    'aria-label',
    `Copy as NumPy: a runnable script that prints the numbers of ${what}`,
  );
  const note = el('span', {
    className: 'note',
    text: 'a complete script for python3 + numpy that prints the numbers shown here',
  });
  const box = el(
    'div',
    { className: 'numpy-block' },
    el('div', { className: 'actions' }, btn, note),
    details,
  );
  return {
    element: box,
    refresh() {
      if (details.open) fill();
    },
  };
}

/** A <details> with a code block (static or refreshed with set()). */
export function codeDetails(summary, text, { open = false, className = '' } = {}) {
  const code = el('code');
  code.textContent = text;
  const d = el(
    'details',
    { className: `code-details ${className}`.trim(), open },
    el('summary', { text: summary }),
    scrollablePre(code, summary),
  );
  return {
    element: d,
    set(t) {
      code.textContent = t;
    },
  };
}
