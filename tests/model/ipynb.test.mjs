// web/model/ipynb.js: the page's NumPy scripts as one nbformat 4.5 notebook. nbformat's own
// validator checks the format (tests/model/ipynb-run.mjs: the schema, cell ids, and what it
// leaves open); the notebook of the page's sections (each lesson's script as the page builds it by
// default, and the playground's) is run by Jupyter (nbconvert --execute, Debian's python3 kernel),
// and what each cell prints is compared with the page's model (as tests/model/scripts.test.mjs
// compares each script).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import {
  NOTEBOOK_FILENAME,
  NOTEBOOK_MIME,
  buildNotebook,
  cellId,
  markdownEscape,
  notebookProgram,
  notebookText,
  sourceLines,
} from '../../web/model/ipynb.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { lesson1 } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { backwardOrder } from '../../web/model/gradcheck-report.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { PYTHON, loadMHA } from '../helpers.mjs';
import {
  assertClose,
  assertValidNotebook,
  checkRows,
  defaultSections,
  notebookErrors,
  printed,
  runNotebook,
} from './ipynb-run.mjs';

const mha = await loadMHA();

test('sourceLines: the lines with their newlines (splitlines(keepends=True)); "" is none', () => {
  assert.deepEqual(sourceLines(''), []);
  assert.deepEqual(sourceLines('a'), ['a']);
  assert.deepEqual(sourceLines('\n'), ['\n']);
  assert.deepEqual(sourceLines('a\nb'), ['a\n', 'b']);
  assert.deepEqual(sourceLines('a\nb\n'), ['a\n', 'b\n']);
  assert.deepEqual(sourceLines('a\n\nb'), ['a\n', '\n', 'b']);
  assert.equal(sourceLines('x = 1\n\nprint(x)').join(''), 'x = 1\n\nprint(x)');
});

test('markdownEscape and cellId', () => {
  assert.equal(
    markdownEscape('split_heads(x) * 2 <b> [a] #1 `c`'),
    String.raw`split\_heads(x) \* 2 \<b\> \[a\] \#1 \`c\``,
  );
  assert.equal(markdownEscape('L = sum(dY ⊙ Y)'), 'L = sum(dY ⊙ Y)');
  assert.equal(cellId('lesson-1'), 'lesson-1');
  assert.equal(cellId('Lesson 1 · Why?'), 'Lesson-1-Why');
  assert.equal(cellId('x'.repeat(80)).length, 64);
  assert.equal(cellId('·'), 'cell');
});

test('buildNotebook: a title cell, then markdown + code per section, valid nbformat 4.5', () => {
  const nb = buildNotebook({
    title: 'T *1*',
    lede: 'L',
    sections: [
      {
        id: 'lesson-1',
        kicker: 'Lesson 1',
        heading: 'One head',
        intro: ['a  b\n c', 'd_e'],
        code: '#!/usr/bin/env python3\nprint(1)\n',
      },
      { id: 'lesson-1', heading: 'Again', intro: 'x', code: 'print(2)' },
    ],
  });
  assertValidNotebook(nb);
  assert.deepEqual(
    nb.cells.map((c) => [c.cell_type, c.id]),
    [
      ['markdown', 'title'],
      ['markdown', 'lesson-1-text'],
      ['code', 'lesson-1-code'],
      ['markdown', 'lesson-1-2-text'],
      ['code', 'lesson-1-2-code'],
    ],
  );
  assert.equal(nb.cells[0].source.join(''), '# T \\*1\\*\n\nL');
  assert.equal(nb.cells[1].source.join(''), '## Lesson 1 · One head\n\na b c\n\nd\\_e');
  assert.equal(nb.cells[2].source.join(''), 'print(1)', 'no #! line, no trailing newline');
  assert.equal(nb.cells[3].source.join(''), '## Again\n\nx');
  assert.equal(notebookProgram(nb), 'print(1)\n\n\nprint(2)');
  const text = notebookText(nb);
  assert.deepEqual(JSON.parse(text), nb);
  assert.ok(text.endsWith('}\n'));
  assert.equal(NOTEBOOK_FILENAME, 'mha-wasm-companion.ipynb');
  assert.equal(NOTEBOOK_MIME, 'application/x-ipynb+json');
  assert.throws(() => buildNotebook({ title: 't', sections: [] }), /no sections/);
  assert.throws(
    () => buildNotebook({ title: 't', sections: [{ heading: 'Lesson 9', code: ' ' }] }),
    /section "Lesson 9" has no script/,
  );
});

