// a11y.mjs - helpers shared by the accessibility tests (a11y.test.mjs, keyboard.test.mjs): wait
// until the page has stopped changing, run axe-core in it, and describe an element for a message.
// Nothing here is a test by itself.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, waitFiguresDrawn } from './browser.mjs';
import { VIEWS } from '../../web/lessons/index.js';

/** The page's views, in the lesson bar's order (their ids: the addresses #start-here, …). */
export const VIEW_IDS = VIEWS.map((v) => v.id);

/** The gradient-check panels; each one replaces its table while it runs. */
export const GRADCHECK_PANELS = ['l4-gradcheck', 'l5-gradcheck', 'pg-gradcheck'];

/**
 * Wait until the page is settled: every view built (window.mhaPage.build(), as opening each
 * would), the figures drawn (data-figures="1") and the three full gradient checks finished
 * (data-done="1"), so no table or figure is replaced while a test looks.
 */
export async function waitSettled(page, timeout = 120_000) {
  await waitFiguresDrawn(page, timeout);
  await page.evaluate(() => window.mhaPage.build());
  await page.waitForFunction(
    (ids) => ids.every((id) => document.getElementById(id)?.dataset.done === '1'),
    GRADCHECK_PANELS,
    { timeout },
  );
}

// axe-core's rule tags for WCAG 2.0 / 2.1 levels A and AA, and axe's best practices
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

const AXE_SOURCE = join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js');

/**
 * Run axe-core (node_modules/axe-core, no network) over the whole document. The page's CSP
 * (script-src 'self') blocks an injected <script> with inline content, so the library is
 * evaluated through the DevTools protocol instead (page.evaluate is not subject to the CSP).
 * Returns { version, violations: [{ id, impact, help, helpUrl, nodes: [{ target, html,
 * summary }] }], incomplete: { 'rule id': node count } }.
 */
export async function runAxe(page, { tags = AXE_TAGS } = {}) {
  const loaded = await page.evaluate(() => typeof window.axe === 'object');
  if (!loaded) await page.evaluate(readFileSync(AXE_SOURCE, 'utf8'));
  return page.evaluate(async (values) => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values } });
    const incomplete = {};
    for (const v of r.incomplete) incomplete[v.id] = v.nodes.length;
    return {
      version: window.axe.version,
      violations: r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        helpUrl: v.helpUrl,
        nodes: v.nodes.map((n) => ({
          target: n.target.join(' '),
          html: n.html.length > 160 ? `${n.html.slice(0, 160)}…` : n.html,
          summary: n.failureSummary.replace(/\s*\n\s*/g, ' '),
        })),
      })),
      incomplete,
    };
  }, tags);
}

/** One paragraph per violation: rule id, impact, what it requires, then every element. */
export function describeViolations(violations) {
  return violations
    .map((v) => {
      const nodes = v.nodes.map((n) => `    - ${n.target}\n      ${n.html}\n      ${n.summary}`);
      return `  ${v.id} (${v.impact}, ${v.nodes.length} element(s)): ${v.help}\n    ${v.helpUrl}\n${nodes.join('\n')}`;
    })
    .join('\n');
}
