// app.js - entry of the companion page (bundled into app.bundle.js by `make bundle`).
//
// Loads the wasm module, renders every section once, one per task (the section in view first,
// then the rest in page order, yielding in between so no task runs long; `mha:in-view` once what
// is in the window is drawn), marks `mha:ready`, then
// runs the long gradient checks in the compute engine (web/jobs/compute.js: workers, or
// main-thread slices) and marks `mha:checks-done` when they are all done.
performance.mark('mha:start');

// first: the wasm's compilation starts before the other modules run (boot.js)
import { mhaPromise, wasmBytes } from './boot.js';
import { courseData } from './model/course.js';
import { Scheduler, yieldToEventLoop } from './jobs/scheduler.js';
import { createCompute } from './jobs/compute.js';
import { setFullPrecision } from './components/numbers.js';
import {
  afterFrame,
  buildPendingFigures,
  deferLayout,
  figuresBuilt,
  figuresPendingInWindow,
  layoutNow,
  observePendingFigures,
} from './components/lazy-figure.js';
import { ipynbButton, sectionText } from './components/downloads.js';
import { renderStartHere } from './lessons/start-here.js';
import {
  SECTIONS,
  customFor,
  lessonView,
  sectionByKey,
  sectionOfBuiltId,
} from './lessons/index.js';
import { lessonBanner } from './components/custom-banner.js';
import { lessonData } from './model/custom-arrays.js';

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

/** The address's #fragment (an element's id), or ''. */
const fragment = () => decodeURIComponent(location.hash.slice(1));

/**
 * The registry's section an element id belongs to: the <section> around it, or for an element a
 * section builds (not in the page yet), the section whose body id's prefix it starts with
 * ('l4-gradcheck' in lesson 4: its body is 'l4-body'); null for none.
 */
function sectionOfId(id) {
  const section = document.getElementById(id)?.closest('section');
  if (section) return SECTIONS.find((s) => s.id === section.id) ?? null;
  return sectionOfBuiltId(id);
}

/**
 * The order the sections are built in: the one the reader sees first (the address's #fragment,
 * else the first section reaching below the top of the window), then the rest in page order.
 */
function buildOrder() {
  const id = fragment();
  const inWindow = [...document.querySelectorAll('section')].find(
    (x) => x.getBoundingClientRect().bottom > 0,
  );
  const start = (id && sectionOfId(id)) || SECTIONS.find((s) => s.id === inWindow?.id);
  return start ? [start, ...SECTIONS.filter((s) => s !== start)] : [...SECTIONS];
}

/**
 * An address whose #fragment names an element a section builds (not in the page when it
 * loaded: the browser could not scroll to it): once the element exists, it is scrolled into
 * view in the next frame (the layout that scroll needs then runs apart from the section's build),
 * unless the reader has scrolled meanwhile. Returns { afterSection() (true when the element is
 * there to scroll to), scrolling() (a scroll is waiting for its frame) }.
 */
function scrollToBuiltFragment() {
  const id = fragment();
  let waiting = false;
  const none = { afterSection: () => false, scrolling: () => false };
  if (!id || document.getElementById(id)) return none;
  const y = scrollY;
  let pending = true;
  const afterSection = () => {
    const target = pending && document.getElementById(id);
    if (!target) return false;
    pending = false;
    if (scrollY !== y) return false;
    waiting = true;
    requestAnimationFrame(() => {
      waiting = false;
      if (scrollY === y && target.isConnected) target.scrollIntoView();
    });
    return true;
  };
  return { afterSection, scrolling: () => waiting };
}

/**
 * Which of the registry's sections are in the window: as intersection observers report it (no
 * layout of the page is read), and until they have reported every section, from the sections'
 * boxes (read in an animation frame, whose layout the frame needs anyway). { has(id), stop() };
 * has(id) is false for any other id (none, or a section outside the registry).
 */
function watchSections() {
  const ids = new Set(SECTIONS.map((s) => s.id));
  const boxInWindow = (id) => {
    const r = ids.has(id) && document.getElementById(id)?.getBoundingClientRect();
    return !!r && r.bottom > 0 && r.top < innerHeight && r.height > 0;
  };
  if (typeof IntersectionObserver !== 'function') return { has: boxInWindow, stop: () => {} };
  const inWindow = new Map(); // section id -> in the window
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) inWindow.set(e.target.id, e.isIntersecting);
  });
  for (const s of SECTIONS) io.observe(document.getElementById(s.id));
  return {
    has: (id) => (inWindow.size === SECTIONS.length ? inWindow.get(id) === true : boxInWindow(id)),
    stop: () => io.disconnect(),
  };
}