test("nbformat's validator finds what the page must never write; the checks it leaves open", () => {
  const good = buildNotebook({
    title: 't',
    sections: [{ id: 'a', heading: 'A', code: 'print(1)' }],
  });
  /** `good` after `edit(its code cell, it)`. */
  const bad = (edit) => {
    const nb = structuredClone(good);
    edit(nb.cells[2], nb);
    return nb;
  };
  const ran = bad((c) => (c.outputs = [{ output_type: 'stream', name: 'stdout', text: 'x' }]));
  const older = bad((c, nb) => {
    nb.nbformat_minor = 4;
    for (const cell of nb.cells) delete cell.id;
  });
  const found = notebookErrors([
    good,
    bad((c, nb) => (c.id = nb.cells[1].id)),
    bad((c) => delete c.id),
    bad((c) => (c.id = 'a b')),
    bad((c) => (c.execution_count = '1')),
    bad((c) => (c.output = [])),
    bad((c, nb) => (nb.metadata.kernelspec = { name: 'python3' })),
    older,
    ran,
  ]);
  assert.equal(found[0], null);
  // nbformat 5.5 by itself would only warn about these two, and repair them
  assert.match(found[1], /^DuplicateCellId: Non-unique cell id 'a-text' detected/);
  assert.match(found[2], /^MissingIDFieldWarning: Code cell is missing an id field/);
  const messages = [
    "'a b' does not match '^[a-zA-Z0-9-_]+$'",
    "'1' is not of type 'integer', 'null'",
    "Additional properties are not allowed ('output' was unexpected)",
    "'display_name' is a required property",
  ];
  messages.forEach((m, k) => {
    assert.ok(found[3 + k].startsWith(`NotebookValidationError: ${m}`), found[3 + k]);
  });
  // valid for nbformat, and what the checks it leaves open are for: a 4.4 notebook (its schema
  // has no cell ids), a notebook already run, a source line that holds two
  assert.deepEqual(found.slice(7), [null, null]);
  assert.throws(() => assertValidNotebook(older), /nbformat_minor/);
  assert.throws(() => assertValidNotebook(bad((c) => (c.source = ['a\nb']))), /cell 2 line 0/);
  assert.throws(() => assertValidNotebook(ran), /cell 2: outputs/);
});

test('runNotebook: each cell its stdout and stderr; a cell that raises, with its traceback', () => {
  const nb = buildNotebook({
    title: 't',
    sections: [
      { id: 'ok', heading: 'A', code: 'import sys\nprint("x = 1")\nprint("w", file=sys.stderr)' },
      { id: 'bad', heading: 'B', code: 'import numpy as np\nnp.linalg.inv(np.zeros((2, 2)))' },
      {
        id: 'after',
        heading: 'C',
        code: 'import numpy, sys\nprint(sys.executable, numpy.__file__)',
      },
    ],
  });
  const { stdout, stderr, errors } = runNotebook(nb, { allowErrors: true });
  // the cells after one that raised still run, in one kernel: PYTHON, with the fixtures' NumPy
  const [exe, numpyFile] = stdout['after-code'].trim().split(' ');
  assert.deepEqual(Object.keys(stdout), ['ok-code', 'bad-code', 'after-code']);
  assert.equal(stdout['ok-code'], 'x = 1\n');
  assert.equal(stdout['bad-code'], '');
  assert.equal(realpathSync(exe), realpathSync(PYTHON));
  const numpyOfPython = execFileSync(PYTHON, ['-c', 'import numpy; print(numpy.__file__)']);
  assert.equal(numpyFile, String(numpyOfPython).trim());
  assert.deepEqual(stderr, { 'ok-code': 'w\n' });
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^cell bad-code: LinAlgError: Singular matrix\n/);
  assert.match(errors[0], /----> 2 np\.linalg\.inv/);
  assert.ok(!errors[0].includes(String.fromCharCode(27)), 'no terminal colours');
  assert.throws(() => runNotebook(nb), /cells that raised[^]*cell bad-code: LinAlgError/);
});

