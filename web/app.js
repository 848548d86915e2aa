// app.js - entry of the companion page (bundled into app.bundle.js by `make bundle`).
//
// Loads the wasm module, renders every section once, one per task (the section in view first,
// then the rest in page order, yielding in between so no task runs long), marks `mha:ready`, then
// runs the long gradient checks in the compute engine (web/jobs/compute.js: workers, or
// main-thread slices) and marks `mha:checks-done` when they are all done.
performance.mark('mha:start');

import { loadMHA } from './mha.js';
import { courseData } from './model/course.js';
import { Scheduler, yieldToEventLoop } from './jobs/scheduler.js';
import { createCompute } from './jobs/compute.js';
import { setFullPrecision } from './components/numbers.js';
import {
  afterFrame,
  buildPendingFigures,
  deferLayout,
  figuresBuilt,
  layoutNow,
  observePendingFigures,
} from './components/lazy-figure.js';
import { notebookButton, sectionText } from './components/downloads.js';
import { renderStartHere } from './lessons/start-here.js';
import { renderSentence } from './lessons/sentence.js';
import { renderLesson1 } from './lessons/lesson1.js';
import { renderLesson2 } from './lessons/lesson2.js';
import { renderLesson3 } from './lessons/lesson3.js';
import { renderLesson4 } from './lessons/lesson4.js';
import { renderLesson5 } from './lessons/lesson5.js';
import { renderPlayground } from './lessons/playground/index.js';
import { renderNotebookCheck } from './lessons/notebook-check.js';
import { lessonBanner, usesCustom } from './components/notebook-banner.js';
import { lessonData } from './model/notebook-check.js';

// The bundle carries the wasm as base64 (works from file:// too); unbundled, fetch mha.wasm.
function wasmSource() {
  const b64 = globalThis.MHA_WASM_BASE64;
  if (!b64) return undefined;
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(b64);
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

// Compilation starts at once and runs off the main thread while the page sets itself up.
const wasmBytes = wasmSource(); // also sent to the compute workers
const mhaPromise = loadMHA(wasmBytes);
mhaPromise.catch(() => {}); // reported by main()

function lessonError(body, name, err) {
  const p = document.createElement('p');
  p.className = 'error';
  p.setAttribute('role', 'alert');
  p.textContent = `${name} could not be computed: ${err.message}`;
  body.replaceChildren(p);
  console.error(err);
}

/**
 * While the page builds itself, each section's body is laid out only near the viewport
 * (deferLayout): building sections and drawing figures far below then cost no layout of the
 * whole page, frame after frame. The figure builder lays a body out before its first figure.
 */
function layoutNearViewportOnly() {
  for (const body of document.querySelectorAll('.lesson-body')) deferLayout(body);
}

/**
 * Every figure drawn: the bodies still waiting (those without figures) are laid out, one per
 * frame, so the whole page is an ordinary page again (as assistive technology and tools that read
 * its pixels expect); then mark mha:figures and set <html data-figures="1">.
 */
async function layoutEverywhere() {
  for (const body of document.querySelectorAll('[data-layout="deferred"]')) {
    await afterFrame();
    layoutNow(body);
  }
  await afterFrame();
  performance.mark('mha:figures');
  document.documentElement.dataset.figures = '1';
}

/** The table of contents stays in view (nav.toc in style.css) and marks the section being read. */
function setupToc() {
  const toc = document.getElementById('toc');
  if (!toc) return;
  toc.classList.add('is-sticky');
  const links = [...toc.querySelectorAll('a[href^="#"]')];
  if (typeof IntersectionObserver !== 'function') return;
  setTimeout(() => observeSections(links), 0); // after the first render
}

function observeSections(links) {
  const byId = new Map(links.map((a) => [a.getAttribute('href').slice(1), a]));
  const io = new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        for (const a of links) a.removeAttribute('aria-current');
        byId.get(e.target.id)?.setAttribute('aria-current', 'true');
      }
    },
    { rootMargin: '-20% 0px -70% 0px' },
  );
  for (const id of byId.keys()) {
    const s = document.getElementById(id);
    if (s) io.observe(s);
  }
}

