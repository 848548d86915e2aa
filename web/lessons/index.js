// index.js - the page's sections and views, in page order: the one list that web/app.js (the
// lesson bar, the router), window.mhaPage, "Use my arrays" and the tests derive from.
//
// The page shows one view at a time (Start here, a lesson, the check, the playground), each at
// its own address (#lesson-3); a view is built when it is first opened, and kept.
//
// Adding a lesson: one file in web/lessons/ whose render(ctx) follows the contract below, one
// entry in SECTIONS (where it sits in the page) and one in VIEWS, and its <section> in
// web/index.html with a <div class="lesson-body" id="<body>"> and a link in the lesson bar
// (tests/lessons/registry.test.mjs checks that they agree).

import { renderSentence } from './sentence.js';

/**
 * What a section's render receives.
 * @typedef {object} SectionContext
 * @property {object} mha        the engine (web/mha.js loadMHA)
 * @property {object} scheduler  the page's job scheduler (web/jobs/scheduler.js)
 * @property {object} compute    the compute engine (web/jobs/compute.js createCompute)
 * @property {() => object[]} ipynbCells  every section's NumPy script as the page holds it now,
 *   in page order (the .ipynb download)
 * @property {HTMLElement} body  the section's body, empty: render fills it
 * @property {object} data       lessons 3 and 4's arrays: the course's (courseData) or, with
 *   `data: true` and a notebook's arrays in use, the notebook's (lessonData)
 * @property {object|null} custom  the notebook's arrays this section computes from (see
 *   `custom` below), null: the course's
 * @property {object} [prepared]  what its `prepare` computed (its first build; a section drawn
 *   again computes in its render)
 * @property {(custom: object) => void} onUse  "Use my arrays in the lessons" (the check)
 * @property {() => void} onBack  back to the course's arrays (the check)
 */

/**
 * What a section's render returns; every member may be left out (lessonView fills it in).
 * @typedef {object} SectionView
 * @property {() => object|null} figures  the numbers its figures show, JSON-able
 *   (window.mhaPage.figures(); the browser tests compare them with the Node API's)
 * @property {(() => string)|null} script  its NumPy script as shown now (a cell of the .ipynb)
 * @property {Promise<unknown>} ready  settles when its first figures are on screen (mha:ready
 *   waits for those of the first view opened)
 * @property {() => (void|Promise<unknown>)} afterReady  starts its background jobs (gradient
 *   checks, training), once, right after its first render; a promise when it starts one later
 *   (lesson 4: once its panel is painted), settled once it has
 * @property {() => void} dispose  cancels its jobs and frees its wasm memory (before it is drawn
 *   again with other arrays)
 * @property {(custom: object|null) => void} showCustom  told which notebook's arrays the page
 *   now uses (null: the course's)
 * @property {() => object|null} state  what the browser tests read of it (the playground's
 *   settings, the check's arrays and rows)
 */

/**
 * A section of the page.
 * @typedef {object} SectionEntry
 * @property {string} key    its name in window.mhaPage.figures() and the tests
 * @property {string} id     its <section id> in web/index.html (the address's #fragment)
 * @property {string} body   the id of its <div class="lesson-body">, ending in "body": the ids of
 *   the elements it builds start with what comes before ("l4-" of "l4-body"), so an address
 *   whose #fragment names one of them opens this section's view (viewOfId)
 * @property {string} title  its name in an error message ("Lesson 1 could not be computed: …")
 * @property {() => Promise<(ctx: SectionContext) => SectionView>} load  its render(ctx), which
 *   builds the section into ctx.body (when its view is first opened, and again with "Use my
 *   arrays") and returns its view; its module is loaded the first time (the page's bundle keeps
 *   each lesson in a script of its own, loaded when its view is first opened: make bundle)
 * @property {(ctx: SectionContext) => {promise: Promise<object>}} [prepare]  its computing as a
 *   job of the compute engine (a worker, where there is one), started with its script's load:
 *   the build's task then only draws (ctx.prepared); a failed job leaves it to the render
 * @property {string|null} mark  the performance mark set once it is drawn
 * @property {'part'|'all'|null} custom  what it takes of a notebook's arrays ("Use my arrays"):
 *   its own part (custom[key]: lessons 1 and 2), all of them (when they feed lessons 3-5), or
 *   nothing (null: it is never drawn again)
 * @property {boolean} data  it computes from lessons 3 and 4's arrays (ctx.data)
 */

