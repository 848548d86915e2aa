// Interactions: editing the controls re-renders the figures exactly as the Node API predicts
// (playground sentence, heads, C, causal mask, positional encoding, seed and generator, lr and
// steps; lesson 1's sentence; lesson 3's causal toggle; lesson 5's step / run / reset buttons),
// the URL query string carries the playground state, and loading that URL reproduces it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  useBrowser,
  openPage,
  figures,
  waitFigures,
  setValue,
  mismatches,
  assertSameArray,
  assertSame,
  consoleErrors,
  showView,
} from './browser.mjs';
import * as X from './expected.mjs';
import { PYTHON } from '../helpers.mjs';

const session = useBrowser();

const same = (a, b) => Array.isArray(a) && a.length === b.length && mismatches(a, b).length === 0;

/**
 * Wait until the playground shows exactly Node's figures for `settings` (tokens, C, heads, att,
 * Y, losses), then assert them one by one (so a wrong figure fails with a precise message rather
 * than a timeout).
 */
async function expectPlayground(page, settings, what) {
  let s = { ...X.DEFAULT_SETTINGS, ...settings };
  let peDiffers = null;
  if (s.pe === true) {
    // PE from the browser's own Math.sin/cos/** (the same formula, run in Chromium's engine)
    const dims = [X.tokenize(s.sentence).length, s.C];
    const table = await page.evaluate(X.peTable, dims);
    peDiffers = mismatches(table, X.peTable(dims)).length;
    s = { ...s, pe: table };
  }
  const e = X.sentenceForward(s);
  const losses = X.sentenceLosses(s, s.steps + 1);
  const matches = (f) => {
    const p = f.playground;
    return (
      p &&
      same(p.att, e.att) &&
      same(p.Y, e.Y) &&
      p.C === s.C &&
      p.heads === s.heads &&
      same(p.losses, losses.slice(0, p.losses?.length ?? 0)) &&
      [s.steps, s.steps + 1].includes(p.losses?.length)
    );
  };
  let f;
  try {
    f = await waitFigures(page, matches, {
      what: `the playground to show ${what}`,
      timeout: 15_000,
      key: 'playground',
    });
  } catch {
    // fall through to the detailed assertions
    f = { playground: await figures(page, 'playground') };
  }
  const p = f.playground;
  assert.deepEqual(p.tokens, e.tokens, `${what}: tokens`);
  assert.equal(p.C, s.C, `${what}: C`);
  assert.equal(p.heads, s.heads, `${what}: heads`);
  assertSameArray(p.att, e.att, `${what}: att`);
  assertSameArray(p.Y, e.Y, `${what}: Y`);
  assert.ok(
    [s.steps, s.steps + 1].includes(p.losses.length),
    `${what}: ${p.losses.length} losses for ${s.steps} steps`,
  );
  assertSameArray(p.losses, losses.slice(0, p.losses.length), `${what}: losses`);
  return { f, e, s, peDiffers };
}

function aboveDiagonal(att, heads, T) {
  const out = [];
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) out.push(att[(h * T + i) * T + j]);
  }
  return out;
}