// Every section of the page, in order: [key, body id, name, render, performance mark].
const STEPS = [
  ['sentence', 'sentence-body', 'The sentence', renderSentence, null],
  ['lesson1', 'l1-body', 'Lesson 1', renderLesson1, 'mha:lesson-1'],
  ['lesson2', 'l2-body', 'Lesson 2', renderLesson2, 'mha:lesson-2'],
  ['lesson3', 'l3-body', 'Lesson 3', renderLesson3, 'mha:lesson-3'],
  ['lesson4', 'l4-body', 'Lesson 4', renderLesson4, 'mha:lesson-4'],
  ['lesson5', 'l5-body', 'Lesson 5', renderLesson5, 'mha:lesson-5'],
  ['playground', 'pg-body', 'The playground', renderPlayground, 'mha:playground'],
];
const NOTEBOOK = 'notebook'; // the notebook check's section (nb-body), rendered in page order

/**
 * The order the sections are built in: the one the reader sees first (the address's #fragment,
 * else the first section reaching below the top of the window), then the rest in page order.
 */
function buildOrder() {
  const inPage = [...document.querySelectorAll('.lesson-body')].map((b) => b.id);
  const keyOf = (bodyId) =>
    bodyId === 'nb-body' ? NOTEBOOK : STEPS.find((st) => st[1] === bodyId)?.[0];
  const keys = inPage.map(keyOf).filter(Boolean);
  const id = decodeURIComponent(location.hash.slice(1));
  const target = id ? document.getElementById(id) : null;
  const section =
    target?.closest('section') ??
    [...document.querySelectorAll('section')].find((x) => x.getBoundingClientRect().bottom > 0);
  const first = keyOf(section?.querySelector('.lesson-body')?.id);
  return first ? [first, ...keys.filter((k) => k !== first)] : keys;
}

/**
 * Paces the first render: between two sections the browser gets a turn (scheduler.yield, or a
 * MessageChannel message), and once the sections rendered since the last frame took more than
 * FRAME_BUDGET_MS, a frame too (their layout then stays small: it grows with what was built).
 */
const FRAME_BUDGET_MS = 12;
function renderPacer() {
  const pace = { sinceFrame: 0, t0: 0 };
  const onFrame = () => {
    pace.sinceFrame = 0;
  };
  const frame = () =>
    new Promise((resolve) =>
      requestAnimationFrame(() => {
        onFrame();
        yieldToEventLoop().then(resolve); // after the frame's layout and paint
      }),
    );
  const turn = () => {
    const s = globalThis.scheduler;
    return typeof s?.yield === 'function' ? s.yield() : yieldToEventLoop();
  };
  return {
    /** Before a section: a turn for the browser, a frame when enough was built since the last. */
    next: () => (pace.sinceFrame > FRAME_BUDGET_MS ? frame() : turn()),
    start: () => {
      pace.t0 = performance.now();
    },
    done: () => {
      pace.sinceFrame += performance.now() - pace.t0;
    },
  };
}

// The sections that "Use my arrays in the lessons" re-renders with a notebook's arrays.
const CUSTOM_KEYS = new Set(['lesson1', 'lesson2', 'lesson3', 'lesson4', 'lesson5', 'playground']);

/**
 * What section `key` computes from, of page.custom: lesson 1 and 2 their part (custom.lesson1,
 * custom.lesson2), the others the whole custom arrays when they feed lessons 3-5; null: the
 * course's.
 */
function customFor(custom, key) {
  if (!usesCustom(custom, key)) return null;
  return key === 'lesson1' || key === 'lesson2' ? custom[key] : custom;
}

/**
 * Render one section into its body: lessons 3 and 4 get the course's data or (page.custom) the
 * notebook's; lessons 1, 2, 5 and the playground get their part of page.custom (null: their own).
 */
