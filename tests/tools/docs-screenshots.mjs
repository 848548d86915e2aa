// docs-screenshots.mjs - the screenshots in docs/ and README's, each a 1280 px wide window of one
// view of the page (opened at its address) scrolled to one part once its figures are drawn:
//   web/screenshot.png            README's: lesson 1's two heads, a cell hovered
//   docs/lesson1-course-1280.png  lesson 1 opening with "Your course and this page"
//   docs/eps-1280.png             lesson 4's error against ε (in its Go deeper, opened)
//   docs/gallery-1280.png         "A gallery of common bugs" (in "Check your notebook"), opened
//   docs/webkit-lesson1-1280.png  lesson 1 in WebKit (WebKitGTK's MiniBrowser, Safari's engine),
//                                 every figure drawn and every check done
//   node tests/tools/docs-screenshots.mjs [name ...]   (names: readme, lesson1-course, eps,
//                                                      gallery, webkit-lesson1)
// Needs the bundle (make wasm bundle) and Chromium, as the browser tests do; webkit-lesson1
// needs what the suite's WebKit needs (.ci/setup's need `webkit`).

import { join } from 'node:path';
import { launchEngine } from '../browser/engines.mjs';
import {
  launchBrowser,
  openPage,
  repoRoot,
  servePage,
  waitFiguresDrawn,
} from '../browser/browser.mjs';

/** Scroll so that the first `selector` whose text matches `text` sits below the contents bar. */
async function scrollTo(page, selector, text = '') {
  await page.evaluate(
    ([sel, pattern]) => {
      const target = [...document.querySelectorAll(sel)].find((e) =>
        new RegExp(pattern).test(e.textContent),
      );
      if (!target) throw new Error(`docs-screenshots: no ${sel} reading /${pattern}/`);
      const bar = document.getElementById('toc').getBoundingClientRect().height;
      window.scrollTo(0, target.getBoundingClientRect().top + window.scrollY - bar - 16);
    },
    [selector, text],
  );
}

async function openGallery(page) {
  await page.evaluate(() => {
    document.getElementById('nb-gallery').open = true;
  });
  await page.waitForFunction(() => document.getElementById('nb-gallery').dataset.built === '1');
  await page.waitForFunction(() => !document.querySelector('#nb-gallery [data-pending]'));
}

async function openDeeper(page) {
  await page.locator('#lesson-4 details.go-deeper > summary').click();
}

/** Hover the middle of lesson 1's first map: its readout names a query, a key and the weight. */
async function hoverLesson1(page) {
  const box = await page.locator('#l1-body figure.heatmap svg').first().boundingBox();
  await page.mouse.move(box.x + box.width * 0.62, box.y + box.height * 0.55);
  await page.waitForTimeout(200);
}

// name -> { view (its address), height, prepare(page), at: [selector, text] scrolled to the top,
// after(page) (once scrolled), out (default docs/<name>-1280.png) }
const SHOTS = {
  readme: {
    view: '#lesson-1',
    height: 800,
    at: ['#l1-body .chips-slot'],
    after: hoverLesson1,
    out: join('web', 'screenshot.png'),
  },
  'lesson1-course': { view: '#lesson-1', height: 1100, at: ['#lesson-1-h'] },
  eps: {
    view: '#lesson-4',
    height: 1000,
    at: ['#lesson-4 h3', '^Truncation against rounding'],
    prepare: openDeeper,
  },
  gallery: {
    view: '#notebook-check',
    height: 2000,
    at: ['#nb-body h3', 'gallery'],
    prepare: openGallery,
  },
};

/** Lesson 1 in WebKit, through the browser suite's driver (tests/browser/webkit.mjs). */
async function webkitShot(name) {
  const e = await launchEngine('webkit');
  try {
    const url = `${e.url}#lesson-1`;
    const tab = await e.open(url, { viewport: { width: 1280, height: 1100 }, timeout: 60_000 });
    await tab.waitChecksDone();
    await tab.evaluate(() => {
      const bar = document.getElementById('toc').getBoundingClientRect().height;
      const top = document.getElementById('lesson-1-h').getBoundingClientRect().top;
      window.scrollTo(0, top + window.scrollY - bar - 16);
    });
    await new Promise((ok) => setTimeout(ok, 500));
    const out = join(repoRoot, 'docs', `${name}-1280.png`);
    await tab.screenshot(out);
    console.log(`wrote ${out} (${e.version})`);
    await tab.close();
  } finally {
    await e.close();
  }
}

const ENGINE_SHOTS = { 'webkit-lesson1': webkitShot };
const all = [...Object.keys(SHOTS), ...Object.keys(ENGINE_SHOTS)];
const names = process.argv.length > 2 ? process.argv.slice(2) : all;
for (const name of names) {
  if (!SHOTS[name] && !ENGINE_SHOTS[name]) {
    throw new Error(`docs-screenshots: no shot ${name} (${all.join(', ')})`);
  }
}
const browser = await launchBrowser();
const { server, url } = await servePage();
try {
  for (const name of names.filter((n) => SHOTS[n])) {
    const shot = SHOTS[name];
    const { page, close } = await openPage(browser, `${url}${shot.view}`, {
      viewport: { width: 1280, height: shot.height },
    });
    await waitFiguresDrawn(page, 60_000);
    if (shot.prepare) await shot.prepare(page);
    await scrollTo(page, ...shot.at);
    await page.waitForTimeout(300);
    if (shot.after) await shot.after(page);
    const out = join(repoRoot, shot.out ?? join('docs', `${name}-1280.png`));
    await page.screenshot({ path: out });
    console.log(`wrote ${out}`);
    await close();
  }
} finally {
  await browser.close();
  server.close();
}
for (const name of names.filter((n) => ENGINE_SHOTS[n])) await ENGINE_SHOTS[name](name);
