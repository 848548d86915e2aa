// lazy-figure.js - figures built progressively, so the page's first render stays fast.
//
// lazyHeatmap() returns the heatmap interface ({ element, update, highlight }) at once, with a
// light placeholder in the page; the real heatmap is built when the placeholder comes near the
// viewport (from observePendingFigures() on), or by buildPendingFigures() right after the first
// render (in document order, about one per slice, so the frame after each lays out little), or
// immediately when eager is true. update()/highlight() before that just remember the latest
// state. When every figure exists, <html data-figures="1"> and performance mark 'mha:figures'.

import { el } from './dom.js';
import { heatmap } from './heatmap.js';

// The page's one queue of figures not built yet (module state: every lesson adds to it, the app
// drains it once after the first render).
const queue = {
  pending: new Set(),
  observer: null, // IntersectionObserver, from observePendingFigures() on
  observing: false, // figures are drawn when they come near the viewport
  ready: false, // the first render is over: new figures are built at once
  notified: false, // data-figures="1" is set
};

// A cell's height in px for an n × n heatmap without a cellSize (the heatmap's own preference).
const CELL_BY_SIZE = [
  [6, 48],
  [10, 42],
  [16, 30],
  [24, 22],
  [32, 18],
];

/** The placeholder's height: about the heatmap's, so the page does not jump when it is built. */
function estimateHeight(o) {
  const n = Math.max(o.rows, o.cols);
  const fit = CELL_BY_SIZE.find(([size]) => n <= size);
  const cell = o.cellSize ?? (fit ? fit[1] : Math.max(3, Math.min(14, Math.floor(640 / n))));
  return Math.round(o.rows * cell + 190);
}

function observe(lazy) {
  if (typeof IntersectionObserver !== 'function') return;
  if (!queue.observer) {
    queue.observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) if (e.isIntersecting) e.target.__lazyFigure?.build();
      },
      { rootMargin: '600px 0px 600px 0px' },
    );
  }
  queue.observer.observe(lazy.placeholder);
}

function checkAllBuilt() {
  if (!queue.ready || queue.notified || queue.pending.size) return;
  queue.notified = true;
  performance.mark('mha:figures');
  document.documentElement.dataset.figures = '1';
}

function placeholderFor(opts, className) {
  const placeholder = el(
    'div',
    {
      className: `figure-placeholder ${className}`.trim(),
      attrs: { 'aria-busy': 'true' },
      dataset: { pending: '1' },
    },
    el('p', { className: 'note', text: `${opts.title ?? 'figure'}: drawing…` }),
  );
  placeholder.style.minHeight = `${estimateHeight(opts)}px`;
  return placeholder;
}

/**
 * A heatmap (see heatmap.js for the options) built lazily. Returns { element, built, update,
 * highlight, build }. options: { eager, className } (className also goes on the heatmap).
 */
export function lazyHeatmap(options, { eager = false, className = '' } = {}) {
  const state = { opts: { ...options }, hm: null, lastHighlight: null };
  const placeholder = placeholderFor(state.opts, className);
  const lazy = {
    placeholder,
    build() {
      if (state.hm) return state.hm;
      queue.pending.delete(lazy);
      queue.observer?.unobserve(placeholder);
      const hm = heatmap(state.opts);
      state.hm = hm;
      if (className) hm.element.classList.add(...className.split(/\s+/));
      if (placeholder.isConnected) placeholder.replaceWith(hm.element);
      if (state.lastHighlight) hm.highlight(...state.lastHighlight);
      checkAllBuilt();
      return hm;
    },
  };
  placeholder.__lazyFigure = lazy;
  if (eager || queue.ready) {
    lazy.build(); // after the first render: no reason to wait
  } else {
    queue.pending.add(lazy);
    if (queue.observing) observe(lazy);
  }
  return lazyApi(state, lazy, placeholder);
}

function lazyApi(state, lazy, placeholder) {
  return {
    get element() {
      return state.hm ? state.hm.element : placeholder;
    },
    get built() {
      return !!state.hm;
    },
    update(data, o = {}) {
      if (state.hm) {
        state.hm.update(data, o);
        return;
      }
      state.opts = { ...state.opts, ...o };
      if (data !== undefined && data !== null) state.opts.data = data;
    },
    highlight(r, c) {
      state.lastHighlight = [r, c];
      if (state.hm) state.hm.highlight(r, c);
    },
    build: () => lazy.build(),
  };
}

/** Drop figures whose placeholder left the page; the rest in document order. */
function pendingInOrder() {
  for (const l of queue.pending) {
    if (!l.placeholder.isConnected) {
      queue.pending.delete(l);
      queue.observer?.unobserve(l.placeholder);
    }
  }
  return [...queue.pending].sort((a, b) =>
    a.placeholder.compareDocumentPosition(b.placeholder) & Node.DOCUMENT_POSITION_FOLLOWING
      ? -1
      : 1,
  );
}

/** From now on, a figure not built yet is built when it comes near the viewport. */
export function observePendingFigures() {
  queue.observing = true;
  for (const l of queue.pending) observe(l);
}

/** Build every figure not built yet, in document order, on the scheduler at `priority`. */
export function buildPendingFigures(scheduler, priority) {
  queue.ready = true;
  observePendingFigures();
  if (!queue.pending.size) {
    checkAllBuilt();
    return;
  }
  scheduler.submit({
    priority,
    name: 'figures',
    sliceMs: 4, // about one figure per slice: the frame after it lays out little
    start: () => ({
      iterator: (function* () {
        while (queue.pending.size) {
          const list = pendingInOrder();
          if (!list.length) break;
          list[0].build();
          yield queue.pending.size;
        }
      })(),
    }),
    onDone: () => checkAllBuilt(),
  });
}
