// web/model/scripts/*.py, the Python of the "Copy as NumPy" scripts: every file is real Python
// (pyflakes finds nothing, py_compile compiles it), every file is used (rendered by
// web/model/numpy-scripts.js or included by a file that is), web/model/scripts/sources.js is what
// tests/tools/py-scripts.mjs makes of them, and the scripts the page renders from them pass
// pyflakes too, with every `# page: if` both ways. (tests/model/scripts.test.mjs and the others
// run the rendered scripts with python3 + NumPy.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PYTHON, repoRoot } from '../helpers.mjs';
import { SCRIPTS_DIR, SOURCES_JS, pyFiles, sourcesModule } from '../tools/py-scripts.mjs';
import {
  xSnippet,
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
  layerObjectScript,
  trainingScript,
  playgroundScript,
} from '../../web/model/numpy-scripts.js';
import { tokenize } from '../../web/model/tokens.js';

const FILES = pyFiles();

/** python3 with `args`; a temporary pycache, so that nothing is written into web/. */
function python(args) {
  const cache = mkdtempSync(join(tmpdir(), 'mha-pycache-'));
  try {
    return spawnSync(PYTHON, args, {
      cwd: SCRIPTS_DIR,
      encoding: 'utf8',
      env: { ...process.env, PYTHONPYCACHEPREFIX: cache, PYTHONUTF8: '1' },
    });
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

test('web/model/scripts: pyflakes finds nothing in any .py', (t) => {
  assert.ok(FILES.length >= 10, `only ${FILES.length} .py files`);
  const r = python(['-m', 'pyflakes', ...FILES]);
  assert.equal(r.error, undefined, `${PYTHON} -m pyflakes: ${r.error}`);
  assert.equal(`${r.stdout}${r.stderr}`, '', 'pyflakes findings');
  assert.equal(r.status, 0);
  t.diagnostic(`${FILES.length} files: ${FILES.join(' ')}`);
});

test('web/model/scripts: py_compile compiles every .py', () => {
  const r = python(['-m', 'py_compile', ...FILES]);
  assert.equal(`${r.stdout}${r.stderr}`, '');
  assert.equal(r.status, 0);
});

test('web/model/scripts/sources.js is up to date with the .py files', () => {
  assert.equal(
    readFileSync(SOURCES_JS, 'utf8'),
    sourcesModule(),
    'stale: run make bundle (or node tests/tools/py-scripts.mjs)',
  );
});

test('every .py is used: rendered by numpy-scripts.js or included by a file that is', () => {
  const js = readFileSync(join(repoRoot, 'web', 'model', 'numpy-scripts.js'), 'utf8');
  // the file names quoted in it (its render('lesson1.py', ...) calls), in either quotes
  const rendered = [...js.matchAll(/['"]([\w-]+\.py)['"]/g)].map((m) => m[1]);
  assert.ok(rendered.length >= 8, `render calls: ${rendered}`);
  const includes = new Map(
    FILES.map((f) => {
      const text = readFileSync(join(SCRIPTS_DIR, f), 'utf8');
      return [f, [...text.matchAll(/^# page: include (\S+)$/gm)].map((m) => m[1])];
    }),
  );
  const used = new Set();
  const visit = (f) => {
    assert.ok(FILES.includes(f), `${f} is rendered or included but is not in web/model/scripts`);
    if (used.has(f)) return;
    used.add(f);
    includes.get(f).forEach(visit);
  };
  rendered.forEach(visit);
  assert.deepEqual(
    FILES.filter((f) => !used.has(f)),
    [],
    'files nothing renders or includes',
  );
});

test('the rendered scripts pass pyflakes too, every `# page: if` both ways', (t) => {
  const sentence = 'The cat saw the "Cat" — naïve? 🙂 it\'s\ta\\b';
  const tokens = tokenize(sentence);
  const base = { title: 't', sentence, tokens, C: 8, heads: 2, seed: 3, lrs: [0.1, 0.2] };
  const five = { stencil: 'five-point', eps: 1e-3, form: 'norm' };
  const scripts = {
    x: xSnippet({ sentence, tokens }),
    x_legacy_pe: xSnippet({ sentence, tokens, rng: 'legacy', pe: true }),
    lesson1: lesson1Script({ sentence, tokens }),
    lesson2: lesson2Script(),
    lesson3: lesson3Script({ causal: false }),
    lesson3_causal: lesson3Script({ causal: true }),
    lesson4: lesson4Script(),
    layer_object: layerObjectScript(),
    training: trainingScript({ ...base, convention: five, checkpoints: 'lesson5' }),
    training_legacy: trainingScript({ ...base, rng: 'legacy', pe: true, printAtt: false }),
    playground: playgroundScript({ ...base, causal: true }),
    playground_legacy: playgroundScript({ ...base, rng: 'legacy' }),
    playground_trained: playgroundScript({ ...base, attSteps: 2 }),
  };
  const dir = mkdtempSync(join(tmpdir(), 'mha-rendered-'));
  try {
    const paths = Object.entries(scripts).map(([name, text]) => {
      assert.doesNotMatch(text, /# page:|__[A-Z][A-Z0-9_]*__/, `${name}: a directive is left`);
      const path = join(dir, `${name}.py`);
      writeFileSync(path, text);
      return path;
    });
    const r = python(['-m', 'pyflakes', ...paths]);
    assert.equal(`${r.stdout}${r.stderr}`, '', 'pyflakes findings in the rendered scripts');
    assert.equal(r.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  t.diagnostic(`${Object.keys(scripts).length} rendered scripts`);
});
