// app.js - entry of the companion page (bundled into app.bundle.js by `make bundle`).
//
// Loads the wasm module and shows one view at a time (web/lessons/index.js VIEWS: Start here, a
// lesson, the check, the playground), the one the address names (#lesson-3, or an element in it:
// #l4-gradcheck); a view is built when it is first opened and kept (its sections' scripts
// loaded then, make bundle's chunks; their render(ctx), plain functions), and its background
// work (gradient checks, training) starts then, in the compute engine (web/jobs/compute.js:
// workers, or main-thread slices). Marks `mha:ready` once the first view is drawn,
// `mha:checks-done` whenever the checks started so far are done.
performance.mark('mha:start');

// first: the wasm's compilation starts before the other modules run (boot.js)
import { mhaPromise, wasmBytes } from './boot.js';
import { courseData } from './model/course.js';
import { afterFrame, Scheduler, yieldToEventLoop } from './jobs/scheduler.js';
import { createCompute } from './jobs/compute.js';
import { setFullPrecision } from './components/numbers.js';
import { divergingPacked, sequentialPacked } from './components/scales.js';
import { textMeasurer } from './components/heatmap/measure.js';
import { heatmap } from './components/heatmap.js';
import { ipynbButton, sectionText } from './components/downloads.js';
import { viewPager } from './components/view-pager.js';
import { renderStartHere } from './lessons/start-here.js';
import {
  SECTIONS,
  VIEWS,
  customFor,
  lessonView,
  sectionByKey,
  sectionsOf,
  viewOfId,
} from './lessons/index.js';
import { parseQuery } from './model/settings.js';

/**
 * What the page needs to show a notebook's arrays in the lessons: { lessonBanner, lessonData },
 * loaded the first time a notebook's arrays are used (their modules are the check's, not the
 * first view's).
 */
const loadCustomKit = () =>
  Promise.all([import('./components/custom-banner.js'), import('./model/custom-arrays.js')]).then(
    ([banner, arrays]) => ({ lessonBanner: banner.lessonBanner, lessonData: arrays.lessonData }),
  );

function lessonError(body, name, err, what = 'computed') {
  const p = document.createElement('p');
  p.className = 'error';
  p.setAttribute('role', 'alert');
  p.textContent = `${name} could not be ${what}: ${err.message}`;
  body.replaceChildren(p);
  console.error(err);
}

/** What a link to an element of another view may give the focus to. */
const FOCUSABLE = 'button:not([disabled]), a[href], input:not([hidden]), select, textarea';

/** The address's #fragment (an element's id), or ''. */
const fragment = () => decodeURIComponent(location.hash.slice(1));

/**
 * Where the address points: { view, target } with target the id of the element to scroll to
 * (null: the view's top). An element outside every view (the lesson bar's) keeps the view open
 * (`current`); no fragment but the playground's settings in the query (a link copied from it):
 * the playground; no fragment, or one that names nothing of the page: Start here.
 */
function route(current) {
  const id = fragment();
  if (!id && Object.keys(parseQuery(location.search)).length) {
    return { view: viewOfId(sectionByKey('playground').id), target: null };
  }
  const element = id ? document.getElementById(id) : null;
  if (element && !element.closest('section')) return { view: current ?? VIEWS[0], target: id };
  const view = id ? viewOfId(id, element?.closest('section').id ?? null) : null;
  if (!view) return { view: VIEWS[0], target: null };
  return { view, target: id === view.id ? null : id };
}

/** A section's SectionContext (lessons/index.js); `prepared`: what its prepare computed. */
function sectionContext(page, s, prepared) {
  const custom = customFor(page.custom, s);
  return {
    ...page.ctx,
    body: document.getElementById(s.body),
    custom,
    prepared,
    // (made when a section reads it: lessons 3-5; the course's are drawn once, then shared)
    get data() {
      return custom && s.data ? page.kit.lessonData(custom) : page.data();
    },
  };
}

/**
 * Render one section into its body (registry entry `s`): with page.custom (a notebook's arrays in
 * use) it gets what it takes of them (customFor), lessons 3 and 4 their arrays as `data`; else
 * the course's. A section that throws shows why and gets an empty view. With a notebook's arrays
 * in use, the section's banner goes over it (in use, or why not).
 */
function renderSection(page, s, prepared) {
  const ctx = sectionContext(page, s, prepared);
  const { body } = ctx;
  try {
    page.lessons[s.key] = lessonView(page.renders[s.key](ctx));
  } catch (err) {
    page.lessons[s.key] = lessonView();
    lessonError(body, s.title, err);
  }
  if (page.custom && s.custom) renderBanner(page, s);
  else removeBanner(page, s);
}

