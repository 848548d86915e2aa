// temporary: each view's height at 390x844 and 1280x800, console errors, screenshots
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, servePage } from './browser/browser.mjs';
const { server, url } = await servePage();
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
const views = (process.env.VIEWS || 'start-here,lesson-1,lesson-2,lesson-3,lesson-4,lesson-5,notebook-check,playground').split(',');
for (const [w, h] of [[390, 844], [1280, 800]]) {
  const ctx = await browser.newContext({ viewport: { width: w, height: h }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  const errs = [];
  page.on('console', (m) => m.type() === 'error' && errs.push(m.text()));
  page.on('pageerror', (e) => errs.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, { timeout: 60000 });
  for (const v of views) {
    await page.evaluate((v) => { location.hash = v; }, v);
    await page.waitForTimeout(1500);
    const H = await page.evaluate(() => document.documentElement.scrollHeight);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    console.log(`${w}x${h} ${v}: ${H} px = ${(H / h).toFixed(1)} screens; scrollWidth ${wide}`);
    if (process.env.SHOTS) await page.screenshot({ path: `/work/tmp/${v}-${w}.png`, fullPage: true });
  }
  console.log('errors', errs);
  await ctx.close();
}
await browser.close();
server.close();
