// Each lesson's own file (issue 34, item 6). Every lesson's np.savez line (LESSON_SAVES) run by
// NumPy after the lesson's own script, each with a seed of its own (tests/model/lesson-files.mjs):
//   - no two lessons' lines share a name, and the reader maps every name back to its lesson;
//   - every pair of lessons' files, loaded as the page loads a drop (loadNpz, fileArrays,
//     addArrays), gives each lesson its own arrays, bit for bit as NumPy saved them, and the
//     loaded list groups them by lesson; nothing is replaced;
//   - the same two files saved with the course names (X=X in both) say what was replaced;
//   - the whole-layer lines run with the course's own class (attributes Wq … dWq) and the page's
//     (dicts W, cache, grads): every array saved is read, every result matches.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LAYER_SAVE_LINE,
  addArrays,
  customArrays,
  fileArrays,
  lessonArrays,
  lessonGroups,
  plainArrays,
  replacedNotices,
} from '../../web/model/custom-arrays.js';
import {
  FORWARD_NAMES,
  LESSON_KEYS,
  LESSON_SAVES,
  lessonOf,
  lessonSaveLine,
} from '../../web/check/names.js';
import { COURSE_RESULTS } from '../../web/model/course-results.js';
import { checkNotebook, loadNpz } from '../../web/check.js';
import { layerObjectScript } from '../../web/model/numpy-scripts.js';
import { LESSON5_RUN, writeLessonFiles } from './lesson-files.mjs';
import { LESSON4_ORDER, PYTHON, loadMHA } from '../helpers.mjs';

const mha = await loadMHA();
const dir = mkdtempSync(join(tmpdir(), 'mha-lesson-files-'));
const files = writeLessonFiles(dir);
const oldDir = mkdtempSync(join(tmpdir(), 'mha-lesson-files-plain-'));
// the lines as they were before each lesson had names of its own: the course names
const plainLine = (key) => lessonSaveLine(key).replace(/\bl\d_/g, '');
const plainFiles = writeLessonFiles(oldDir, plainLine);
process.on('exit', () => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(oldDir, { recursive: true, force: true });
});

/** The arrays of these files as the page holds them after dropping them in this order. */
function loaded(...paths) {
  let list = [];
  const notices = [];
  for (const path of paths) {
    const name = path.split('/').pop();
    const { arrays } = fileArrays(name, 'npz', loadNpz(readFileSync(path)));
    notices.push(...replacedNotices(list, arrays));
    list = addArrays(list, arrays).list;
  }
  return { list, notices };
}

const same = (got, want, what) => {
  assert.deepEqual([...got.shape], want.shape, `${what}: shape`);
  assert.deepEqual(Array.from(got.data), want.data, `${what}: every entry`);
};

test('every lesson has a line of its own, and no two lessons share a name', () => {
  const seen = new Map();
  for (const key of LESSON_KEYS) {
    assert.equal(COURSE_RESULTS[key].save, lessonSaveLine(key), `${key}: the box shows the line`);
    const names = [...lessonSaveLine(key).matchAll(/(\w+)=/g)].map((m) => m[1]);
    assert.deepEqual(
      names.map(lessonOf),
      LESSON_SAVES[key].names.map((n) => ({ lesson: key, name: n })),
    );
    for (const n of names) {
      assert.ok(!seen.has(n.toLowerCase()), `${n}: in ${key} and ${seen.get(n.toLowerCase())}`);
      seen.set(n.toLowerCase(), key);
    }
  }
  // a name with no lesson's prefix is a course name: the check's
  for (const n of ['X', 'Wq', 'dY', 'x', 'Wq1', 'l6_X', 'l1_', 'lesson1']) {
    assert.equal(lessonOf(n), null, n);
  }
  assert.deepEqual(lessonOf('L2_X'), { lesson: 'lesson2', name: 'x' });
  assert.deepEqual(lessonOf('l5_losses'), { lesson: 'lesson5', name: 'losses' });
});