/**
 * Marks mha:in-view once what the reader sees is drawn: every section in the window rendered
 * (`rendered`: the registry's sections done so far; the others are the page's own HTML), no
 * figure in the window still waiting to be built, and the frame that shows it painted. Checked
 * in every animation frame from the start (what is in the window may be the page's own HTML),
 * with `sections` (watchSections), and not while a scroll to a built element waits for its
 * frame (`toFragment`: scrollToBuiltFragment). The mark is set once that frame is painted
 * (afterThisFrame). Returns a stop function.
 */
function markInView(rendered, sections, toFragment) {
  if (typeof requestAnimationFrame !== 'function') return () => {};
  const sectionInWindow = (node) => sections.has(node.closest('section')?.id);
  const drawn = () =>
    !toFragment.scrolling() &&
    SECTIONS.every((s) => !sections.has(s.id) || rendered.has(s.id)) &&
    figuresPendingInWindow(sectionInWindow) === 0;
  let stopped = false;
  const check = () => {
    if (stopped) return;
    if (!drawn()) {
      requestAnimationFrame(check);
      return;
    }
    stopped = true;
    afterThisFrame(() => performance.mark('mha:in-view'));
  };
  requestAnimationFrame(check);
  return () => {
    stopped = true;
  };
}

/**
 * Called from an animation frame: runs `fn` once that frame is painted, as a task of the highest
 * priority where the browser has prioritized tasks (scheduler.postTask), so that tasks already
 * waiting (a section's build) do not run first; elsewhere as a message.
 */