test('playground controls re-render as the Node API predicts; URL carries the state', async (t) => {
  const { page, log, close } = await session.open('#playground');
  let state = { ...X.DEFAULT_SETTINGS };
  try {
    await t.test('defaults', async () => {
      await expectPlayground(page, state, 'the defaults');
    });

    await t.test('editing #pg-sentence changes tokens and attention', async (sub) => {
      state = { ...state, sentence: "The cat saw the other cat, didn't it?" };
      await setValue(page, '#pg-sentence', state.sentence);
      const { e } = await expectPlayground(page, state, 'the new sentence');
      assert.deepEqual(e.tokens, [
        'The',
        'cat',
        'saw',
        'the',
        'other',
        'cat',
        ',',
        "didn't",
        'it',
        '?',
      ]);
      assert.equal(e.att.length, state.heads * e.tokens.length ** 2);
      sub.diagnostic(
        `${e.tokens.length} tokens, ${X.vocabIds(e.tokens).vocab.length} distinct: ${JSON.stringify(e.tokens)}`,
      );
    });

    await t.test(
      '#pg-heads changes the number of heads (and offers only divisors of C)',
      async (sub) => {
        const offered = await page
          .locator('#pg-heads option')
          .evaluateAll((os) => os.map((o) => Number(o.value)));
        assert.ok(offered.length >= 2, `heads offered: ${offered}`);
        for (const h of offered) {
          assert.equal(state.C % h, 0, `#pg-heads offers ${h} for C=${state.C}`);
        }
        assert.ok(offered.includes(8), `#pg-heads offers ${offered}`);
        state = { ...state, heads: 8 };
        await page.locator('#pg-heads').selectOption('8');
        const { f } = await expectPlayground(page, state, '8 heads');
        assert.equal(f.playground.att.length, 8 * f.playground.tokens.length ** 2);
        sub.diagnostic(`heads offered for C=64: ${offered.join(', ')}`);
      },
    );

    await t.test('#pg-C changes the width; heads stay a divisor', async (sub) => {
      const Cs = await page
        .locator('#pg-C option')
        .evaluateAll((os) => os.map((o) => Number(o.value)));
      const widths = [8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
      assert.deepEqual(Cs, widths, '#pg-C options');
      await page.locator('#pg-C').selectOption('48');
      const f = await waitFigures(page, (now) => now.playground.C === 48, {
        what: 'C = 48',
        key: 'playground',
      });
      const offered = await page
        .locator('#pg-heads option')
        .evaluateAll((os) => os.map((o) => Number(o.value)));
      for (const h of offered) assert.equal(48 % h, 0, `#pg-heads offers ${h} for C=48`);
      assert.equal(48 % f.playground.heads, 0, `heads ${f.playground.heads} for C=48`);
      state = { ...state, C: 48, heads: f.playground.heads };
      await expectPlayground(page, state, `C=48, ${state.heads} heads`);
      sub.diagnostic(`C=48: heads offered ${offered.join(', ')}; kept ${state.heads}`);
    });

    await t.test('#pg-causal makes att exactly 0 above the diagonal', async (sub) => {
      state = { ...state, causal: true };
      await page.locator('#pg-causal').check();
      const { f } = await expectPlayground(page, state, 'the causal mask');
      const T = f.playground.tokens.length;
      const upper = aboveDiagonal(f.playground.att, state.heads, T);
      assert.ok(upper.length > 0);
      assert.deepEqual(
        upper.filter((v) => v !== 0),
        [],
        'non-zero weights above the diagonal',
      );
      // and not before
      const open = X.sentenceForward({ ...state, causal: false });
      assert.ok(aboveDiagonal(open.att, state.heads, T).some((v) => v !== 0));
      sub.diagnostic(`${upper.length} entries above the diagonal, all 0`);
    });

    await t.test('#pg-pe, #pg-seed, #pg-rng change the stream as Node predicts', async (sub) => {
      state = { ...state, pe: true };
      await page.locator('#pg-pe').check();
      const { peDiffers, s } = await expectPlayground(page, state, 'positional encoding');
      sub.diagnostic(
        `PE (${s.pe.length} entries): ${peDiffers} differ in the last bit between Chromium's and Node's ` +
          "Math.sin/cos/**; the expected figures use the browser's PE values",
      );
      state = { ...state, seed: 7 };
      await setValue(page, '#pg-seed', '7');
      await expectPlayground(page, state, 'seed 7');
      state = { ...state, rng: 'legacy' };
      await page.locator('#pg-rng').selectOption('legacy');
      await expectPlayground(page, state, 'the legacy generator');
    });

    await t.test('#pg-lr and #pg-steps change the training losses', async (sub) => {
      state = { ...state, lr: 0.05 };
      await setValue(page, '#pg-lr', '0.05');
      await expectPlayground(page, state, 'lr 0.05');
      state = { ...state, steps: 5 };
      await setValue(page, '#pg-steps', '5');
      const { f } = await expectPlayground(page, state, '5 steps');
      const l = f.playground.losses;
      for (let i = 1; i < l.length; i++) {
        assert.ok(l[i] < l[i - 1], `loss ${i} did not decrease: ${l}`);
      }
      sub.diagnostic(`losses (lr 0.05): ${l.map((x) => x.toFixed(6)).join(' ')}`);
    });

    await t.test(
      'the query string reflects the state, and loading it reproduces the figures',
      async (sub) => {
        const q = new URL(page.url()).searchParams;
        const want = {
          s: state.sentence,
          C: String(state.C),
          h: String(state.heads),
          seed: String(state.seed),
          rng: state.rng,
          causal: '1',
          pe: '1',
          lr: '0.05',
          steps: '5',
        };
        for (const [k, v] of Object.entries(want)) {
          if (k === 'lr') assert.equal(Number(q.get(k)), 0.05, `?lr= in ${page.url()}`);
          else assert.equal(q.get(k), v, `?${k}= in ${page.url()}`);
        }
        const before = await figures(page, 'playground');
        const again = await openPage(session.browser, page.url());
        try {
          const after = await figures(again.page, 'playground');
          assert.deepEqual(after.tokens, before.tokens);
          assert.equal(after.C, before.C);
          assert.equal(after.heads, before.heads);
          assertSameArray(after.att, before.att, 'att after reload');
          assertSameArray(after.Y, before.Y, 'Y after reload');
          assertSameArray(after.losses, before.losses, 'losses after reload');
          const controls = await again.page.evaluate(() => {
            const v = (id) => document.getElementById(id);
            return {
              sentence: v('pg-sentence').value,
              C: v('pg-C').value,
              heads: v('pg-heads').value,
              seed: v('pg-seed').value,
              rng: v('pg-rng').value,
              causal: v('pg-causal').checked,
              pe: v('pg-pe').checked,
              lr: v('pg-lr').value,
              steps: v('pg-steps').value,
            };
          });
          assert.deepEqual(
            controls,
            {
              sentence: state.sentence,
              C: '48',
              heads: String(state.heads),
              seed: '7',
              rng: 'legacy',
              causal: true,
              pe: true,
              lr: controls.lr,
              steps: '5',
            },
            'controls after reload',
          );
          assert.equal(Number(controls.lr), 0.05);
          assert.deepEqual(consoleErrors(again.log), [], 'console errors after reload');
          assert.deepEqual(again.log.errors, [], 'page errors after reload');
        } finally {
          await again.close();
        }
        sub.diagnostic(`state URL: ${page.url().slice(session.url.length)}`);
      },
    );

    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});

test('lessons 1, 3 and 5 controls: sentence, causal toggle, step / run / reset', async (t) => {
  const { page, log, close } = await session.open();
  try {
    await t.test('#l1-sentence re-renders both heads as Node predicts', async (sub) => {
      // repeated words, another length: (a sentence of 8 distinct words would give the same X
      // as the default one: row t of X is row t of E whenever no word repeats)
      const sentence = 'the boats guide the boats home!';
      const e = X.lesson1(sentence);
      assert.deepEqual(e.tokens, ['the', 'boats', 'guide', 'the', 'boats', 'home', '!']);
      assert.notEqual(e.A1.length, X.lesson1().A1.length);
      await showView(page, 'l1-sentence');
      await setValue(page, '#l1-sentence', sentence);
      let f;
      try {
        f = await waitFigures(page, (now) => same(now.lesson1.A1, e.A1), {
          what: 'lesson 1 to re-render',
          timeout: 10_000,
          key: 'lesson1',
        });
      } catch {
        f = { lesson1: await figures(page, 'lesson1') };
      }
      assert.deepEqual(f.lesson1.tokens, e.tokens);
      assertSameArray(f.lesson1.A1, e.A1, 'A1');
      assertSameArray(f.lesson1.A2, e.A2, 'A2');
      assertSame(f.lesson1.maxGap, e.maxGap, 'maxGap');
      assert.deepEqual(f.lesson1.argmaxDiffRows, e.argmaxDiffRows);
      sub.diagnostic(`maxGap ${e.maxGap}, argmax differs in rows [${e.argmaxDiffRows}]`);
    });

    await t.test(
      '#l1-sentence bad input: a message in #l1-error, lesson 1 unchanged',
      async (sub) => {
        const before = await figures(page, 'lesson1');
        const messages = [];
        for (const bad of ['', 'x '.repeat(65), '<b>bold</b>']) {
          await setValue(page, '#l1-sentence', bad);
          try {
            await page.waitForFunction(
              () => document.getElementById('l1-error')?.textContent.trim().length > 0,
              null,
              { timeout: 5000 },
            );
          } catch {
            assert.fail(
              `#l1-sentence ${JSON.stringify(bad.slice(0, 20))}: no message in #l1-error`,
            );
          }
          messages.push(await page.locator('#l1-error').textContent());
          await page.waitForTimeout(300);
          assert.deepEqual(
            await figures(page, 'lesson1'),
            before,
            `lesson 1 changed after ${JSON.stringify(bad.slice(0, 20))}`,
          );
        }
        assert.equal(
          await page.locator('#l1-error').getAttribute('role'),
          'alert',
          '#l1-error role',
        );
        assert.equal(
          await page.locator('section#lesson-1 b').count(),
          0,
          'markup from the sentence was rendered',
        );
        await setValue(page, '#l1-sentence', 'the boats guide the boats home!');
        await page.waitForFunction(
          () => document.getElementById('l1-error')?.textContent.trim() === '',
          null,
          { timeout: 5000 },
        );
        sub.diagnostic(messages.map((m) => `"${m.trim()}"`).join('; '));
      },
    );

    await t.test('#l3-causal masks lesson 3 exactly as the API', async (sub) => {
      const e = X.lesson3({ causal: true });
      await showView(page, 'l3-causal');
      await page.locator('#l3-causal').check();
      const f = await waitFigures(page, (now) => now.lesson3.causal === true, {
        what: 'lesson 3 causal',
        key: 'lesson3',
      });
      assertSameArray(f.lesson3.att, e.att, 'att (causal)');
      assertSameArray(f.lesson3.blockDiagDelta, e.blockDiagDelta, 'blockDiagDelta (causal)');
      assertSameArray(f.lesson3.fullDelta, e.fullDelta, 'fullDelta (causal)');
      assertSame(f.lesson3.rowSumMaxErr, e.rowSumMaxErr, 'rowSumMaxErr (causal)');
      const upper = aboveDiagonal(f.lesson3.att, 2 * 4, 6);
      assert.deepEqual(
        upper.filter((v) => v !== 0),
        [],
      );
      sub.diagnostic(
        `causal: ${upper.length} entries above the diagonal are 0; rowSumMaxErr ${e.rowSumMaxErr}`,
      );
    });

    await t.test('#l5-step, #l5-run, #l5-reset follow layer.train step by step', async (sub) => {
      const losses = X.sentenceLosses({}, 16);
      const f0 = await figures(page, 'lesson5');
      const checkPrefix = (l, what) => {
        assertSameArray(l, losses.slice(0, l.length), what);
        for (let i = 1; i < l.length; i++) {
          assert.ok(l[i] < l[i - 1], `${what}: loss ${i} did not decrease`);
        }
      };
      checkPrefix(f0.losses, 'losses at load');
      const extra = f0.losses.length - f0.step; // 0 or 1: whether the current loss is shown too

      await showView(page, 'l5-step');
      await page.locator('#l5-step').click();
      let f = (
        await waitFigures(page, (now) => now.lesson5.step === f0.step + 1, {
          what: 'one step',
          key: 'lesson5',
        })
      ).lesson5;
      assert.equal(f.losses.length, f.step + extra, 'one step adds one loss');
      checkPrefix(f.losses, 'after #l5-step');

      await page.locator('#l5-run').click();
      f = (
        await waitFigures(page, (now) => now.lesson5.step === f0.step + 11, {
          what: '#l5-run (10 steps)',
          key: 'lesson5',
        })
      ).lesson5;
      assert.equal(f.losses.length, f.step + extra, '#l5-run adds ten losses');
      checkPrefix(f.losses, 'after #l5-run');
      sub.diagnostic(`losses after 11 steps: ${f.losses.map((x) => x.toFixed(6)).join(' ')}`);

      await page.locator('#l5-reset').click();
      f = (
        await waitFigures(page, (now) => now.lesson5.step === 0, {
          what: '#l5-reset',
          key: 'lesson5',
        })
      ).lesson5;
      assertSameArray(f.losses, losses.slice(0, extra), 'losses after reset');
      const e = X.sentenceForward({});
      assertSameArray(f.att, e.att, 'att after reset');
      await page.locator('#l5-step').click();
      f = (
        await waitFigures(page, (now) => now.lesson5.step === 1, {
          what: 'a step after reset',
          key: 'lesson5',
        })
      ).lesson5;
      assertSame(f.losses[0], losses[0], 'first loss after reset');
      checkPrefix(f.losses, 'a step after reset');
    });

    await t.test('#l5-lr sets the learning rate of the steps', async (sub) => {
      await page.locator('#l5-reset').click();
      await waitFigures(page, (now) => now.lesson5.step === 0, {
        what: '#l5-reset',
        key: 'lesson5',
      });
      await setValue(page, '#l5-lr', '0.5');
      await page.locator('#l5-step').click();
      await page.locator('#l5-step').click();
      const f = (
        await waitFigures(page, (now) => now.lesson5.step === 2, {
          what: 'two steps at lr 0.5',
          key: 'lesson5',
        })
      ).lesson5;
      const losses = X.sentenceLosses({ lr: 0.5 }, 3);
      assertSameArray(f.losses, losses.slice(0, f.losses.length), 'losses at lr 0.5');
      sub.diagnostic(`lr 0.5: ${f.losses.map((x) => x.toFixed(6)).join(' ')}`);
    });

    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});

/** python3 FILE.svg: the file parsed as XML: { root (tag with namespace), title, rects }. */
const SVG_FACTS = `import json, sys
import xml.etree.ElementTree as ET
svg = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
rects = sum(1 for _ in root.iter(svg + "rect"))
print(json.dumps({"root": root.tag, "title": root.findtext(svg + "title"), "rects": rects}))`;

/** python3 FILE.csv: the rows as csv.reader gives them, every cell but the labels as float. */
const CSV_READ = `import csv, json, sys
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f))
print(json.dumps([rows[0]] + [[r[0]] + [float(x) for x in r[1:]] for r in rows[1:]]))`;

/** python3 FILE.png: its chunks checked (CRC), IHDR read, IDAT inflated (8-bit RGB or RGBA). */
const PNG_FACTS = `import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
out = {"signature": data[:8] == b"\\x89PNG\\r\\n\\x1a\\n", "bad": [], "ended": False}
at, idat = 8, b""
while at < len(data):
    n, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + n]
    if zlib.crc32(kind + body) != struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0]:
        out["bad"].append(kind.decode())
    if kind == b"IHDR":
        w, h, depth, colour = struct.unpack(">IIBB", body[:10])
        out.update(width=w, height=h, depth=depth, colour=colour)
    idat += body if kind == b"IDAT" else b""
    out["ended"] = kind == b"IEND"
    at += 12 + n
channels = {2: 3, 6: 4}[out["colour"]]
out["inflated"] = len(zlib.decompress(idat))
out["expected"] = out["height"] * (1 + out["width"] * channels * out["depth"] // 8)
print(json.dumps(out))`;

test("heatmap: hover readout, and the CSV / SVG / PNG exports of lesson 1's head A", async (t) => {
  const { page, log, close } = await session.open('#lesson-1');
  try {
    const e = X.lesson1();
    const T = e.tokens.length;
    const fig = page.locator('section#lesson-1 figure').first();
    await fig.scrollIntoViewIfNeeded();

    // hovering the middle of the matrix names a query and a key and shows the weight
    const box = await fig.locator('svg').first().boundingBox();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.6);
    await page
      .waitForFunction(
        (sel) =>
          /query ‘[^’]+’ → key ‘[^’]+’: \d/.test(document.querySelector(sel)?.textContent ?? ''),
        'section#lesson-1 figure',
        { timeout: 5000 },
      )
      .catch(() => assert.fail('no "query ‘…’ → key ‘…’: value" readout after hovering a cell'));
    const readout = (await fig.textContent()).match(/query ‘[^’]+’ → key ‘[^’]+’: [\d.e−-]+/)[0];

    // the figure's exports sit behind one menu
    await fig.locator('details.heatmap-export > summary').click();
    const download = async (label) => {
      const [d] = await Promise.all([
        page.waitForEvent('download', { timeout: 10_000 }),
        fig.getByRole('button', { name: label, exact: false }).first().click(),
      ]);
      const path = await d.path();
      const { readFileSync } = await import('node:fs');
      return { name: d.suggestedFilename(), path, bytes: readFileSync(path) };
    };

    // CSV: labels as header row and column, every value at full precision (= A1 exactly), read
    // as a student would: python3's csv module, each value through float()
    const csv = await download('CSV');
    const table = JSON.parse(
      execFileSync(PYTHON, ['-c', CSV_READ, csv.path], { encoding: 'utf8' }),
    );
    assert.equal(table.length, T + 1, `CSV rows: ${table.length}`);
    assert.deepEqual(table[0].slice(1), e.tokens, 'CSV header: the key tokens');
    const values = [];
    for (const [i, row] of table.slice(1).entries()) {
      assert.equal(row[0], e.tokens[i], `CSV row ${i} label`);
      assert.equal(row.length, T + 1, `CSV row ${i}: ${row.length} cells`);
      values.push(...row.slice(1));
    }
    assertSameArray(values, e.A1, 'CSV values');

    // the SVG read by an XML parser (python3's ElementTree; a file that is not well-formed XML
    // fails here with the parser's line and column): an <svg> root in the SVG namespace, its
    // <title>, a <rect> per cell
    const svg = await download('SVG');
    const parsed = execFileSync(PYTHON, ['-c', SVG_FACTS, svg.path], { encoding: 'utf8' });
    const facts = JSON.parse(parsed);
    assert.equal(facts.root, '{http://www.w3.org/2000/svg}svg', 'SVG root');
    assert.match(facts.title, new RegExp(`heatmap, ${T} x ${T}$`), 'SVG title');
    assert.ok(facts.rects >= T * T, `one <rect> per cell: ${facts.rects}`);

    // the PNG decoded by python3 (struct, zlib): signature, every chunk's CRC, IHDR, and the
    // image data inflating to one filtered row per pixel row
    const png = await download('PNG');
    const image = JSON.parse(
      execFileSync(PYTHON, ['-c', PNG_FACTS, png.path], { encoding: 'utf8' }),
    );
    assert.deepEqual(image.bad, [], 'PNG chunks with a wrong CRC');
    assert.ok(image.signature && image.ended, `PNG signature and IEND: ${JSON.stringify(image)}`);
    assert.ok(image.width > T && image.height > T, `PNG size ${image.width} x ${image.height}`);
    assert.equal(image.inflated, image.expected, 'IDAT inflates to height x (1 + row bytes)');

    assert.deepEqual(consoleErrors(log), [], 'console errors (CSP?)');
    assert.deepEqual(log.errors, [], 'page errors');
    t.diagnostic(
      `readout "${readout}"; downloads ${csv.name} (${csv.bytes.length} B), ${svg.name} (${svg.bytes.length} B), ${png.name} (${png.bytes.length} B)`,
    );
  } finally {
    await close();
  }
});