function renderStep(page, [key, bodyId, name, render]) {
  const body = document.getElementById(bodyId);
  const custom = customFor(page.custom, key);
  const data = custom && (key === 'lesson3' || key === 'lesson4') ? lessonData(custom) : page.data;
  try {
    page.lessons[key] = render({ ...page.ctx, body, data, custom });
  } catch (err) {
    page.lessons[key] = null;
    lessonError(body, name, err);
  }
}

/**
 * Re-render lessons 1-5 and the playground for page.custom (null: the course's arrays): a section
 * is rendered again when it computes from a notebook's arrays now or did before (`before`: the
 * custom arrays in use until now); every section gets its banner (in use, or why not).
 */
function rerenderCustom(page, before) {
  for (const step of STEPS.filter(([key]) => CUSTOM_KEYS.has(key))) {
    const [key, bodyId] = step;
    const body = document.getElementById(bodyId);
    page.banners.get(key)?.remove();
    page.banners.delete(key);
    if (usesCustom(page.custom, key) || usesCustom(before, key) || !page.lessons[key]) {
      const old = page.lessons[key];
      old?.panel?.cancel();
      old?.dispose?.();
      body.replaceChildren();
      renderStep(page, step);
      page.lessons[key]?.afterReady?.();
    }
    if (!page.custom) continue;
    const onBack = () => useArrays(page, null, body.closest('section'));
    const banner = lessonBanner({ id: `${bodyId}-back`, key, custom: page.custom, onBack });
    page.banners.set(key, banner);
    body.before(banner);
  }
  page.notebook?.showCustom(page.custom);
}

/**
 * Use a notebook's arrays (custom) or the course's again (null) in lessons 1-5 and the
 * playground; a Back button that was pressed is gone afterwards, so focus goes to its section's
 * heading (or to "Use my arrays" in the notebook section).
 */
function useArrays(page, custom, from) {
  const before = page.custom;
  page.custom = custom;
  rerenderCustom(page, before);
  if (custom || !from) return;
  const target =
    from.id === 'notebook-check' ? document.getElementById('nb-use') : from.querySelector('h2');
  if (target && target.tagName === 'H2') target.tabIndex = -1;
  target?.focus({ preventScroll: true });
}

function renderNotebookSection(page) {
  const body = document.getElementById('nb-body');
  if (!body) return;
  const section = body.closest('section');
  try {
    page.notebook = renderNotebookCheck({
      mha: page.ctx.mha,
      body,
      onUse: (custom) => useArrays(page, custom, section),
      onBack: () => useArrays(page, null, section),
    });
  } catch (err) {
    lessonError(body, 'The notebook check', err);
  }
}

/** The page's own timing, for the curious: in the footer, out of the students' way. */
function showTiming(version) {
  const ms = performance.getEntriesByName('mha:navigation-to-ready')[0]?.duration;
  const footer = document.getElementById('page-timing');
  if (!footer || !ms) return;
  footer.textContent = `mha-wasm ${version}: every section computed ${Math.round(ms)} ms after navigation (performance marks mha:start … mha:ready).`;
}

/** window.mhaPage: what the browser tests read (figures, settings, the notebook, the engine). */
function exposePage(page, compute) {
  const { lessons } = page;
  window.mhaPage = {
    figures() {
      const f = {};
      for (const k of ['lesson1', 'lesson2', 'lesson3', 'lesson4', 'lesson5', 'playground']) {
        f[k] = lessons[k]?.figures() ?? null;
      }
      return JSON.parse(JSON.stringify(f));
    },
    settings() {
      return lessons.playground?.settings() ?? null;
    },
    /** The notebook check: loaded arrays, the last check's statuses, custom arrays in use. */
    notebook() {
      return { ...(page.notebook?.state() ?? {}), custom: !!page.custom };
    },
    /** The compute engine: { kind: 'worker' | 'main-thread', size, reason, cancelled }. */
    get compute() {
      return compute.info();
    },
  };
}