/** Lesson `key`'s arrays as customArrays gives them to it, against the file NumPy wrote. */
function assertOwn(custom, key, want) {
  const a = want.arrays;
  if (key === 'lesson1') {
    const p = custom.lesson1;
    same({ shape: [p.T, p.C], data: p.X }, { shape: [8, 64], data: a.X.data }, 'lesson 1 X');
    for (const [i, n] of ['Wq', 'Wk', 'Wv'].entries()) {
      same({ shape: [p.C, p.hs], data: p.W1[n] }, a[`${n}1`], `lesson 1 ${n}1`);
      same({ shape: [p.C, p.hs], data: p.W2[n] }, a[`${n}2`], `lesson 1 ${n}2 (${i})`);
    }
    return;
  }
  if (key === 'lesson2') {
    const p = custom.lesson2;
    same({ shape: [p.B, p.T, p.C], data: p.x }, a.x, 'lesson 2 x');
    same({ shape: [p.C, p.C], data: p.Wq }, a.Wq, 'lesson 2 Wq');
    return;
  }
  const c = custom[key];
  assert.ok(c, `${key} uses its file: ${custom.why[key]}`);
  same({ shape: [c.B, c.T, c.C], data: c.X }, a.X, `${key} X`);
  for (const n of ['Wq', 'Wk', 'Wv', 'Wo']) {
    same({ shape: [c.C, c.C], data: c.W[n] }, a[n], `${key} ${n}`);
  }
  assert.equal(c.given.dY, key === 'lesson4', `${key}: dY given`);
  assert.equal(c.given.target, key === 'lesson5', `${key}: target given`);
  if (key === 'lesson4') same({ shape: [c.B, c.T, c.C], data: c.dY }, a.dY, 'lesson 4 dY');
  if (key === 'lesson5') {
    same({ shape: [1, c.T, c.C], data: c.target }, a.target, 'lesson 5 target');
    assert.equal(c.training.lr, LESSON5_RUN.lr);
    assert.equal(c.training.steps, LESSON5_RUN.steps);
  }
}

for (const [i, a] of LESSON_KEYS.entries()) {
  for (const b of LESSON_KEYS.slice(i + 1)) {
    test(`${a}.npz and ${b}.npz loaded together: each lesson gets its own arrays`, () => {
      for (const order of [
        [a, b],
        [b, a],
      ]) {
        const { list, notices } = loaded(...order.map((k) => files[k].path));
        assert.deepEqual(notices, [], 'nothing replaced');
        const n = (k) => LESSON_SAVES[k].names.length;
        assert.equal(list.length, n(a) + n(b), 'the files add up');
        const { custom, errors } = customArrays(mha, list, 4);
        assert.equal(errors, undefined);
        assertOwn(custom, a, files[a]);
        assertOwn(custom, b, files[b]);
        // the other lessons keep the course's arrays, each saying why
        for (const k of LESSON_KEYS.filter((x) => x !== a && x !== b)) {
          assert.equal(custom[k], null, `${k} keeps the course's`);
          // (with no file for lessons 3-5 they say it together, as before lessons had files)
          const why = `^Lesson(s 3, 4, 5 and the playground show| ${k.slice(-1)} shows) the course’s`;
          assert.match(custom.why[k], new RegExp(why));
        }
        // the loaded list: one group a lesson, what each name is read as, nothing missing
        const groups = lessonGroups(list);
        assert.deepEqual(
          groups.map((g) => g.lesson),
          [a, b],
        );
        for (const g of groups) {
          assert.deepEqual(g.missing, [], `${g.lesson}: nothing missing`);
          assert.deepEqual(
            g.arrays.map((e) => e.name),
            LESSON_SAVES[g.lesson].names,
          );
          assert.match(
            g.text,
            new RegExp(`^Lesson ${g.lesson.slice(-1)}.*\\(${g.lesson}\\.npz\\): `),
          );
        }
        // the check reads the course names only: none here
        assert.deepEqual(plainArrays(list), []);
      }
    });
  }
}

test('lesson files saved with the course names (X=X in both): what was replaced is said', () => {
  const { list, notices } = loaded(plainFiles.lesson4.path, plainFiles.lesson1.path);
  assert.equal(notices.length, 1);
  assert.match(
    notices[0],
    /^X \(lesson1\.npz\) replaces X \(lesson4\.npz\): both files name it X\./,
  );
  assert.match(notices[0], /l1_X=X, l4_X=X/);
  // the old way still loads: the course names feed every lesson, as before
  assert.equal(lessonArrays(list, 'lesson4').own, false);
  assert.deepEqual(
    lessonGroups(list).map((g) => g.lesson),
    [null],
  );
});

