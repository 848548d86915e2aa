// Accessibility of every view of the page (Start here, each lesson, the check, the playground),
// at a desktop width (1280×800) and a phone width (390×844), once every view is built and the
// gradient checks have finished (nothing changes any more):
//   - axe-core (node_modules/axe-core, pinned) with every rule tagged WCAG 2.0/2.1 A or AA or
//     best-practice finds nothing, with every <details> open so the code blocks and value tables
//     inside them are checked too. No rule is excluded. axe's "incomplete" results (colour contrast
//     of SVG text over heatmap cells and of text over the tables' scroll shadows, which it cannot
//     compute) are reported as a diagnostic, not asserted.
//   - the page never scrolls sideways, and everything wider than its place sits in a scroll
//     container a keyboard can reach (tabindex=0) and a screen reader can name (role + label).
// At 390 px it also saves a screenshot of each view to test-results/phone/<view>.png (for
// looking at the page on a phone; git-ignored).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { useBrowser, repoRoot, consoleErrors, showView } from './browser.mjs';
import { VIEW_IDS, waitSettled, runAxe, describeViolations } from './a11y.mjs';

const session = useBrowser();

const phoneDir = join(repoRoot, 'test-results', 'phone');

/**
 * Open every <details> and wait until the NumPy scripts inside have been written out and the
 * gallery of common bugs is drawn.
 */
async function openAllDetails(page) {
  const opened = await page.evaluate(() => {
    const closed = [...document.querySelectorAll('details:not([open])')];
    for (const d of closed) d.open = true;
    return closed.length;
  });
  await page.waitForFunction(
    () => [...document.querySelectorAll('details pre code')].every((c) => c.textContent.length > 0),
    null,
    { timeout: 10_000 },
  );
  // a lesson's Go deeper may build what it holds when first opened
  await page.waitForFunction(
    () => [...document.querySelectorAll('details.go-deeper')].every((d) => d.dataset.built),
    null,
    { timeout: 10_000 },
  );
  // the gallery of common bugs computes and draws its cases when first opened
  await page.waitForFunction(
    () => [...document.querySelectorAll('details.bug-gallery')].every((d) => d.dataset.built),
    null,
    { timeout: 30_000 },
  );
  return opened;
}

/**
 * In the page: what scrolls sideways and whether it may. Returns { scrollWidth, innerWidth,
 * scrollers: [{ what, ok, why }], stickingOut: [what] } where scrollers are the elements that
 * scroll horizontally (each must be focusable with tabindex=0, have a role and an accessible
 * name), and stickingOut the elements reaching past the viewport outside any scroll container.
 */
function horizontalLayout() {
  const vw = window.innerWidth;
  const what = (e) => {
    const cls =
      typeof e.className === 'string' && e.className
        ? `.${e.className.trim().split(/\s+/).join('.')}`
        : '';
    const id = e.id ? `#${e.id}` : '';
    const sec = e.closest('section')?.id;
    return `${e.tagName.toLowerCase()}${id}${cls}${sec ? ` in section#${sec}` : ''}`;
  };
  const scrollsX = (e) => {
    const o = getComputedStyle(e).overflowX;
    return (o === 'auto' || o === 'scroll') && e.scrollWidth > e.clientWidth + 1;
  };
  // the role and accessible name a screen reader announces when the box gets focus: an explicit
  // role, or a <figure>'s own; aria-label, aria-labelledby, or a <figure>'s <figcaption>
  const roleOf = (e) => e.getAttribute('role') || (e.tagName === 'FIGURE' ? 'figure' : '');
  const nameOf = (e) => {
    const label = e.getAttribute('aria-label')?.trim();
    if (label) return label;
    const ids = e.getAttribute('aria-labelledby')?.split(/\s+/) ?? [];
    const byIds = ids
      .map((id) => document.getElementById(id)?.textContent.trim() ?? '')
      .join(' ')
      .trim();
    if (byIds) return byIds;
    return e.tagName === 'FIGURE'
      ? (e.querySelector(':scope > figcaption')?.textContent.trim() ?? '')
      : '';
  };
  const all = [...document.body.querySelectorAll('*')];
  const formControl = (e) => e.matches('input, select, textarea');
  const scrollers = all
    .filter((e) => !formControl(e) && scrollsX(e))
    .map((e) => {
      const why = [];
      if (e.getAttribute('tabindex') !== '0') why.push('not focusable (no tabindex="0")');
      if (!roleOf(e)) why.push('no role');
      if (!nameOf(e)) why.push('no accessible name');
      return {
        what: `${what(e)} (scrolls ${e.scrollWidth - e.clientWidth} px)`,
        ok: !why.length,
        why: why.join(', '),
      };
    });
  // elements past the viewport's edges; inside a scroll (or clipping) container they are that
  // container's business, which is checked above (or is itself past the edge, and listed)
  const stickingOut = all
    .filter((e) => {
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return false;
      if (r.right <= vw + 0.5 && r.left >= -0.5) return false;
      for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== 'visible') return false;
      }
      return true;
    })
    .map((e) => {
      const r = e.getBoundingClientRect();
      return `${what(e)} (x ${Math.round(r.left)} to ${Math.round(r.right)})`;
    });
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: vw,
    scrollers,
    stickingOut,
  };
}