function removeBanner(page, s) {
  page.banners.get(s.key)?.remove();
  page.banners.delete(s.key);
}

/** The banner over a section that takes a notebook's arrays: in use, or why not. */
function renderBanner(page, s) {
  const body = document.getElementById(s.body);
  page.banners.get(s.key)?.remove();
  const onBack = () => useArrays(page, null, body.closest('section'));
  const banner = page.kit.lessonBanner({
    id: `${s.body}-back`,
    key: s.key,
    custom: page.custom,
    onBack,
  });
  page.banners.set(s.key, banner);
  body.before(banner);
}

/**
 * Build a view once (a promise, kept): its sections' scripts loaded, then rendered (each
 * section's mark set), each told which arrays are in use, and their background work started
 * (afterReady); the measure mha:build:<id> says how long the rendering took; then
 * page.onBuilt(view). A section whose script could not be loaded says so; opening the view
 * again tries again.
 */
function buildView(page, view) {
  if (!page.built.has(view.id)) page.built.set(view.id, build(page, view));
  return page.built.get(view.id);
}

async function build(page, view) {
  const sections = sectionsOf(view).filter((s) => !page.lessons[s.key]);
  for (const s of sections) document.getElementById(s.body).setAttribute('aria-busy', 'true');
  // their computing, where a section has some, runs in the compute engine while scripts load
  const jobs = sections.map((s) => s.prepare?.(sectionContext(page, s)).promise);
  const loaded = await Promise.allSettled(sections.map((s) => s.load()));
  const prepared = await Promise.allSettled(jobs);
  // (a task of its own: not after the scripts' evaluation or the job's reply, in theirs)
  await yieldToEventLoop();
  const t0 = performance.now();
  const drawn = sections.filter((s, i) => {
    const body = document.getElementById(s.body);
    body.removeAttribute('aria-busy');
    if (loaded[i].status === 'rejected') {
      lessonError(body, s.title, loaded[i].reason, 'loaded (open it again to retry)');
      return false;
    }
    page.renders[s.key] = loaded[i].value;
    body.replaceChildren(); // (a failed load's message)
    renderSection(page, s, prepared[i].value);
    if (s.mark) performance.mark(s.mark);
    page.lessons[s.key].showCustom(page.custom);
    return true;
  });
  performance.measure(`mha:build:${view.id}`, { start: t0 }); // (its time, for the bench)
  // the background work (gradient checks: the workers' start) once the view is painted, so that
  // a worker computing on the other core does not slow its first frame; a section drawn again
  // meanwhile ("Use my arrays") has started its own
  const views = drawn.map((s) => page.lessons[s.key]);
  await afterFrame();
  // (a section's afterReady may return a promise: its jobs submitted, so that page.onBuilt's
  // "every check done" counts them)
  await Promise.all(drawn.map((s, i) => page.lessons[s.key] === views[i] && views[i].afterReady()));
  if (drawn.length < sections.length) page.built.delete(view.id);
  page.onBuilt(view);
}

/** Every view built (what figures(), the .ipynb and the tests need of the others). */
function buildAll(page) {
  return Promise.all(VIEWS.map((v) => buildView(page, v)));
}

/**
 * Show the view the address points to, the others hidden (built or not); the lesson bar marks it
 * and the document's title names it. Then scroll: to the element the address names, else, when
 * the view changed, to the top; a reader who followed a link (not the first load) gets the focus
 * on the view's heading, so a screen reader starts there. Returns a promise, settled once the
 * page is scrolled to the element (at once when there is none).
 */