test('a lesson file without Wo: lesson 4 says what it still needs, lesson 1 is used', () => {
  const l4 = loaded(files.lesson4.path).list.filter((e) => e.name !== 'l4_Wo');
  const { list } = addArrays(l4, loaded(files.lesson1.path).list);
  const { custom } = customArrays(mha, list, 4);
  assert.equal(custom.lesson4, null);
  assert.match(custom.why.lesson4, /^Lesson 4 shows the course’s arrays: Wo is not loaded/);
  assertOwn(custom, 'lesson1', files.lesson1);
  const g = lessonGroups(list).find((x) => x.lesson === 'lesson4');
  assert.deepEqual(g.missing, ['Wo']);
  assert.match(g.text, /still needed: Wo\./);
});

/** A layer class's program: the lines of the check's save step run after it, in `cwd`. */
function saveLayer(program, cwd) {
  execFileSync(PYTHON, ['-'], { input: `${program}\n${LAYER_SAVE_LINE}\n`, cwd, encoding: 'utf8' });
  return loadNpz(readFileSync(join(cwd, 'mha_check.npz')));
}

/** The check of a whole layer's file: every row it has matches; the rest are not given. */
function assertWholeLayer(read, want) {
  const { arrays } = fileArrays('mha_check.npz', 'npz', read);
  const list = addArrays([], arrays).list;
  const report = checkNotebook(mha, Object.fromEntries(list.map((e) => [e.name, e])), { heads: 4 });
  const byStatus = (s) => report.rows.filter((r) => r.status === s).map((r) => r.name);
  assert.deepEqual(byStatus('differs'), []);
  assert.deepEqual(byStatus('shape'), []);
  assert.deepEqual(byStatus('match'), want);
  assert.equal(report.loss, 'mse');
  assert.deepEqual(report.ignored, []);
}

test("the whole layer's lines with the course's own class (Wq … Wo, dWq …, as attributes)", () => {
  const cwd = mkdtempSync(join(tmpdir(), 'mha-course-class-'));
  try {
    // the class as a course notebook writes it (tests/reference/notebook_lesson5.py)
    const module = join(import.meta.dirname, '../reference');
    const program = [
      'import sys, numpy as np',
      `sys.path.insert(0, ${JSON.stringify(module)})`,
      'from notebook_lesson5 import MultiHeadAttention',
      'rng = np.random.default_rng(11)',
      'X = rng.standard_normal((2, 5, 32))',
      'layer = MultiHeadAttention(32, 4, rng, "sqrt")',
      'target = rng.standard_normal((2, 5, 32))',
    ].join('\n');
    const read = saveLayer(program, cwd);
    assert.deepEqual(Object.keys(read.arrays).sort(), [
      'Wk',
      'Wo',
      'Wq',
      'Wv',
      'X',
      'att',
      'concat',
      'dWk',
      'dWo',
      'dWq',
      'dWv',
      'k',
      'q',
      'target',
      'v',
    ]);
    assertWholeLayer(read, ['Q', 'K', 'V', 'att', 'concat', 'dWo', 'dWq', 'dWk', 'dWv']);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test("the layer's lines never save a gradient over its weight (params, grads share names)", () => {
  const cwd = mkdtempSync(join(tmpdir(), 'mha-shared-names-'));
  // a layer whose params and grads dicts both hold W_q …; its backward fills grads
  const program = `
import numpy as np
class Layer:
    def __init__(self, C):
        rng = np.random.default_rng(3)
        self.params = {n: rng.standard_normal((C, C)) for n in ('W_q', 'W_k', 'W_v', 'W_o')}
        self.grads = {n: np.zeros((C, C)) for n in self.params}
    def forward(self, X):
        return X @ self.params['W_q']
    def backward(self, dY):
        self.grads['W_q'] = np.ones_like(self.grads['W_q'])
layer = Layer(4)
X = np.ones((1, 2, 4)); target = np.zeros((1, 2, 4))`;
  try {
    const read = saveLayer(program, cwd);
    const byName = read.arrays;
    const weight = Array.from(byName.W_q.data, Number);
    assert.ok(
      weight.some((x) => x !== 0 && x !== 1),
      'W_q holds the weights',
    );
    const grad = Array.from(byName['grads.W_q'].data, Number);
    assert.ok(
      grad.every((x) => x === 1),
      'the gradient under grads.W_q',
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test("the whole layer's lines with the page's class (dicts W, cache, grads)", () => {
  const cwd = mkdtempSync(join(tmpdir(), 'mha-page-class-'));
  try {
    const read = saveLayer(`${layerObjectScript({ lr: 0.1, runSteps: 2 })}\nstep(layer, lr)`, cwd);
    // every forward result of lesson 3, then lesson 4's gradients (no loss, no dY: not saved)
    assertWholeLayer(read, [...FORWARD_NAMES, ...LESSON4_ORDER]);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
