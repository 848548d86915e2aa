// The page with the keyboard only (page.keyboard: Tab, Shift+Tab, Enter, Space, arrows; no mouse,
// no element.focus(), no clicks), at a desktop width (the lesson bar is sticky there) and at a
// phone width, once every view is built and the gradient checks are done:
//   - from the top of the page, Tab reaches the lesson bar's "4 · Backward", Enter opens lesson 4
//     (its heading gets the focus), Tab reaches its gradient-check table (its scroll box has
//     focus), never losing focus to <body>; on a phone the table fits, and Enter on a row's ⋯
//     shows the rest of the row;
//   - Shift+Tab goes back one stop, and the element it lands on is not hidden under the sticky bar;
//   - Tab on to "Next →" at the end of lesson 4, Enter opens lesson 5; Tab to "Run 10 steps",
//     Enter runs ten training steps: the loss table lists steps 0 to 10, the loss went down at
//     every step, the chart says so too, and focus stays on the button; Shift+Tab to "Step" and
//     Space takes one more step;
//   - at every stop the focused element shows a focus ring (:focus-visible with an outline of at
//     least 2 px that is not transparent), is inside the viewport and is not covered by another
//     element.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, consoleErrors, figures, waitFigures } from './browser.mjs';
import { waitSettled } from './a11y.mjs';
import { VIEWS } from '../../web/lessons/index.js';

const session = useBrowser();

/** Every <section> of the page, in page order (focusState's section index). */
const SECTIONS = VIEWS.flatMap((v) => v.sections);

/** In the page: what has focus, how it looks and where it is. */
function focusState(sections) {
  const e = document.activeElement;
  const describe = (n) => {
    if (!n) return 'nothing';
    const id = n.id ? `#${n.id}` : '';
    const cls =
      typeof n.className === 'string' && n.className.trim()
        ? `.${n.className.trim().split(/\s+/).join('.')}`
        : '';
    const text = (n.getAttribute('aria-label') || n.textContent || '').trim().replace(/\s+/g, ' ');
    return `${n.tagName.toLowerCase()}${id}${cls} “${text.slice(0, 40)}”`;
  };
  if (!e || e === document.body || e === document.documentElement) {
    return { none: true, what: describe(e) };
  }
  const cs = getComputedStyle(e);
  // the middle of the element's largest visible box (a link that wraps has one per line: the
  // middle of their bounding box may be on the text between them); what is drawn there should
  // be the element
  const visible = [...e.getClientRects()].map((r) => ({
    left: Math.max(r.left, 0),
    right: Math.min(r.right, innerWidth),
    top: Math.max(r.top, 0),
    bottom: Math.min(r.bottom, innerHeight),
  }));
  const area = (b) => Math.max(0, b.right - b.left) * Math.max(0, b.bottom - b.top);
  const box = visible.sort((a, b) => area(b) - area(a))[0];
  const inView = !!box && area(box) > 0;
  const hit = inView
    ? document.elementFromPoint((box.left + box.right) / 2, (box.top + box.bottom) / 2)
    : null;
  const section = e.closest('section')?.id ?? null;
  return {
    none: false,
    what: `${describe(e)}${section ? ` in section#${section}` : ''}`,
    id: e.id,
    text: e.textContent.trim(),
    section: sections.indexOf(section),
    focusVisible: e.matches(':focus-visible'),
    outline: `${cs.outlineStyle} ${cs.outlineWidth} ${cs.outlineColor}`,
    ring:
      cs.outlineStyle !== 'none' &&
      parseFloat(cs.outlineWidth) >= 2 &&
      !/rgba\(.*,\s*0\)$|transparent/.test(cs.outlineColor),
    inView,
    coveredBy: hit && hit !== e && !e.contains(hit) ? describe(hit) : null,
    inL4Table: !!e.closest('#l4-gradcheck .table-wrap'),
    scrollLeft: e.scrollLeft,
    scrollable: e.scrollWidth - e.clientWidth,
  };
}

/**
 * A keyboard walker: press(key) presses it and returns the new focus state, after asserting that
 * something has focus, with a visible ring, in view and uncovered. steps: every state, in order.
 */
function keyboard(page) {
  const steps = [];
  return {
    steps,
    async press(key) {
      await page.keyboard.press(key);
      const f = { key, ...(await page.evaluate(focusState, SECTIONS)) };
      steps.push(f);
      const where = `after ${key} (stop ${steps.length})`;
      assert.ok(!f.none, `${where}: focus was lost to ${f.what}`);
      assert.ok(f.focusVisible, `${where}: ${f.what} has focus but does not match :focus-visible`);
      assert.ok(f.ring, `${where}: ${f.what} has no visible focus ring (outline: ${f.outline})`);
      assert.ok(f.inView, `${where}: ${f.what} has focus but is outside the viewport`);
      assert.equal(f.coveredBy, null, `${where}: ${f.what} has focus but is covered`);
      return f;
    },
  };
}