test("the page's notebook runs top to bottom and prints the page's numbers", (t) => {
  const nb = buildNotebook({ title: 'test', sections: defaultSections() });
  assertValidNotebook(nb);
  const t0 = Date.now();
  const { stdout: out, stderr, executed } = runNotebook(nb);
  t.diagnostic(`6 code cells ran in Jupyter in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  assert.deepEqual(
    Object.keys(out),
    defaultSections().map((s) => `${s.id}-code`),
  );
  assert.deepEqual(stderr, {}, 'no cell writes to stderr (a NumPy warning would)');
  assert.deepEqual(
    executed.cells.filter((c) => c.cell_type === 'code').map((c) => c.execution_count),
    [1, 2, 3, 4, 5, 6],
    'one kernel ran the cells in order',
  );

  const r1 = lesson1(mha, { tokens: tokenize(DEFAULT_SENTENCE) });
  assertClose(printed(out['lesson-1-code'], 'maxGap'), r1.maxGap, 'lesson 1 maxGap');
  const r2 = lesson2(mha);
  // (NumPy's BLAS may sum the narrow product in another order: ~1e-16 instead of 0)
  assert.ok(printed(out['lesson-2-code'], 'headMaxDiff') < 1e-14 && r2.headMaxDiff < 1e-14);
  assert.equal(printed(out['lesson-2-code'], 'roundTrip'), r2.roundTrip);
  const r3 = lesson3(mha, { causal: false });
  for (const label of ['blockDiagDelta', 'fullDelta']) {
    const got = JSON.parse(out['lesson-3-code'].match(new RegExp(`^${label} = (.*)$`, 'm'))[1]);
    assertClose(got, r3[label], `lesson 3 ${label}`);
  }
  const r4 = lesson4(mha);
  assertClose(printed(out['lesson-4-code'], 'L = sum\\(dY \\* Y\\)'), r4.loss, 'lesson 4 L');
  // the check's rows in lesson 4's backward order, named by gradient, as the page's tables
  const gradients = backwardOrder(mha).map((o) => o.gradient);
  const check4 = checkRows(out['lesson-4-code']);
  assert.deepEqual(Object.keys(check4), gradients, 'lesson 4 check rows');
  for (const [name, row] of Object.entries(check4)) assert.equal(row[3], 'pass', name);

  const model = sentenceModel(mha, { tokens: tokenize(DEFAULT_SENTENCE) });
  const trainer = new Trainer(mha, model);
  try {
    assertClose(printed(out['lesson-5-code'], 'step +0 +loss'), trainer.losses[0], 'lesson 5 loss');
    const check5 = checkRows(out['lesson-5-code']);
    assert.deepEqual(Object.keys(check5), gradients, 'lesson 5 check rows');
    for (const [name, row] of Object.entries(check5)) {
      assert.equal(row[3], 'pass', name);
      assert.ok(row[2] <= row[1], `${name}: norm-wise ${row[2]} > max rel ${row[1]}`);
    }
    for (let k = 0; k < 3; k++) trainer.step(0.1);
    for (let k = 0; k <= 3; k++) {
      const got = printed(out['playground-code'], `step +${k} +loss`);
      assertClose(got, trainer.losses[k], `playground loss ${k}`);
    }
  } finally {
    trainer.free();
  }
});