/** @type {readonly SectionEntry[]} */
export const SECTIONS = Object.freeze(
  [
    {
      key: 'sentence',
      id: 'sentence',
      body: 'sentence-body',
      title: 'The sentence',
      load: async () => renderSentence, // (Start here's: in the first script)
      mark: null,
      custom: null,
      data: false,
    },
    {
      key: 'lesson1',
      id: 'lesson-1',
      body: 'l1-body',
      title: 'Lesson 1',
      load: () => import('./lesson1.js').then((m) => m.renderLesson1),
      mark: 'mha:lesson-1',
      custom: 'part',
      data: false,
    },
    {
      key: 'lesson2',
      id: 'lesson-2',
      body: 'l2-body',
      title: 'Lesson 2',
      load: () => import('./lesson2.js').then((m) => m.renderLesson2),
      mark: 'mha:lesson-2',
      custom: 'part',
      data: false,
    },
    {
      key: 'lesson3',
      id: 'lesson-3',
      body: 'l3-body',
      title: 'Lesson 3',
      load: () => import('./lesson3.js').then((m) => m.renderLesson3),
      mark: 'mha:lesson-3',
      custom: 'all',
      data: true,
    },
    {
      key: 'lesson4',
      id: 'lesson-4',
      body: 'l4-body',
      title: 'Lesson 4',
      load: () => import('./lesson4.js').then((m) => m.renderLesson4),
      prepare: (ctx) => ctx.compute.lesson4({ data: ctx.custom ? ctx.data : null, name: 'l4' }),
      mark: 'mha:lesson-4',
      custom: 'all',
      data: true,
    },
    {
      key: 'lesson5',
      id: 'lesson-5',
      body: 'l5-body',
      title: 'Lesson 5',
      load: () => import('./lesson5.js').then((m) => m.renderLesson5),
      mark: 'mha:lesson-5',
      custom: 'all',
      data: false,
    },
    {
      key: 'check',
      id: 'notebook-check',
      body: 'nb-body',
      title: 'The notebook check',
      load: () => import('./check.js').then((m) => m.renderCheck),
      mark: null,
      custom: null,
      data: false,
    },
    {
      key: 'playground',
      id: 'playground',
      body: 'pg-body',
      title: 'The playground',
      load: () => import('./playground/index.js').then((m) => m.renderPlayground),
      mark: 'mha:playground',
      custom: 'all',
      data: false,
    },
  ].map((s) => Object.freeze(s)),
);

const NONE = () => null;
const NOTHING = () => {};

/** A section's view with every member of SectionView (what render left out does nothing). */
export function lessonView(view = {}) {
  return {
    figures: NONE,
    script: null,
    ready: Promise.resolve(),
    afterReady: NOTHING,
    dispose: NOTHING,
    showCustom: NOTHING,
    state: NONE,
    ...view,
  };
}

/** The section's entry by key; throws for a key no section has. */
export function sectionByKey(key) {
  const s = SECTIONS.find((x) => x.key === key);
  if (!s) throw new Error(`no section "${key}" (sections: ${SECTIONS.map((x) => x.key)})`);
  return s;
}

/**
 * The views, in the order of the lesson bar: each is shown alone at its own address (#id, the
 * id of its first <section>), made of the <section>s listed (ids in web/index.html); `nav` is
 * its name in the lesson bar, `title` in the previous/next links and the document's title;
 * `maps`: its first build draws heatmaps (opened first, the page prepares their one-time costs
 * while the wasm compiles; default true).
 * @type {readonly {id: string, nav: string, title: string, sections: readonly string[],
 *   maps: boolean}[]}
 */
export const VIEWS = Object.freeze(
  [
    { id: 'start-here', nav: 'Start', title: 'Start here', sections: ['start-here', 'sentence'] },
    { id: 'lesson-1', nav: '1 · One head', title: 'Lesson 1: why one head isn’t enough' },
    { id: 'lesson-2', nav: '2 · Splitting', title: 'Lesson 2: splitting into heads' },
    {
      id: 'lesson-3',
      nav: '3 · Parallel heads',
      title: 'Lesson 3: parallel attention and concatenation',
    },
    { id: 'lesson-4', nav: '4 · Backward', title: 'Lesson 4: the backward pass', maps: false },
    { id: 'lesson-5', nav: '5 · Training', title: 'Lesson 5: the layer, trained' },
    { id: 'notebook-check', nav: 'Check', title: 'Check your notebook', maps: false },
    { id: 'playground', nav: 'Playground', title: 'Playground' },
  ].map((v) => Object.freeze({ maps: true, ...v, sections: Object.freeze(v.sections ?? [v.id]) })),
);

/** The registry's sections of a view (Start here's own section is the page's HTML: not one). */
export const sectionsOf = (view) => SECTIONS.filter((s) => view.sections.includes(s.id));

/**
 * The view that holds the element with this id: the view of the <section> it is in (pass
 * `sectionId`, from the page) or, for an element a section builds (not in the page yet), the
 * view of the section whose body id's prefix it starts with ('l4-gradcheck': lesson 4, whose
 * body is 'l4-body'); null for none.
 */
export function viewOfId(id, sectionId = null) {
  const section =
    sectionId ?? SECTIONS.find((s) => String(id).startsWith(s.body.replace(/body$/, '')))?.id;
  return VIEWS.find((v) => v.sections.includes(section ?? id)) ?? null;
}

/**
 * What section `entry` computes from of a notebook's arrays (custom, or null: none loaded): its
 * own entry (custom[key]: a lesson's part or the arrays of its own file) or, in a custom without
 * one, all of them when they feed lessons 3-5 (custom.main); null: the course's.
 */
export function customFor(custom, entry) {
  if (!custom || !entry.custom) return null;
  if (entry.custom === 'part' || entry.key in custom) return custom[entry.key] ?? null;
  return custom.main ? custom : null;
}