/** A screenshot of the whole open view at phone width (test-results/phone/<view>.png). */
async function phoneScreenshot(page, id) {
  mkdirSync(phoneDir, { recursive: true });
  const path = join(phoneDir, `${id}.png`);
  await page.screenshot({ path, fullPage: true });
  const { w, h } = await page.evaluate(() => ({
    w: document.documentElement.scrollWidth,
    h: document.documentElement.scrollHeight,
  }));
  assert.ok(h > 300, `#${id}: the page is ${h} px high`);
  return `${relative(repoRoot, path)} (${w}×${h})`;
}

/** The page never scrolls sideways; what is wider than its place scrolls in a usable box. */
async function checkLayout(t, page) {
  const m = await page.evaluate(horizontalLayout);
  const bad = m.scrollers.filter((s) => !s.ok).map((s) => `${s.what}: ${s.why}`);
  assert.ok(
    m.scrollWidth <= m.innerWidth,
    `the page scrolls sideways: scrollWidth ${m.scrollWidth} > innerWidth ${m.innerWidth}`,
  );
  assert.deepEqual(m.stickingOut, [], 'elements past the viewport, outside any scroll container');
  assert.deepEqual(bad, [], 'horizontal scroll containers a keyboard or screen reader cannot use');
  const list = m.scrollers.map((s) => s.what).join('; ');
  t.diagnostic(
    `scrollWidth ${m.scrollWidth} <= innerWidth ${m.innerWidth}; ${m.scrollers.length} ` +
      `horizontal scroll container(s), all focusable, with a role and a name${list ? `: ${list}` : ''}`,
  );
}

/** axe-core over the whole document: no violation; the incomplete results as a diagnostic. */
async function checkAxe(t, page, what) {
  const r = await runAxe(page);
  const count = r.violations.reduce((n, v) => n + v.nodes.length, 0);
  const head = `axe-core ${r.version} at ${what} found ${r.violations.length} rule(s) violated`;
  assert.equal(
    r.violations.length,
    0,
    `${head} on ${count} element(s):\n${describeViolations(r.violations)}`,
  );
  const inc = Object.entries(r.incomplete).map(([id, n]) => `${id} ${n}`);
  t.diagnostic(
    `axe-core ${r.version} at ${what}: 0 violations; needs review (axe "incomplete", not ` +
      `asserted): ${inc.join(', ') || 'none'}`,
  );
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  const size = `${viewport.width}×${viewport.height}`;
  const phone = viewport.width < 500;

  test(`accessibility at ${size}, every view: axe-core finds nothing, nothing scrolls out of reach`, async (t) => {
    const { page, log, close } = await session.open('', { viewport, timeout: 60_000 });
    try {
      await waitSettled(page);
      const opened = await openAllDetails(page);
      for (const id of VIEW_IDS) {
        await showView(page, id);
        if (phone) {
          await t.test(`#${id}: a screenshot at phone width`, async (st) => {
            st.diagnostic(await phoneScreenshot(page, id));
          });
        }
        await t.test(
          `#${id}: no sideways scrolling; wide content scrolls in a focusable, named box`,
          (st) => checkLayout(st, page),
        );
        await t.test(
          `#${id}: axe-core: 0 violations (WCAG 2.0/2.1 A and AA, best practices)`,
          (st) =>
            checkAxe(st, page, `${size}, #${id} (every figure drawn, ${opened} <details> opened)`),
        );
      }
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      assert.deepEqual(log.errors, [], 'page errors');
    } finally {
      await close();
    }
  });
}