async function main() {
  const status = document.getElementById('status');
  renderStartHere();
  layoutNearViewportOnly();
  setupToc();
  const precision = document.getElementById('full-precision');
  precision?.addEventListener('change', () => setFullPrecision(precision.checked));

  let mha;
  try {
    mha = await mhaPromise;
    performance.mark('mha:wasm');
  } catch (err) {
    status.textContent = `The WebAssembly module could not be loaded: ${err.message}`;
    status.className = 'error';
    console.error(err);
    return;
  }

  const scheduler = new Scheduler({ sliceMs: 12 });
  // ?workers=0 forces the main-thread fallback (?workers=n: n workers; default: cores - 1)
  const workers = new URLSearchParams(location.search).get('workers') ?? 'auto';
  const compute = createCompute({ mha, scheduler, workers, wasm: wasmBytes });
  const lessons = {};
  // the notebook: every section's NumPy script as the page holds it at the click, in page order
  const notebook = () =>
    STEPS.filter(([key]) => typeof lessons[key]?.script === 'function').map(([key, bodyId]) => ({
      ...sectionText(document.getElementById(bodyId)),
      code: lessons[key].script(),
    }));
  const page = {
    ctx: { mha, scheduler, compute, notebook },
    data: courseData(mha), // lessons 3 and 4 share the course demo's X, W, dY
    custom: null, // a notebook's arrays in lessons 1-5 and the playground (see rerenderCustom)
    lessons,
    banners: new Map(),
    notebook: null,
  };
  observePendingFigures(); // a figure that comes into view is drawn at once
  const pacer = renderPacer();
  for (const key of buildOrder()) {
    await pacer.next();
    const step = STEPS.find((st) => st[0] === key);
    if (key in lessons) continue; // already rendered ("Use my arrays" came first)
    pacer.start();
    if (key === NOTEBOOK) renderNotebookSection(page);
    else renderStep(page, step);
    pacer.done();
    if (step?.[4]) performance.mark(step[4]);
  }

  const tools = document.querySelector('#toc .toc-tools');
  tools?.append(
    notebookButton(notebook, { id: 'download-notebook', version: mha.version }).element,
  );

  exposePage(page, compute);

  // the sections whose first figures come back from the compute engine (the playground's)
  await Promise.allSettled(STEPS.map(([key]) => lessons[key]?.ready));
  performance.mark('mha:ready');
  performance.measure('mha:navigation-to-ready', { start: 0, end: 'mha:ready' });
  performance.measure('mha:start-to-ready', 'mha:start', 'mha:ready');
  document.documentElement.dataset.ready = '1';
  status.textContent = `Computed live by mha-wasm ${mha.version} in your browser. Full gradient checks continue in the background.`;
  showTiming(mha.version);

  // after the first render: the figures not drawn yet, a few per frame (lazy-figure.js); on one
  // scheduler (higher priority first): lesson 4's full check at course size (7), the
  // playground's training (6) and sampled check (5), lesson 5's check (2) and the playground's
  // full check (1)
  buildPendingFigures();
  figuresBuilt().then(layoutEverywhere);
  for (const k of ['lesson4', 'lesson5', 'playground']) lessons[k]?.afterReady?.();
  Promise.all([checksDone(scheduler), compute.idle()]).then(() => {
    performance.mark('mha:checks-done');
    status.textContent = status.textContent.replace(
      ' Full gradient checks continue in the background.',
      ' All gradient checks done.',
    );
  });
}

/** Resolves when the scheduler has run out of jobs and none came after (a check's follow-up). */
async function checksDone(scheduler) {
  let serial;
  do {
    serial = scheduler.serial;
    await scheduler.idle();
    await yieldToEventLoop();
  } while (serial !== scheduler.serial || scheduler.jobs.length);
}

main();
