// The gradient-check table brought up to date in place (web/components/tables.js
// refreshGradcheckTable, used by the check panel on each progress report): the same rows, each
// row's ⋯ left open as the reader opened it, and what it shows identical to a table made anew
// from the same rows; another set of tensors, caption or pass line makes a new table instead.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, consoleErrors } from './browser.mjs';

const session = useBrowser();

/** In the page: a table of pending rows, then three reports of a check, in place. */
async function inPlace() {
  const { gradcheckTable, refreshGradcheckTable } = await import('./components/tables.js');
  const row = (tensor, checked, err) => ({
    tensor,
    shape: [2, 3],
    size: 6,
    checked,
    maxAbs: err / 10,
    maxRel: err,
    maxRelSum: err / 2,
    normRel: err / 4,
  });
  const report = (checked, errs) => errs.map((e, i) => row(`d${'ABC'[i]}`, checked, e));
  const opts = { threshold: 1e-6, caption: 'A check', form: 'entry' };
  const seen = (root) => ({
    text: root.innerText,
    status: [...root.querySelectorAll('tbody tr')].map((tr) => tr.dataset.status),
    pass: root.dataset.pass,
    fail: root.dataset.fail,
    summary: root.querySelector('.gradcheck-summary').className,
  });
  const host = document.createElement('div');
  document.body.append(host);
  const root = gradcheckTable(report(0, [0, 0, 0]), opts);
  host.append(root);
  const first = root.querySelector('tbody tr');
  first.querySelector('button.row-more').click(); // the reader opens dA's ⋯
  const steps = [];
  for (const [checked, errs] of [
    [3, [1e-8, 2e-7, 0]],
    [6, [1e-8, 2e-7, 3e-6]],
  ]) {
    const rows = report(checked, errs);
    const kept = refreshGradcheckTable(root, rows, opts);
    const fresh = gradcheckTable(rows, opts);
    host.append(fresh);
    steps.push({
      kept,
      same: root.querySelector('tbody tr') === first,
      got: seen(root),
      want: seen(fresh),
    });
    fresh.remove();
  }
  const open = first.hasAttribute('data-open') && first.querySelector('button').ariaExpanded;
  const others = [
    refreshGradcheckTable(root, report(6, [0, 0]), opts), // two tensors, not three
    refreshGradcheckTable(root, report(6, [0, 0, 0]), { ...opts, caption: 'Another' }),
    refreshGradcheckTable(root, report(6, [0, 0, 0]), { ...opts, form: 'norm' }),
  ];
  host.remove();
  return { steps, open, others };
}

test('the check table updated in place: rows kept, ⋯ kept open, as a new table shows', async () => {
  const { page, log, close } = await session.open();
  try {
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
    const r = await page.evaluate(inPlace);
    for (const [i, s] of r.steps.entries()) {
      assert.equal(s.kept, true, `report ${i}: updated in place`);
      assert.equal(s.same, true, `report ${i}: the same row elements`);
      assert.deepEqual(s.got, s.want, `report ${i}: what it shows = a new table's`);
    }
    assert.deepEqual(r.steps[1].got.status, ['pass', 'pass', 'fail']);
    assert.match(r.steps[1].got.summary, /is-fail/);
    assert.equal(r.open, 'true', "dA's ⋯ still open");
    assert.deepEqual(
      r.others,
      [false, false, false],
      'other tensors, caption or form: a new table',
    );
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});

test("lesson 4's check table fits its width at 1280 px: no sideways scroll", async () => {
  const { page, log, close } = await session.open('#l4-gradcheck');
  try {
    await page.waitForFunction(() => document.querySelector('#l4-gradcheck table'));
    const r = await page.evaluate(() => {
      const table = document.querySelector('#l4-gradcheck table');
      const wrap = table.parentElement;
      return {
        columns: table.tHead.rows[0].cells.length,
        tableWidth: table.getBoundingClientRect().width,
        scroll: wrap.scrollWidth - wrap.clientWidth,
      };
    });
    assert.equal(r.columns, 8, 'the table of eight columns');
    assert.ok(r.scroll <= 0, `scrolls sideways by ${r.scroll} px (table ${r.tableWidth} px)`);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});