function afterThisFrame(fn) {
  const s = globalThis.scheduler;
  if (typeof s?.postTask === 'function') s.postTask(fn, { priority: 'user-blocking' });
  else yieldToEventLoop().then(fn);
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

/**
 * Render one section into its body (registry entry `s`), step by step: a generator that yields
 * where the section's render does (a render may be a generator function, yielding between the
 * parts of its build, so the first render can give the browser a turn in between). With
 * page.custom (a notebook's arrays in use) the section gets what it takes of them (customFor),
 * and lessons 3 and 4 their arrays as `data`; else the course's. A section that throws shows why
 * and gets an empty view.
 */
function* renderSteps(page, s) {
  const body = document.getElementById(s.body);
  const custom = customFor(page.custom, s);
  const data = custom && s.data ? lessonData(custom) : page.data;
  try {
    const out = s.render({ ...page.ctx, body, data, custom });
    const view = typeof out?.next === 'function' ? yield* out : out;
    page.lessons[s.key] = lessonView(view);
  } catch (err) {
    page.lessons[s.key] = lessonView();
    lessonError(body, s.title, err);
  }
}

/** Render one section at once (renderSteps, every step in this task). */
function renderSection(page, s) {
  for (const step of renderSteps(page, s)) void step;
}

/**
 * Re-render the sections that take a notebook's arrays for page.custom (null: the course's): a
 * section is rendered again when it computes from a notebook's arrays now or did before
 * (`before`: the custom arrays in use until now); each gets its banner (in use, or why not).
 */
function rerenderCustom(page, before) {
  for (const s of SECTIONS.filter((x) => x.custom)) {
    const body = document.getElementById(s.body);
    page.banners.get(s.key)?.remove();
    page.banners.delete(s.key);
    if (customFor(page.custom, s) || customFor(before, s)) {
      page.lessons[s.key].dispose();
      body.replaceChildren();
      renderSection(page, s);
      page.lessons[s.key].afterReady();
    }
    if (!page.custom) continue;
    const onBack = () => useArrays(page, null, body.closest('section'));
    const banner = lessonBanner({ id: `${s.body}-back`, key: s.key, custom: page.custom, onBack });
    page.banners.set(s.key, banner);
    body.before(banner);
  }
  for (const s of SECTIONS) page.lessons[s.key].showCustom(page.custom);
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
    from.id === sectionByKey('check').id
      ? document.getElementById('nb-use')
      : from.querySelector('h2');
  if (target && target.tagName === 'H2') target.tabIndex = -1;
  target?.focus({ preventScroll: true });
}

/** The page's own timing, for the curious: in the footer, out of the students' way. */
function showTiming(version) {
  const ms = performance.getEntriesByName('mha:navigation-to-ready')[0]?.duration;
  const footer = document.getElementById('page-timing');
  if (!footer || !ms) return;
  footer.textContent = `mha-wasm ${version}: every section computed ${Math.round(ms)} ms after navigation (performance marks mha:start … mha:ready).`;
}

/** window.mhaPage: what the browser tests read (figures, settings, the check, the engine). */
function exposePage(page, compute) {
  const { lessons } = page;
  window.mhaPage = {
    /** Every section's figures (null: it has none, or could not be computed), by key. */
    figures() {
      const f = Object.fromEntries(SECTIONS.map((s) => [s.key, lessons[s.key].figures()]));
      return JSON.parse(JSON.stringify(f));
    },
    settings() {
      return lessons.playground.state();
    },
    /** The check of a notebook's arrays: loaded arrays, the last statuses, custom arrays in use. */
    check() {
      return { ...lessons.check.state(), custom: !!page.custom };
    },
    /** The compute engine: { kind: 'worker' | 'main-thread', size, reason, cancelled }. */
    get compute() {
      return compute.info();
    },
  };
}

/** Render one section in steps (renderSteps), a turn for the browser between two (pacer.next). */
async function renderPaced(page, s, pacer) {
  for (const step of renderSteps(page, s)) {
    void step;
    pacer.done();
    await pacer.next();
    pacer.start();
  }
}

/**
 * Render every section once, in buildOrder(), in tasks (renderPacer, renderPaced); each one's
 * id goes into `rendered` and its mark is set. A section in the window starts its background
 * work (its gradient check: afterReady) at once, not after the others are built; its key goes
 * into page.started.
 */
async function firstRender(page, rendered, sections, toFragment) {
  const pacer = renderPacer();
  for (const s of buildOrder()) {
    await pacer.next();
    pacer.start();
    await renderPaced(page, s, pacer);
    pacer.done();
    rendered.add(s.id);
    const scrolledTo = toFragment.afterSection(); // (the observers have not seen that scroll yet)
    if (s.mark) performance.mark(s.mark);
    if (scrolledTo || sections.has(s.id)) {
      page.started.add(s.key);
      page.lessons[s.key].afterReady();
    }
  }
}

/**
 * The page's state: what every section gets (ctx: the engine, the scheduler, the compute engine,
 * the .ipynb's cells, "Use my arrays"), the course's data, the sections' views.
 */
function createPage(mha, scheduler, compute) {
  const lessons = {};
  // the .ipynb: every section's NumPy script as the page holds it at the click, in page order
  const ipynbCells = () =>
    SECTIONS.filter((s) => lessons[s.key].script).map((s) => ({
      ...sectionText(document.getElementById(s.body)),
      code: lessons[s.key].script(),
    }));
  const check = document.getElementById(sectionByKey('check').id);
  const page = {
    ctx: {
      mha,
      scheduler,
      compute,
      ipynbCells,
      // (once every section is built: the first render and "Use my arrays" never overlap)
      onUse: (custom) => page.firstRender.then(() => useArrays(page, custom, check)),
      onBack: () => page.firstRender.then(() => useArrays(page, null, check)),
    },
    data: courseData(mha), // lessons 3 and 4 share the course demo's X, W, dY
    custom: null, // a notebook's arrays in the sections that take them (see rerenderCustom)
    lessons, // each section's view (lessonView), by key
    started: new Set(), // the sections whose afterReady ran in the first render (in the window)
    banners: new Map(),
    firstRender: null, // settles once firstRender has built every section
  };
  return page;
}

async function main() {
  const status = document.getElementById('status');
  renderStartHere();
  layoutNearViewportOnly();
  setupToc();
  const rendered = new Set(); // the registry's sections rendered so far (by id)
  const sections = watchSections();
  const toFragment = scrollToBuiltFragment();
  const stopInView = markInView(rendered, sections, toFragment);
  const precision = document.getElementById('full-precision');
  precision?.addEventListener('change', () => setFullPrecision(precision.checked));

  let mha;
  try {
    mha = await mhaPromise;
    performance.mark('mha:wasm');
  } catch (err) {
    stopInView();
    sections.stop();
    status.textContent = `The WebAssembly module could not be loaded: ${err.message}`;
    status.className = 'error';
    console.error(err);
    return;
  }

  const scheduler = new Scheduler({ sliceMs: 12 });
  // ?workers=0 forces the main-thread fallback (?workers=n: n workers; default: cores - 1)
  const workers = new URLSearchParams(location.search).get('workers') ?? 'auto';
  const compute = createCompute({ mha, scheduler, workers, wasm: wasmBytes });
  await yieldToEventLoop(); // (the workers' start and the course's data: two tasks, not one)
  const page = createPage(mha, scheduler, compute);
  const { lessons } = page;
  observePendingFigures(); // a figure that comes into view is drawn at once
  page.firstRender = firstRender(page, rendered, sections, toFragment);
  await page.firstRender;

  const tools = document.querySelector('#toc .toc-tools');
  const ipynb = { id: 'download-notebook', version: mha.version };
  tools?.append(ipynbButton(page.ctx.ipynbCells, ipynb).element);

  exposePage(page, compute);

  // the sections whose first figures come back from the compute engine (the playground's)
  await Promise.allSettled(SECTIONS.map((s) => lessons[s.key].ready));
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
  for (const s of SECTIONS) if (!page.started.has(s.key)) lessons[s.key].afterReady();
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
