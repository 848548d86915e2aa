// export.js - downloads (CSV, SVG, PNG, bytes such as .npy) and a copy-to-clipboard button. No
// network, no eval; works over http and from file:// (Blob URLs + <a download>; PNGs drawn on a
// canvas).

import { el } from './dom.js';

/** The page's font stack (the figures' SVG and canvas text). */
export const FONT_STACK = [
  'system-ui',
  '-apple-system',
  '"Segoe UI"',
  'Roboto',
  '"Helvetica Neue"',
  'Arial',
  '"Noto Sans"',
  '"Liberation Sans"',
  'sans-serif',
].join(', ');

/** A safe download file name: keeps letters, digits, '.', '_' and '-'. */
export function safeFilename(name, fallback = 'figure') {
  const s = String(name ?? '')
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return s || fallback;
}

function withExt(filename, ext) {
  const base = safeFilename(String(filename ?? '').replace(new RegExp(`\\.${ext}$`, 'i'), ''));
  return `${base}.${ext}`;
}

/** Save a Blob under `filename` (a temporary <a download> with a Blob URL). */
export function downloadBlob(filename, blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // revoke later: the download must have started reading the blob
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

/** Download text (CSV, scripts, ...). */
export function downloadText(filename, text, mime = 'text/plain;charset=utf-8') {
  downloadBlob(String(filename || 'download.txt'), new Blob([text], { type: mime }));
}

/** Download binary data (a Uint8Array: .npy, .npz) as a file. */
export function downloadBytes(filename, bytes, mime = 'application/octet-stream') {
  downloadBlob(String(filename || 'download.bin'), new Blob([bytes], { type: mime }));
}

/** Download SVG markup (a standalone file's text) as a .svg file. */
export function downloadSVG(filename, markup) {
  downloadBlob(
    withExt(filename, 'svg'),
    new Blob([markup], { type: 'image/svg+xml;charset=utf-8' }),
  );
}

function canvasToBlob(canvas) {
  return new Promise((resolve, reject) => {
    canvas.toBlob(
      (blob) => (blob ? resolve(blob) : reject(new Error('canvas.toBlob failed'))),
      'image/png',
    );
  });
}

/**
 * Download a PNG of a <canvas>. Returns a promise that settles when the download has been handed
 * to the browser.
 */
export async function downloadPNG(filename, canvas) {
  const blob = await canvasToBlob(canvas);
  downloadBlob(withExt(filename, 'png'), blob);
}

// ------------------------------------------------------------------------------------------------
// CSV

/**
 * One CSV field: quoted when needed; text that a spreadsheet would run as a formula gets a
 * leading '.
 */
export function csvField(v) {
  let s;
  if (typeof v === 'number') {
    s = numberCSV(v);
  } else {
    s = String(v ?? '');
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  }
  return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Full precision (shortest round-trip), NumPy-readable spelling of non-finite values. */
export function numberCSV(v) {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (Object.is(v, -0)) return '-0.0';
  return String(v);
}

/**
 * A row-major rows x cols matrix as CSV: header row = column labels (or 0..cols-1), first column =
 * row labels (or 0..rows-1), values at full precision. `corner` is the top-left cell.
 */
export function matrixCSV(data, rows, cols, rowLabels, colLabels, corner = '') {
  const out = [];
  const header = [corner];
  for (let c = 0; c < cols; c++) {
    header.push(colLabels && colLabels[c] !== undefined ? String(colLabels[c]) : String(c));
  }
  out.push(header.map(csvField).join(','));
  for (let r = 0; r < rows; r++) {
    const line = [
      csvField(rowLabels && rowLabels[r] !== undefined ? String(rowLabels[r]) : String(r)),
    ];
    for (let c = 0; c < cols; c++) line.push(numberCSV(data[r * cols + c]));
    out.push(line.join(','));
  }
  return `${out.join('\r\n')}\r\n`;
}

// ------------------------------------------------------------------------------------------------
// clipboard

let liveRegion = null;
/** Announce a short message to screen readers (one shared, visually hidden live region). */
export function announce(message) {
  if (!liveRegion || !liveRegion.isConnected) {
    liveRegion = document.createElement('div');
    liveRegion.className = 'visually-hidden';
    liveRegion.setAttribute('role', 'status');
    liveRegion.setAttribute('aria-live', 'polite');
    document.body.append(liveRegion);
  }
  liveRegion.textContent = '';
  // a new text node after a tick so repeated messages are announced again
  setTimeout(() => {
    liveRegion.textContent = message;
  }, 30);
}

function legacyCopy(text) {
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.className = 'offscreen-copy';
  document.body.append(ta);
  ta.select();
  let ok;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

/** Copy text with the Clipboard API, else with execCommand('copy'); true if it worked. */
async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // blocked (permission, document not focused): the old way may still work
  }
  return legacyCopy(text);
}

/**
 * The box shown right after `button` when copying is blocked: a hint, the text in a read-only
 * <textarea>, and a Close button that gives the focus back to `button`.
 */
function fallbackBox(label, button) {
  const hint = el('p', {
    className: 'note',
    text: 'Copying is blocked here: the text is selected below, press Ctrl+C (⌘C on a Mac).',
  });
  const ta = el('textarea', {
    attrs: { readonly: true, rows: 8, 'aria-label': `${label}: text to copy` },
  });
  const close = el('button', { attrs: { type: 'button', class: 'btn btn-small' }, text: 'Close' });
  const box = el('div', { className: 'copy-fallback' }, hint, ta, close);
  close.addEventListener('click', () => {
    box.remove();
    button.focus();
  });
  return box;
}

/**
 * A <button> that copies getText() to the clipboard and shows "Copied ✓" for a moment. When the
 * clipboard is unavailable it shows the text in a selected <textarea> right after the button, with
 * a hint to press Ctrl+C / ⌘C.
 */
export function copyButton(label, getText) {
  const labelSpan = el('span', { text: label });
  const button = el('button', { attrs: { type: 'button', class: 'btn copy-button' } }, labelSpan);
  let timer = 0;
  let fallback = null;

  function feedback(text, ok) {
    labelSpan.textContent = text;
    button.classList.toggle('is-copied', ok);
    clearTimeout(timer);
    timer = setTimeout(() => {
      labelSpan.textContent = label;
      button.classList.remove('is-copied');
    }, 1800);
  }

  function showFallback(text) {
    if (!fallback || !fallback.isConnected) {
      fallback = fallbackBox(label, button);
      button.after(fallback);
    }
    const ta = fallback.querySelector('textarea');
    ta.value = text;
    ta.focus();
    ta.select();
  }

  button.addEventListener('click', async () => {
    let text;
    try {
      text = String(getText());
    } catch (err) {
      feedback('Could not build the text', false);
      announce(`Could not copy: ${err.message}`);
      return;
    }
    if (await copyText(text)) {
      feedback('Copied ✓', true);
      announce('Copied to the clipboard');
    } else {
      showFallback(text);
      announce('Copying is blocked; the text is selected in a box below the button');
    }
  });
  return button;
}
