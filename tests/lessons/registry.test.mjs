// The section registry (web/lessons/index.js) is the page's one list of sections: it agrees with
// web/index.html, section for section, and its helpers keep the lesson contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  SECTIONS,
  VIEWS,
  customFor,
  lessonView,
  sectionByKey,
  sectionsOf,
  viewOfId,
} from '../../web/lessons/index.js';
import { usesCustom } from '../../web/components/custom-banner.js';

const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');

/** [section id, lesson-body id] of every <section> of the page that has a body, in page order. */
function pageSections() {
  const out = [];
  for (const m of html.matchAll(/<section id="([^"]+)"[\s\S]*?<\/section>/g)) {
    const body = m[0].match(/class="lesson-body" id="([^"]+)"/);
    if (body) out.push([m[1], body[1]]);
  }
  return out;
}

test('the registry lists the page’s sections, in page order, with their bodies', () => {
  const page = pageSections();
  assert.ok(page.length >= 8, `only ${page.length} sections with a body in index.html`);
  assert.deepEqual(
    SECTIONS.map((s) => [s.id, s.body]),
    page,
  );
});

test('the lesson bar links to every view, in order, with its name; nothing else', () => {
  const bar = html.match(/<nav[^>]*id="toc"[\s\S]*?<\/nav>/)[0];
  const links = [...bar.matchAll(/<a href="#([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(
    links,
    VIEWS.map((v) => [v.id, v.nav]),
  );
});

test('the views: each <section> of the page in one, in page order; only the first shown', () => {
  const ids = [...html.matchAll(/<section id="([^"]+)"([^>]*)>/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(
    VIEWS.flatMap((v) => v.sections),
    ids.map(([id]) => id),
  );
  for (const v of VIEWS) {
    assert.equal(v.id, v.sections[0], `${v.id}: a view is at the address of its first section`);
    assert.ok(Object.isFrozen(v) && Object.isFrozen(v.sections), v.id);
    assert.ok(v.nav && v.title, v.id);
  }
  // the first view shows before the script runs; the others are hidden until opened
  const hidden = new Set(ids.filter(([, a]) => /\bhidden\b/.test(a)).map(([id]) => id));
  for (const v of VIEWS) {
    for (const id of v.sections) assert.equal(hidden.has(id), v !== VIEWS[0], id);
  }
  assert.deepEqual(
    sectionsOf(VIEWS[0]).map((s) => s.key),
    ['sentence'],
  );
  assert.deepEqual(
    VIEWS.slice(1).map((v) => sectionsOf(v).map((s) => s.key)),
    SECTIONS.slice(1).map((s) => [s.key]),
  );
});

test('each entry is complete: unique key, id, body, mark; its render loader; a title', async () => {
  for (const field of ['key', 'id', 'body']) {
    const values = SECTIONS.map((s) => s[field]);
    assert.equal(new Set(values).size, values.length, `${field} repeated`);
  }
  const marks = SECTIONS.map((s) => s.mark).filter((m) => m !== null);
  assert.equal(new Set(marks).size, marks.length);
  for (const s of SECTIONS) {
    assert.equal(typeof (await s.load()), 'function', s.key);
    assert.match(s.title, /^(The |Lesson \d)/, s.key);
    assert.ok([null, 'part', 'all'].includes(s.custom), s.key);
    assert.equal(typeof s.data, 'boolean', s.key);
    assert.ok(Object.isFrozen(s), s.key);
  }
  assert.ok(Object.isFrozen(SECTIONS));
  assert.equal(sectionByKey('lesson4').body, 'l4-body');
  assert.throws(() => sectionByKey('lesson6'), /no section "lesson6" \(sections: sentence,/);
});

test("the ids a section builds start with its body's prefix: a link to one opens its view", () => {
  const prefixes = SECTIONS.map((s) => {
    assert.match(s.body, /^[a-z\d]+-body$/, `${s.key}: a body id "<prefix>-body"`);
    return s.body.replace(/body$/, '');
  });
  // no prefix starts another: every id has one section at most
  for (const a of prefixes) {
    assert.deepEqual(
      prefixes.filter((b) => b.startsWith(a)),
      [a],
      `${a} starts another section's prefix`,
    );
  }
  assert.equal(viewOfId('l4-gradcheck').id, 'lesson-4');
  assert.equal(viewOfId('pg-seed').id, 'playground');
  assert.equal(viewOfId('nb-file').id, 'notebook-check');
  assert.equal(viewOfId('sentence-body').id, 'start-here');
  assert.equal(viewOfId('lesson-3').id, 'lesson-3');
  assert.equal(viewOfId('start-here').id, 'start-here');
  assert.equal(viewOfId('start-why', 'start-here').id, 'start-here');
  assert.equal(viewOfId('anything', 'lesson-5').id, 'lesson-5');
  assert.equal(viewOfId('l9-x'), null);
  // the gradient-check panels the tests and the bench link to
  const lessons = ['lesson4.js', 'lesson5.js', 'playground/checks.js'].map((f) =>
    readFileSync(new URL(`../../web/lessons/${f}`, import.meta.url), 'utf8'),
  );
  for (const [i, id] of ['l4-gradcheck', 'l5-gradcheck', 'pg-gradcheck'].entries()) {
    assert.ok(lessons[i].includes(`'${id}'`), `${id} is built by its section`);
  }
});

test('lessonView gives every member of the contract; what a section returns wins', async () => {
  const empty = lessonView();
  assert.deepEqual(Object.keys(empty).sort(), [
    'afterReady',
    'dispose',
    'figures',
    'ready',
    'script',
    'showCustom',
    'state',
  ]);
  assert.equal(empty.figures(), null);
  assert.equal(empty.state(), null);
  assert.equal(empty.script, null);
  assert.equal(await empty.ready, undefined);
  assert.equal(empty.afterReady(), undefined);
  const figures = () => ({ x: 1 });
  const v = lessonView({ figures, script: () => 'print(1)' });
  assert.equal(v.figures, figures);
  assert.equal(v.script(), 'print(1)');
  assert.equal(v.dispose(), undefined);
});

test('customFor: a section’s part, all the arrays, or none, as the banners say', () => {
  const lesson1 = { X: 'x' };
  const cases = [
    null,
    { main: true, lesson1, lesson2: null },
    { main: false, lesson1, lesson2: null },
    { main: false, lesson1: null, lesson2: { x: 1 } },
  ];
  for (const custom of cases) {
    for (const s of SECTIONS) {
      const got = customFor(custom, s);
      if (!s.custom || !custom) assert.equal(got, null, s.key);
      else if (s.custom === 'part') assert.equal(got, custom[s.key] ?? null, s.key);
      else assert.equal(got, custom.main ? custom : null, s.key);
      // the banner over a section says the same (components/custom-banner.js)
      if (s.custom) assert.equal(usesCustom(custom, s.key), got !== null, `${s.key} banner`);
    }
  }
  assert.deepEqual(
    SECTIONS.filter((s) => s.custom === 'part').map((s) => s.key),
    ['lesson1', 'lesson2'],
  );
  assert.deepEqual(
    SECTIONS.filter((s) => s.data).map((s) => s.key),
    ['lesson3', 'lesson4'],
  );
});