/** Tab until pred(focus state) holds (at most `max` presses); returns the state. */
async function tabUntil(kb, pred, what, max = 800) {
  for (let i = 0; i < max; i++) {
    const f = await kb.press('Tab');
    if (pred(f)) return f;
  }
  assert.fail(`${max} Tab presses did not reach ${what}; last: ${kb.steps.at(-1)?.what}`);
}

/** Lesson 5's loss table as the page shows it: [step, lr, loss] per row. */
function lossTable(page) {
  return page.evaluate(() => {
    const caption = [...document.querySelectorAll('#l5-body caption')].find((c) =>
      /loss table/i.test(c.textContent),
    );
    const rows = caption ? [...caption.closest('table').tBodies[0].rows] : [];
    return rows.map((tr) => [...tr.cells].map((c) => c.textContent.trim()));
  });
}

/** Tab to the lesson bar's link named by `name`, Enter: its view opens (the address says so). */
async function openByBar(page, kb, name, hash) {
  const link = await tabUntil(kb, (f) => f.text === name, `the lesson bar's "${name}"`, 14);
  assert.match(link.what, /^a/, link.what);
  await page.keyboard.press('Enter');
  await page.waitForFunction((h) => location.hash === h, hash);
}

async function walkToGradcheck(t, page, kb, phone) {
  // the course's link in the header, then the lesson bar's first link
  const course = await kb.press('Tab');
  assert.match(
    course.what,
    /^a\.course-link .*NumPy course/,
    `the first Tab stop is ${course.what}`,
  );
  const first = await kb.press('Tab');
  assert.match(first.what, /^a.*Start/, `the second Tab stop is ${first.what}`);
  await openByBar(page, kb, '4 · Backward', '#lesson-4');
  const heading = await page.evaluate(focusState, SECTIONS);
  assert.equal(heading.id, 'lesson-4-h', `focus after Enter: ${heading.what}`);
  const opened = kb.steps.length;
  const table = await tabUntil(kb, (f) => f.inL4Table, "lesson 4's gradient-check table");
  const presses = kb.steps.length;
  assert.match(table.what, /table-wrap/, `the table's scroll box itself: ${table.what}`);
  // every stop after the jump is in lesson 4
  const forward = kb.steps.slice(opened).map((s) => s.what);
  for (const what of forward) assert.match(what, /in section#lesson-4$/, what);
  if (phone) {
    // at 390 px the table fits: each row shows the tensor, its error and the result, and its
    // ⋯ button (the next Tab stop) shows the rest
    assert.equal(table.scrollable, 0, `at 390 px the table scrolls sideways (${table.scrollable})`);
    const more = await kb.press('Tab');
    assert.match(more.what, /^button\.row-more/, `the Tab stop after the table: ${more.what}`);
    await page.keyboard.press('Enter');
    const row = await page.evaluate(() => {
      const b = document.activeElement;
      const cells = [...b.closest('tr').cells];
      return {
        expanded: b.getAttribute('aria-expanded'),
        shown: cells.filter((c) => getComputedStyle(c).display !== 'none').length,
        all: cells.length,
      };
    });
    assert.equal(row.expanded, 'true', 'Enter on ⋯ opens the row');
    assert.equal(row.shown, row.all, `every cell of the row shown: ${row.shown} of ${row.all}`);
    t.diagnostic(`at 390 px: Enter on the first row's ⋯ shows its ${row.all} cells`);
    await kb.press('Shift+Tab'); // back to the table
  }
  // back through all of lesson 4 with Shift+Tab (the page scrolls up: nothing may hide the focused
  // element, e.g. the sticky lesson bar), out of it, then forward again to the same table
  for (let back = 0; back < forward.length - 1; back++) {
    const f = await kb.press('Shift+Tab');
    assert.equal(f.what, forward.at(-2 - back), `Shift+Tab ${back + 1}: not the stop Tab visited`);
  }
  const out = await kb.press('Shift+Tab');
  assert.notEqual(out.section, SECTIONS.indexOf('lesson-4'), `out of lesson 4: ${out.what}`);
  for (let i = 0; i < forward.length; i++) await kb.press('Tab');
  assert.ok(kb.steps.at(-1).inL4Table, `${forward.length} Tab presses: ${kb.steps.at(-1).what}`);
  t.diagnostic(
    `Shift+Tab ×${forward.length} back to ${out.what}, and Tab ×${forward.length} forward`,
  );
  t.diagnostic(
    `${presses} Tab presses from the top to lesson 4's gradient-check table ` +
      `(${presses - opened} after Enter on “4 · Backward”): ${table.what}`,
  );
}

async function trainTenSteps(t, page, kb) {
  const start = (await figures(page, 'lesson5')).step;
  assert.equal(start, 0, 'lesson 5 has taken steps before the walk');
  const next = await tabUntil(kb, (f) => /Next/.test(f.text), 'lesson 4’s "Next →"', 200);
  assert.match(next.text, /Lesson 5/, next.what);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash === '#lesson-5');
  const run = await tabUntil(kb, (f) => f.id === 'l5-run', 'lesson 5\'s "Run 10 steps" button', 60);
  assert.equal(run.text, 'Run 10 steps');
  await page.keyboard.press('Enter');
  const f = (
    await waitFigures(page, (x) => x.lesson5.step === 10, {
      what: 'ten training steps after Enter',
      key: 'lesson5',
    })
  ).lesson5;
  await page.waitForFunction(
    () => document.getElementById('l5-run').textContent === 'Run 10 steps',
  );
  const l = f.losses;
  assert.equal(l.length, 11, `losses after ten steps: ${l}`);
  for (let i = 1; i < l.length; i++) assert.ok(l[i] < l[i - 1], `loss ${i} did not go down: ${l}`);
  const rows = await lossTable(page);
  assert.deepEqual(
    rows.map((r) => r[0]),
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10'],
    'the loss table lists steps 0 to 10',
  );
  const shown = rows.map((r) => Number(r[2].replace('−', '-')));
  assert.ok(shown[10] < shown[0], `the loss table: ${shown[0]} at step 0, ${shown[10]} at step 10`);
  const summary = await page.locator('#l5-body .chart-summary').textContent();
  assert.match(summary, /^11 values, from .* at step 0 to .* at step 10/, `chart: ${summary}`);
  const after = await page.evaluate(focusState, SECTIONS);
  assert.equal(after.id, 'l5-run', `focus after the run: ${after.what}`);

  const step = await kb.press('Shift+Tab');
  assert.equal(step.id, 'l5-step', `Shift+Tab from "Run 10 steps": ${step.what}`);
  await page.keyboard.press('Space');
  const g = (
    await waitFigures(page, (x) => x.lesson5.step === 11, { what: 'Space on Step', key: 'lesson5' })
  ).lesson5;
  assert.ok(g.losses[11] < g.losses[10], 'the eleventh step did not lower the loss');
  t.diagnostic(
    `Enter on “Run 10 steps”: loss ${l[0].toFixed(6)} → ${l[10].toFixed(6)} in 10 steps; ` +
      `Space on “Step”: ${g.losses[11].toFixed(6)}`,
  );
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  const size = `${viewport.width}×${viewport.height}`;
  const phone = viewport.width < 500;
  test(`keyboard only at ${size}: open lesson 4, Tab to its gradient check, Next, train lesson 5`, async (t) => {
    const { page, log, close } = await session.open('', { viewport, timeout: 60_000 });
    try {
      await waitSettled(page);
      const kb = keyboard(page);
      await t.test("Tab, Enter on “4 · Backward”, Tab to lesson 4's gradient-check table", (st) =>
        walkToGradcheck(st, page, kb, phone),
      );
      await t.test(
        'Next → lesson 5, Tab to "Run 10 steps", Enter: ten steps, the loss goes down',
        (st) => trainTenSteps(st, page, kb),
      );
      const rings = new Set(kb.steps.map((s) => s.outline));
      t.diagnostic(`${kb.steps.length} stops, each with a focus ring: ${[...rings].join('; ')}`);
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      assert.deepEqual(log.errors, [], 'page errors');
    } finally {
      await close();
    }
  });
}

