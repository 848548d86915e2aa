// Bad input in the playground: each case shows a message in #pg-error (role="alert") and leaves the
// last good figures untouched; HTML typed into the sentence stays text (no element, no dialog).
// Bad settings in the URL (?C=64&h=5, ?lr=NaN) show a message too and the page still renders.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  useBrowser,
  figures,
  setValue,
  forceValue,
  consoleErrors,
  waitFiguresDrawn,
} from './browser.mjs';
import * as X from './expected.mjs';

const session = useBrowser();

const errorText = (page) => page.locator('#pg-error').evaluate((el) => el.textContent.trim());

async function waitError(page, what) {
  try {
    await page.waitForFunction(
      () => document.getElementById('pg-error')?.textContent.trim().length > 0,
      null,
      { timeout: 5000 },
    );
  } catch {
    assert.fail(`${what}: no message appeared in #pg-error`);
  }
  return errorText(page);
}

async function waitNoError(page, what) {
  try {
    await page.waitForFunction(
      () => document.getElementById('pg-error')?.textContent.trim() === '',
      null,
      { timeout: 5000 },
    );
  } catch {
    assert.fail(`${what}: #pg-error still says "${await errorText(page)}" after a good input`);
  }
}

// What the playground shows: its figures and the text of its rendered figures/tables.
async function snapshot(page) {
  const pg = await figures(page, 'playground');
  // the gradient check fills in on its own schedule (sampled, then full): left out
  const text = await page.evaluate(() =>
    [...document.querySelectorAll('#playground figure, #playground table')]
      .filter((e) => !e.closest('#pg-gradcheck'))
      .map((e) => e.textContent)
      .join('\n'),
  );
  const rest = { ...pg };
  delete rest.gradcheck; // so are the check's own figures
  delete rest.sampled;
  return { figures: rest, text };
}

test('playground bad input: a message in #pg-error, the last good figures unchanged', async (t) => {
  const { page, log, close } = await session.open('#playground');
  try {
    const role = await page.locator('#pg-error').getAttribute('role');
    assert.equal(role, 'alert', '#pg-error role');
    assert.equal(await errorText(page), '', '#pg-error is empty at load');
    await waitFiguresDrawn(page);
    const good = await snapshot(page);
    assert.deepEqual(good.figures.tokens, X.tokenize(X.DEFAULT_SENTENCE));
    assert.ok(good.text.length > 0, 'the playground shows figures');
    const imgsBefore = await page.locator('img').count();

    const cases = [
      [
        'empty sentence',
        () => setValue(page, '#pg-sentence', ''),
        () => setValue(page, '#pg-sentence', X.DEFAULT_SENTENCE),
      ],
      [
        'only spaces',
        () => setValue(page, '#pg-sentence', '   '),
        () => setValue(page, '#pg-sentence', X.DEFAULT_SENTENCE),
      ],
      [
        '1000 tokens',
        () => setValue(page, '#pg-sentence', 'a '.repeat(1000)),
        () => setValue(page, '#pg-sentence', X.DEFAULT_SENTENCE),
      ],
      [
        '129 tokens',
        () => setValue(page, '#pg-sentence', 'w '.repeat(129)),
        () => setValue(page, '#pg-sentence', X.DEFAULT_SENTENCE),
      ],
      [
        'HTML in the sentence',
        () => setValue(page, '#pg-sentence', '<img src=x onerror=alert(1)>'),
        () => setValue(page, '#pg-sentence', X.DEFAULT_SENTENCE),
      ],
      ['NaN lr', () => forceValue(page, '#pg-lr', 'NaN'), () => setValue(page, '#pg-lr', '0.1')],
      ['empty lr', () => forceValue(page, '#pg-lr', ''), () => setValue(page, '#pg-lr', '0.1')],
      [
        'non-integer seed',
        () => forceValue(page, '#pg-seed', '1.5'),
        () => setValue(page, '#pg-seed', '42'),
      ],
    ];
    const messages = [];
    const checkBad = async (what) => {
      const msg = await waitError(page, what);
      messages.push(`${what}: "${msg}"`);
      await page.waitForTimeout(300); // anything debounced would have re-rendered by now
      const now = await snapshot(page);
      assert.deepEqual(now.figures, good.figures, `${what}: the figures changed`);
      assert.equal(now.text, good.text, `${what}: the rendered playground changed`);
      if (what === 'HTML in the sentence') {
        assert.equal(await page.locator('img').count(), imgsBefore, 'an <img> was created');
        assert.equal(await page.locator('[onerror]').count(), 0, 'an element with onerror exists');
        assert.equal(
          await page.locator('#pg-sentence').inputValue(),
          '<img src=x onerror=alert(1)>',
          'the input keeps the text',
        );
        assert.equal(
          await page
            .locator('#pg-error *')
            .evaluateAll((els) =>
              els
                .filter(
                  (e) =>
                    !['P', 'SPAN', 'STRONG', 'EM', 'CODE', 'BR', 'UL', 'LI', 'DIV'].includes(
                      e.tagName,
                    ),
                )
                .map((e) => e.tagName),
            )
            .then((x) => x.length),
          0,
          'markup inside #pg-error',
        );
      }
    };
    for (const [what, bad, restore] of cases) {
      await t.test(what, async () => {
        await bad();
        try {
          await checkBad(what);
        } finally {
          await restore(); // the next case starts from the good state even if this one failed
        }
        await waitNoError(page, what);
        assert.deepEqual(
          (await snapshot(page)).figures,
          good.figures,
          `${what}: the figures after restoring the good input`,
        );
      });
    }
    t.diagnostic(messages.join('; '));
    assert.deepEqual(log.dialogs, [], 'dialogs (alert from the HTML?)');
    assert.deepEqual(log.errors, [], 'page errors');
    assert.deepEqual(consoleErrors(log), [], 'console errors');
  } finally {
    await close();
  }
});