function showRoute(page, { first = false } = {}) {
  const { view, target } = route(page.view);
  const changed = page.view !== view;
  page.view = view;
  const built = buildView(page, view);
  for (const v of VIEWS) {
    for (const id of v.sections) document.getElementById(id).hidden = v !== view;
    document.getElementById(`pager-${v.id}`).hidden = v !== view;
  }
  for (const a of document.querySelectorAll('#toc a[href^="#"]')) {
    if (a.getAttribute('href') === `#${view.id}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${view.title} · ${page.title}`;
  document.documentElement.dataset.view = view.id; // (style.css: the header's lede on Start only)
  if (target) {
    // (an element the view builds is there once it is built; scrolled to in a task after the
    // next frame: the view's top is laid out by that frame, the part around the element by the
    // one after, not both in one; a scroll in the frame would lay out both there); a followed
    // link to a control of another view (a lesson's "Check this lesson's arrays": the drop zone)
    // gives it the focus
    return built
      .then(nextFrame)
      .then(yieldToEventLoop)
      .then(() => {
        const e = page.view === view ? document.getElementById(target) : null;
        e?.scrollIntoView();
        if (e && !first && changed && e.matches(FOCUSABLE)) e.focus({ preventScroll: true });
      });
  }
  if (changed && !first) scrollTo(0, 0);
  const heading = document.getElementById(view.sections[0])?.querySelector('h2');
  if (heading && changed && !first) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
  return Promise.resolve();
}

/** Resolves in the next frame, before it is painted (at once where frames are not reported). */
const nextFrame = () =>
  new Promise((resolve) =>
    typeof requestAnimationFrame === 'function'
      ? requestAnimationFrame(() => resolve())
      : resolve(),
  );

/** Each view ends with links to the one before and the one after (hidden with their view). */
function addPagers() {
  VIEWS.forEach((v, i) => {
    const last = document.getElementById(v.sections[v.sections.length - 1]);
    last.after(viewPager({ id: `pager-${v.id}`, prev: VIEWS[i - 1], next: VIEWS[i + 1] }));
  });
}

/**
 * Draw again the built sections that take a notebook's arrays for page.custom (null: the
 * course's): a section is rendered again when it computes from a notebook's arrays now or did
 * before (`before`: the custom arrays in use until now); each gets its banner. A section not
 * built yet gets them when its view is opened.
 */
function rerenderCustom(page, before) {
  const started = [];
  for (const s of SECTIONS.filter((x) => x.custom && page.lessons[x.key])) {
    if (customFor(page.custom, s) || customFor(before, s)) {
      page.lessons[s.key].dispose();
      document.getElementById(s.body).replaceChildren();
      renderSection(page, s);
      started.push(page.lessons[s.key].afterReady());
    } else if (!page.custom) {
      removeBanner(page, s);
    } else {
      renderBanner(page, s);
    }
  }
  for (const s of SECTIONS) page.lessons[s.key]?.showCustom(page.custom);
  Promise.all(started).then(() => page.onBuilt(page.view));
}

/**
 * Use a notebook's arrays (custom) or the course's again (null) in lessons 1-5 and the
 * playground; a Back button that was pressed is gone afterwards, so focus goes to its section's
 * heading (or to "Use my arrays" in the notebook section).
 */
async function useArrays(page, custom, from) {
  try {
    page.kit ??= await loadCustomKit();
  } catch (err) {
    const status = document.getElementById('status');
    status.textContent = `Your arrays could not be used in the lessons: ${err.message}`;
    console.error(err);
    return;
  }
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
  footer.textContent = `mha-wasm ${version}: the first view computed ${Math.round(ms)} ms after navigation (performance marks mha:start … mha:ready).`;
}

/** window.mhaPage: what the browser tests read (figures, settings, the check, the engine). */
function exposePage(page, compute) {
  const { lessons } = page;
  window.mhaPage = {
    /** The open view's id (#lesson-3: 'lesson-3'). */
    get view() {
      return page.view.id;
    },
    /**
     * Build the view with this id (every view: no id), as opening it would, and show nothing; a
     * promise, settled once it is built.
     */
    build(id) {
      if (id === undefined) return buildAll(page).then(() => {});
      return buildView(page, VIEWS.find((v) => v.id === id) ?? VIEWS[0]);
    },
    /**
     * A promise of every section's figures (null: it has none, or could not be computed), by
     * key; a view not built yet is built first (hidden). With a key: { [key]: that section's },
     * building only its view.
     */
    async figures(key) {
      const wanted = key === undefined ? SECTIONS : [sectionByKey(key)];
      await Promise.all(wanted.map((s) => buildView(page, viewOfId(s.id))));
      const f = Object.fromEntries(wanted.map((s) => [s.key, lessons[s.key]?.figures() ?? null]));
      return JSON.parse(JSON.stringify(f));
    },
    /** The playground's settings ({} until its view is built: this starts its build). */
    settings() {
      buildView(page, viewOfId(sectionByKey('playground').id));
      return lessons.playground?.state() ?? {};
    },
    /**
     * The check of a notebook's arrays: loaded arrays, the last statuses, custom arrays in use
     * (only `custom` until its view is built: this starts its build).
     */
    check() {
      buildView(page, viewOfId(sectionByKey('check').id));
      return { ...lessons.check?.state(), custom: !!page.custom };
    },
    /** The compute engine: { kind: 'worker' | 'main-thread', size, reason, cancelled }. */
    get compute() {
      return compute.info();
    },
  };
}

/**
 * The page's state: what every section gets (ctx: the engine, the scheduler, the compute engine,
 * the .ipynb's cells, "Use my arrays"), the course's data (made on first use), the sections'
 * views, the views built so far and the one shown.
 */
function createPage(mha, scheduler, compute) {
  const lessons = {};
  // the .ipynb: every section's NumPy script as the page holds it at the click, in page order
  const ipynbCells = async () => {
    await buildAll(page);
    return SECTIONS.filter((s) => lessons[s.key].script).map((s) => ({
      ...sectionText(document.getElementById(s.body)),
      code: lessons[s.key].script(),
    }));
  };
  const check = document.getElementById(sectionByKey('check').id);
  let data = null;
  const page = {
    ctx: {
      mha,
      scheduler,
      compute,
      ipynbCells,
      onUse: (custom) => useArrays(page, custom, check),
      onBack: () => useArrays(page, null, check),
    },
    data: () => (data ??= courseData(mha)), // lessons 3 and 4 share the course demo's X, W, dY
    custom: null, // a notebook's arrays in the sections that take them (see rerenderCustom)
    lessons, // each built section's view (lessonView), by key
    renders: {}, // each loaded section's render, by key
    built: new Map(), // view id -> the promise of its build
    view: null, // the view shown
    banners: new Map(),
    kit: null, // loadCustomKit's, once a notebook's arrays are used
    title: document.title,
    onBuilt: () => {}, // (main: the status line follows the checks)
  };
  return page;
}

/**
 * The status line and the mark mha:checks-done follow the background work: "continue in the
 * background" while the checks of the views built so far run, "done" once they all are.
 */
function followChecks(page, scheduler, compute, version) {
  const status = document.getElementById('status');
  const live = `Computed live by mha-wasm ${version} in your browser.`;
  let serial = 0;
  return () => {
    const mine = ++serial;
    status.textContent = `${live} Gradient checks continue in the background.`;
    Promise.all([checksDone(scheduler), compute.idle()]).then(() => {
      if (mine !== serial) return;
      performance.mark('mha:checks-done');
      status.textContent = `${live} All gradient checks done.`;
    });
  };
}

async function main() {
  const status = document.getElementById('status');
  const precision = document.getElementById('full-precision');
  precision?.addEventListener('change', () => setFullPrecision(precision.checked));
  // the first view's scripts load while the wasm compiles (off this thread); meanwhile, each in
  // a task of its own: Start here's lists, the views' pagers, and, when the first view draws
  // maps, the first map's one-time costs (prepareMaps). (The loads
  // start after a first await: a request made with the bundle's top level on the stack makes a
  // browser that records initiators, as DevTools and Lighthouse do, re-parse the whole bundle.)
  await yieldToEventLoop();
  const first = route(null).view;
  for (const s of sectionsOf(first)) s.load().catch(() => {});
  await yieldToEventLoop();
  renderStartHere();
  await yieldToEventLoop();
  addPagers();
  if (first.maps) await prepareMaps();

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
  // a first view that computes in the workers as it is built (lesson 4): they start here, so
  // that its build's task does not start them; otherwise with the first job, after a build
  if (sectionsOf(first).some((s) => s.prepare)) compute.start();
  await yieldToEventLoop();
  const page = createPage(mha, scheduler, compute);
  const shown = showRoute(page, { first: true });
  const view = page.view; // (the first: mha:ready waits for its figures, and its scroll)
  addEventListener('hashchange', () => showRoute(page));

  // (in place of the lesson bar's disabled one, of the same size: nothing moves)
  const ipynb = { id: 'download-notebook', version: mha.version };
  document
    .getElementById('download-notebook-slot')
    ?.replaceWith(ipynbButton(page.ctx.ipynbCells, ipynb).element);
  exposePage(page, compute);

  // the first figures that come back from the compute engine (the playground's)
  await buildView(page, view);
  await Promise.allSettled(sectionsOf(view).map((s) => page.lessons[s.key]?.ready));
  await shown;
  performance.mark('mha:ready');
  performance.measure('mha:navigation-to-ready', { start: 0, end: 'mha:ready' });
  performance.measure('mha:start-to-ready', 'mha:start', 'mha:ready');
  performance.mark('mha:figures');
  document.documentElement.dataset.ready = '1';
  document.documentElement.dataset.figures = '1';
  showTiming(mha.version);
  page.onBuilt = followChecks(page, scheduler, compute, mha.version);
  page.onBuilt(page.view);
}

/**
 * The first heatmap's one-time costs, each in a task of its own: the colour scales' tables, the
 * font the maps' labels are measured in, the maps' code compiled by making one, kept off the page.
 */
async function prepareMaps() {
  await yieldToEventLoop();
  sequentialPacked(0);
  await yieldToEventLoop();
  divergingPacked(0);
  await yieldToEventLoop();
  textMeasurer()('0', 12);
  await yieldToEventLoop();
  heatmap({ data: [0], rows: 1, cols: 1, title: 'X', scale: 'diverging' });
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