const JUMP =
  'keyboard only at 1280×800: a lesson bar link opens its view below the sticky bar, Tab follows';
test(JUMP, async (t) => {
  const { page, log, close } = await session.open('', {
    viewport: { width: 1280, height: 800 },
    timeout: 60_000,
  });
  try {
    await waitSettled(page);
    const kb = keyboard(page);
    await openByBar(page, kb, '4 · Backward', '#lesson-4');
    const heading = await page.evaluate(() => {
      const h = document.getElementById('lesson-4-h');
      const r = h.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + 5, r.top + r.height / 2);
      const bar = document.getElementById('toc').getBoundingClientRect();
      return { top: r.top, barBottom: bar.bottom, visible: h === hit || h.contains(hit) };
    });
    assert.ok(
      heading.visible && heading.top > heading.barBottom,
      `lesson 4's heading at y ${heading.top}, the contents bar ends at ${heading.barBottom}`,
    );
    // The first stops after the jump stay in lesson 4: its course link, the course box's table
    // and link, the table of gradients (scroll boxes a keyboard user may scroll), then the
    // lesson's first control: the gradient check's stencil.
    const stops = [];
    let next = await kb.press('Tab');
    while (next.id !== 'l4-gradcheck-stencil' && stops.length < 8) {
      assert.match(next.what, /in section#lesson-4$/, `a Tab after the jump: ${next.what}`);
      stops.push(next.what);
      next = await kb.press('Tab');
    }
    assert.equal(
      next.id,
      'l4-gradcheck-stencil',
      `Tabs after the jump: ${[...stops, next.what].join(' | ')}`,
    );
    t.diagnostic(
      `heading at y ${Math.round(heading.top)} below the bar (ends at ${Math.round(heading.barBottom)}); next Tab: ${next.what}`,
    );
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});