// what the message of a URL beyond the playground's limits says (C up to 1024, T up to 128)
const LIMIT_MESSAGES = {
  '?C=1025&h=5':
    'C must be one of 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024; got “1025”.',
  '?C=768&h=10': 'C = 768 is not divisible by 10 heads',
  [`?s=${'w+'.repeat(129)}`]: 'The sentence has 129 tokens; the page accepts 1 to 128 ',
};

test('bad URL settings: message in #pg-error, no exception, the page still renders', async (t) => {
  const defaults = X.sentenceForward({});
  const messages = [];
  for (const q of [
    '?C=64&h=5',
    '?C=1025&h=5',
    '?C=768&h=10',
    `?s=${'w+'.repeat(129)}`,
    '?lr=NaN',
    `?s=${encodeURIComponent('<img src=x onerror=alert(1)>')}`,
  ]) {
    await t.test(q, async () => {
      const { page, log, close } = await session.open(q);
      try {
        const msg = await waitError(page, q);
        messages.push(`${q}: "${msg}"`);
        if (LIMIT_MESSAGES[q]) assert.ok(msg.includes(LIMIT_MESSAGES[q]), `${q}: "${msg}"`);
        const f = await figures(page);
        assert.equal(f.playground.C % f.playground.heads, 0, 'heads divide C');
        // nothing valid to show from the URL: the page shows the defaults (and says so)
        assert.deepEqual(f.playground.att, defaults.att, `${q}: att`);
        assert.deepEqual([f.playground.C, f.playground.heads], [64, 4], `${q}: C, heads`);
        assert.equal(await page.locator('img').count(), 0, 'an <img> was created');
        assert.deepEqual(log.dialogs, [], 'dialogs');
        assert.deepEqual(log.errors, [], 'page errors');
        assert.deepEqual(consoleErrors(log), [], 'console errors');
      } finally {
        await close();
      }
    });
  }
  t.diagnostic(messages.join('; '));
});
