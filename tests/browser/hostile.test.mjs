// Hostile but valid sentences in the playground (markup itself is refused with a message: see
// badinput.test.mjs): quotes and ampersands, emoji, right-to-left text, a 10,000-character
// word. Each renders as text (no element is created from it, no dialog opens), the computed figures
// equal the Node API's for the same tokens, and the page logs no error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, setValue, waitFigures, consoleErrors } from './browser.mjs';
import * as X from './expected.mjs';

const session = useBrowser();

const CASES = [
  ['quotes and ampersands', 'the lanterns & "boats" guide \'home\' ; 1 < 2'],
  ['emoji', 'lanterns 🏮 guide boats 🚤 home 🏠'],
  ['right-to-left text', 'الفوانيس ترشد القوارب إلى البيت'],
  ['mixed scripts', 'Lantern Bay — 灯笼 湾 — Фонари'],
  ['a 10,000-character word', `${'x'.repeat(10000)} home`],
];

test('hostile sentences render as text and compute what the Node API computes', async (t) => {
  const { page, log, close } = await session.open('#playground');
  try {
    let dialogs = 0;
    page.on('dialog', async (d) => {
      dialogs++;
      await d.dismiss();
    });
    const elementsBefore = await page.evaluate(
      () => document.querySelectorAll('img, script, b').length,
    );
    for (const [what, sentence] of CASES) {
      const tokens = X.tokenize(sentence);
      await setValue(page, '#pg-sentence', sentence);
      const { playground: pg } = await waitFigures(
        page,
        (f) => JSON.stringify(f.playground.tokens) === JSON.stringify(tokens),
        { what: `${what}: the playground to show its tokens`, key: 'playground' },
      );
      assert.equal(
        await page.locator('#pg-error').evaluate((e) => e.textContent.trim()),
        '',
        `${what}: no error`,
      );
      // the tokens appear as text in the page
      const text = await page.locator('#playground').evaluate((e) => e.textContent);
      for (const tok of tokens.slice(0, 5)) {
        assert.ok(text.includes(tok.slice(0, 50)), `${what}: token ${tok.slice(0, 20)} shown`);
      }
      // the same attention as the Node API for these tokens and the default settings
      const expected = X.sentenceForward({ sentence });
      assert.equal(pg.att.length, expected.att.length, `${what}: attention size`);
      let diff = 0;
      for (let i = 0; i < pg.att.length; i++) if (!Object.is(pg.att[i], expected.att[i])) diff++;
      assert.equal(diff, 0, `${what}: attention differs from the Node API in ${diff} entries`);
      t.diagnostic(`${what}: ${tokens.length} tokens, attention identical to Node`);
    }
    const elementsAfter = await page.evaluate(
      () => document.querySelectorAll('img, script, b').length,
    );
    assert.equal(elementsAfter, elementsBefore, 'no element was created from the sentences');
    assert.equal(dialogs, 0, 'no dialog opened');
    assert.deepEqual(consoleErrors(log), []);
    assert.deepEqual(log.errors, []);
  } finally {
    await close();
  }
});
