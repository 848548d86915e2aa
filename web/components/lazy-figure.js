// lazy-figure.js - figures built progressively, so the page's first render stays fast.
//
// lazyHeatmap() returns the heatmap interface ({ element, update, highlight }) at once, with a
// light placeholder in the page; the real heatmap is built when the placeholder comes near the
// viewport (from observePendingFigures() on), or, after buildPendingFigures() (right after the
// first render), in document order; or immediately when eager is true or the first render is
// over. Figures are built a few per frame (BUILD_BUDGET_MS of building, then the browser lays them
// out and paints before the next ones), the ones near the viewport first, so no task runs long.
// update()/highlight() before that just remember the latest state. figuresBuilt() resolves when
// every figure exists (the page then marks 'mha:figures' and sets <html data-figures="1">).

import { el } from './dom.js';
import { heatmap } from './heatmap.js';
import { yieldToEventLoop } from '../jobs/scheduler.js';

// Building per frame (ms): the layout that follows grows with what was built.
const BUILD_BUDGET_MS = 8;

// The page's one queue of figures not built yet (module state: every lesson adds to it, the app
// drains it once after the first render).
const queue = {
  pending: new Set(),
  observer: null, // IntersectionObserver, from observePendingFigures() on
  observing: false, // figures are drawn when they come near the viewport
  near: new Set(), // pending figures near the viewport (built first)
  windowObserver: null, // IntersectionObserver without margin: which are in the window
  inWindow: new Set(), // pending figures in the window
  unseen: new Set(), // pending figures observed, not yet reported by windowObserver
  background: false, // every pending figure is to be built (buildPendingFigures)
  pumping: false, // the frame loop of pump() runs
  ready: false, // the first render is over: new figures are built at once
  notified: false, // every figure is built: `built` resolved
  built: null, // { promise, resolve } of figuresBuilt()
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
        for (const e of entries) {
          const fig = e.target.__lazyFigure;
          if (!fig || !queue.pending.has(fig)) continue;
          if (e.isIntersecting) queue.near.add(fig);
          else queue.near.delete(fig);
        }
        pump();
      },
      { rootMargin: '600px 0px 600px 0px' },
    );
  }
  queue.observer.observe(lazy.placeholder);
  queue.windowObserver ??= new IntersectionObserver((entries) => {
    for (const e of entries) {
      const fig = e.target.__lazyFigure;
      queue.unseen.delete(fig);
      if (e.isIntersecting && queue.pending.has(fig)) queue.inWindow.add(fig);
      else queue.inWindow.delete(fig);
    }
  });
  queue.windowObserver.observe(lazy.placeholder);
  queue.unseen.add(lazy);
}

/** A figure leaves the queue (built, or its placeholder left the page): no observer keeps it. */
function forget(lazy) {
  queue.pending.delete(lazy);
  queue.near.delete(lazy);
  queue.inWindow.delete(lazy);
  queue.unseen.delete(lazy);
  queue.observer?.unobserve(lazy.placeholder);
  queue.windowObserver?.unobserve(lazy.placeholder);
}

/**
 * How many figures in the window are still to be built, counting those the observer has not
 * placed yet (just made, or in a part whose layout waits) when mayBeInWindow(placeholder) says
 * they could be. Read without a layout of the page.
 */
export function figuresPendingInWindow(mayBeInWindow) {
  let n = queue.inWindow.size;
  for (const l of queue.unseen) if (mayBeInWindow(l.placeholder)) n += 1;
  return n;
}

function builtSignal() {
  if (!queue.built) {
    let resolve;
    const promise = new Promise((r) => {
      resolve = r;
    });
    queue.built = { promise, resolve };
  }
  return queue.built;
}

function checkAllBuilt() {
  if (!queue.ready || queue.notified || queue.pending.size) return;
  queue.notified = true;
  builtSignal().resolve();
}

/** Resolves once every figure made before buildPendingFigures() (and since) is built. */
export function figuresBuilt() {
  return builtSignal().promise;
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
      forget(lazy);
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
function pendingInOrder(set) {
  for (const l of set) {
    if (!l.placeholder.isConnected) forget(l);
  }
  return [...set]
    .filter((l) => queue.pending.has(l))
    .sort((a, b) =>
      a.placeholder.compareDocumentPosition(b.placeholder) & Node.DOCUMENT_POSITION_FOLLOWING
        ? -1
        : 1,
    );
}

/** The next figure to build: the first near the viewport, else (background) the first left. */
function nextFigure() {
  const near = pendingInOrder(queue.near);
  if (near.length) return near[0];
  return queue.background ? pendingInOrder(queue.pending)[0] : undefined;
}

/**
 * A part of the page (a section's body) whose layout waits: laid out and painted only near the
 * viewport (content-visibility: auto; about `height` px tall until first drawn, then its last
 * height), until layoutNow(box). While the page builds itself, parts far below then cost no
 * layout, frame after frame.
 */
export function deferLayout(box, height = 1500) {
  box.dataset.layout = 'deferred';
  box.style.contentVisibility = 'auto';
  box.style.containIntrinsicSize = `auto ${height}px`;
}

/** The part is laid out and painted wherever it is again (an ordinary part of the page). */
export function layoutNow(box) {
  delete box.dataset.layout;
  box.style.removeProperty('content-visibility');
  box.style.removeProperty('contain-intrinsic-size');
}

/** After the next frame (its layout and paint done). */
export function afterFrame() {
  if (typeof requestAnimationFrame !== 'function') return yieldToEventLoop();
  return new Promise((resolve) => requestAnimationFrame(() => yieldToEventLoop().then(resolve)));
}

/**
 * Build the figures due, BUILD_BUDGET_MS of them per frame, until none is due. A figure in a part
 * whose layout waits (deferLayout) has that part laid out first, in a frame of its own: then each
 * frame lays out what was just built, not a whole section of figures at once.
 */
async function pump() {
  if (queue.pumping) return;
  queue.pumping = true;
  try {
    while (nextFigure()) {
      await afterFrame();
      const t0 = performance.now();
      for (let f = nextFigure(); f; f = nextFigure()) {
        const box = f.placeholder.closest('[data-layout="deferred"]');
        if (box) {
          layoutNow(box);
          break;
        }
        f.build();
        if (performance.now() - t0 > BUILD_BUDGET_MS) break;
      }
    }
  } finally {
    queue.pumping = false;
    checkAllBuilt();
  }
}

/** From now on, a figure not built yet is built when it comes near the viewport. */
export function observePendingFigures() {
  queue.observing = true;
  for (const l of queue.pending) observe(l);
}

/**
 * After the first render: every figure not built yet is built, the ones near the viewport first,
 * then in document order, a few per frame; a figure made from now on is built at once.
 */
export function buildPendingFigures() {
  queue.ready = true;
  queue.background = true;
  observePendingFigures();
  if (!queue.pending.size) checkAllBuilt();
  else pump();
}
