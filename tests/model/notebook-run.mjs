// notebook-run.mjs - shared by tests/model/ipynb.test.mjs, tests/model/lesson-arrays.test.mjs and
// tests/browser/downloads.test.mjs: nbformat 4.5's rules checked by hand, the page's default
// sections, running a notebook's code cells top to bottom in one python3 process, reading what
// they print, and reading a .npy / .npz file with NumPy itself (np.load).
//
// Nothing here is a test by itself; node --test only runs files named *.test.mjs.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
  trainingScript,
} from '../../web/model/numpy-scripts.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';

const TOL = 1e-12;

/** nbformat 4.5's rules for a notebook (nbformat.v4.5.schema.json), checked by hand. */
export function assertValidNotebook(nb) {
  assert.equal(nb.nbformat, 4);
  assert.equal(nb.nbformat_minor, 5);
  assert.deepEqual(Object.keys(nb).sort(), ['cells', 'metadata', 'nbformat', 'nbformat_minor']);
  assert.equal(nb.metadata.kernelspec.name, 'python3');
  assert.equal(typeof nb.metadata.kernelspec.display_name, 'string');
  assert.equal(nb.metadata.language_info.name, 'python');
  const ids = new Set();
  for (const [i, c] of nb.cells.entries()) {
    assert.match(c.id, /^[a-zA-Z0-9-_]{1,64}$/, `cell ${i} id`);
    assert.ok(!ids.has(c.id), `cell ${i}: id ${c.id} repeated`);
    ids.add(c.id);
    assert.deepEqual(c.metadata, {});
    assert.ok(Array.isArray(c.source), `cell ${i}: source is a list of lines`);
    c.source.forEach((line, k) => {
      assert.equal(typeof line, 'string');
      // one line each: '\n' only at its end, and at the end of every line but the last
      const at = line.indexOf('\n');
      const last = k === c.source.length - 1;
      assert.ok(at === line.length - 1 || (last && at === -1), `cell ${i} line ${k}`);
    });
    if (c.cell_type === 'markdown') {
      assert.deepEqual(Object.keys(c).sort(), ['cell_type', 'id', 'metadata', 'source']);
    } else {
      assert.equal(c.cell_type, 'code');
      assert.deepEqual(Object.keys(c).sort(), [
        'cell_type',
        'execution_count',
        'id',
        'metadata',
        'outputs',
        'source',
      ]);
      assert.equal(c.execution_count, null);
      assert.deepEqual(c.outputs, []);
    }
  }
}

/** The page's sections with their scripts as the page builds them before any interaction. */
export function defaultSections() {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const l5 = (title, lrs) => trainingScript({ title, sentence: DEFAULT_SENTENCE, tokens, lrs });
  return [
    {
      id: 'lesson-1',
      heading: 'One head',
      code: lesson1Script({ sentence: DEFAULT_SENTENCE, tokens }),
    },
    { id: 'lesson-2', heading: 'Splitting', code: lesson2Script() },
    { id: 'lesson-3', heading: 'Parallel', code: lesson3Script({ causal: false }) },
    { id: 'lesson-4', heading: 'Backward', code: lesson4Script() },
    { id: 'lesson-5', heading: 'Training', code: l5('Lesson 5', []) },
    { id: 'playground', heading: 'Playground', code: l5('Playground', [0.1, 0.1, 0.1]) },
  ];
}

/**
 * Runs the notebook's code cells top to bottom in one python3 process; returns what each cell
 * printed, by cell id (a marker line between cells, added here only, splits the output).
 */
export function runNotebook(nb) {
  const code = nb.cells.filter((c) => c.cell_type === 'code');
  const program = code
    .map((c) => `print(${JSON.stringify(`@@cell ${c.id}`)})\n${c.source.join('')}`)
    .join('\n\n\n');
  const out = execFileSync('/usr/bin/python3', ['-'], {
    input: `${program}\n`,
    encoding: 'utf8',
    env: { ...process.env, PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 64 << 20,
  });
  const byCell = {};
  let current = null;
  for (const line of out.split('\n')) {
    const m = line.match(/^@@cell (\S+)$/);
    if (m) {
      current = m[1];
      byCell[current] = [];
    } else if (current) byCell[current].push(line);
  }
  return Object.fromEntries(Object.entries(byCell).map(([k, v]) => [k, v.join('\n')]));
}

/** The float printed after `label =` (Python repr). */
export function printed(out, label) {
  const m = out.match(new RegExp(`^${label} = (\\S+)`, 'm'));
  assert.ok(m, `no "${label} =" in:\n${out}`);
  return Number(m[1]);
}

/** Normwise, as tests/model/scripts.test.mjs: max |a - b| <= tol * max |b| (numbers or arrays). */
export function assertClose(got, want, what, tol = TOL) {
  const x = [got].flat(Infinity);
  const y = Array.from([want].flat(Infinity));
  assert.equal(x.length, y.length, `${what}: length`);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < x.length; i++) {
    assert.ok(Number.isFinite(x[i]) && Number.isFinite(y[i]), `${what}[${i}] not finite`);
    diff = Math.max(diff, Math.abs(x[i] - y[i]));
    scale = Math.max(scale, Math.abs(y[i]));
  }
  assert.ok(diff <= tol * scale, `${what}: notebook ${x} vs page ${y} (max diff ${diff})`);
}

/**
 * The gradient-check rows a cell printed: { tensor: [maxAbs, maxRel, normRel, status, maxRelSum] }
 * (the script prints max abs, max rel, cs231n rel, norm rel, then pass or FAIL).
 */
export function checkRows(out) {
  const rows = [...out.matchAll(/^(\w+) +\(.*\) +(\S+) +(\S+) +(\S+) +(\S+) +(pass|FAIL)$/gm)];
  return Object.fromEntries(
    rows.map((m) => [m[1], [Number(m[2]), Number(m[3]), Number(m[5]), m[6], Number(m[4])]]),
  );
}

/**
 * np.load(path) in python3: { name: { shape, dtype, data: Float64Array } } in the file's order
 * (a .npy gives one entry named ''). Values travel as the hex of their float64 bits: exact.
 */
export function numpyLoad(path) {
  const out = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      `import json, sys, numpy as np
d = np.load(sys.argv[1])
arrays = {k: d[k] for k in d.files} if hasattr(d, "files") else {"": d}
print(json.dumps({k: [list(v.shape), v.dtype.str, v.astype(">f8").tobytes().hex()]
                  for k, v in arrays.items()}))`,
      path,
    ],
    { encoding: 'utf8', maxBuffer: 256 << 20 },
  );
  const result = {};
  for (const [name, [shape, dtype, hex]] of Object.entries(JSON.parse(out))) {
    const bytes = Buffer.from(hex, 'hex');
    const data = new Float64Array(bytes.length / 8);
    for (let i = 0; i < data.length; i++) data[i] = bytes.readDoubleBE(i * 8);
    result[name] = { shape, dtype, data };
  }
  return result;
}
