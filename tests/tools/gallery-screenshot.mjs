// gallery-screenshot.mjs - docs/gallery-1280.png: "A gallery of common bugs" (in "Check your
// notebook") opened and drawn, in a 1280 px wide window (2000 px tall by default) scrolled to its
// heading.
//   node tests/tools/gallery-screenshot.mjs [out=docs/gallery-1280.png] [height=2000]
// Needs the bundle (make wasm bundle) and Chromium, as the browser tests do.

import { join } from 'node:path';
import {
  launchBrowser,
  openPage,
  repoRoot,
  servePage,
  waitFiguresDrawn,
} from '../browser/browser.mjs';

const out = process.argv[2] ?? join(repoRoot, 'docs', 'gallery-1280.png');
const height = Number(process.argv[3] ?? 2000);

const browser = await launchBrowser();
const { server, url } = await servePage();
try {
  const viewport = { width: 1280, height };
  const { page, close } = await openPage(browser, url, { viewport });
  await waitFiguresDrawn(page, 60_000);
  await page.evaluate(() => {
    document.getElementById('nb-gallery').open = true;
  });
  await page.waitForFunction(() => document.getElementById('nb-gallery').dataset.built === '1');
  await page.waitForFunction(() => !document.querySelector('#nb-gallery [data-pending]'));
  // the gallery's heading just below the contents bar (sticky at the top)
  await page.evaluate(() => {
    const h = [...document.querySelectorAll('#nb-body h3')].find((x) =>
      /gallery/.test(x.textContent),
    );
    const bar = document.getElementById('toc').getBoundingClientRect().height;
    window.scrollTo(0, h.getBoundingClientRect().top + window.scrollY - bar - 24);
  });
  await page.waitForTimeout(300);
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
  await close();
} finally {
  await browser.close();
  server.close();
}
