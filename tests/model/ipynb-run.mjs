// ipynb-run.mjs - shared by tests/model/ipynb.test.mjs, tests/model/lesson-arrays.test.mjs,
// tests/browser/downloads.test.mjs and longtasks.test.mjs: a notebook checked by nbformat's own
// validator and run by Jupyter (nbconvert --execute with ipykernel's python3 kernel), the page's
// default sections, what each code cell printed, and reading a .npy / .npz file with NumPy itself
// (np.load). The Jupyter tools are Debian's python3-nbformat, python3-nbconvert and
// python3-ipykernel (`bash .ci/setup jupyter`), run by the same python3 as the NumPy fixtures.
//
// Nothing here is a test by itself; node --test only runs files named *.test.mjs.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
  trainingScript,
} from '../../web/model/numpy-scripts.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { PYTHON } from '../helpers.mjs';

const TOL = 1e-12;

const PY_ENV = {
  ...process.env,
  PYTHONUTF8: '1',
  PYTHONIOENCODING: 'utf-8',
  // ipykernel's debugger otherwise warns about frozen modules on every kernel start
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
};

/** Runs `PYTHON args`; a failure throws with what it wrote to stderr. */
function python(args, what) {
  try {
    return execFileSync(PYTHON, args, {
      encoding: 'utf8',
      env: PY_ENV,
      maxBuffer: 64 << 20,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const missing = /No module named '?(nbformat|nbconvert|ipykernel|jupyter_client)/.test(
      e.stderr ?? '',
    );
    const hint = missing ? ' (install it: bash .ci/setup jupyter)' : '';
    throw new Error(`${what} failed${hint}:\n${(e.stderr ?? e.message).trim()}`, { cause: e });
  }
}

/** A notebook given as an object or as the path of a .ipynb file: { path, text, nb, dispose }. */
function notebookFile(notebook) {
  if (typeof notebook === 'string') {
    const text = readFileSync(notebook, 'utf8');
    return { path: notebook, text, nb: JSON.parse(text), dispose() {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'mha-ipynb-'));
  const path = join(dir, 'notebook.ipynb');
  const text = `${JSON.stringify(notebook, null, 1)}\n`;
  writeFileSync(path, text);
  return { path, text, nb: notebook, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

// nbformat.validate against the schema of the version each file declares (4.5 here); prints one
// JSON list, null for a valid file, else the validator's message. The jsonschema back end (nbformat
// knows two) names the field at fault. nbformat 5.5 repairs a missing or repeated cell id with
// only a warning: here those warnings are errors.
const VALIDATE = `import json, os, sys, warnings
os.environ["NBFORMAT_VALIDATOR"] = "jsonschema"
import nbformat
from nbformat.warnings import DuplicateCellId, MissingIDFieldWarning
for w in (DuplicateCellId, MissingIDFieldWarning):
    warnings.simplefilter("error", w)
found = []
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    try:
        nbformat.validate(nb)
        found.append(None)
    except (nbformat.ValidationError, DuplicateCellId, MissingIDFieldWarning) as e:
        found.append(f"{type(e).__name__}: {e}")
print(json.dumps(found))`;

/**
 * What nbformat's validator (Debian's python3-nbformat) finds wrong in each notebook (an object, or
 * the path of a .ipynb file), in one python3 process: null for a valid one, else its message.
 */
export function notebookErrors(notebooks) {
  const files = notebooks.map(notebookFile);
  try {
    const paths = files.map((f) => f.path);
    return JSON.parse(python(['-c', VALIDATE, ...paths], 'nbformat.validate'));
  } finally {
    for (const f of files) f.dispose();
  }
}

/**
 * A notebook (object, or path of a .ipynb file) checked by nbformat's validator, and for what the
 * validator leaves open (checked first, in JS): it takes the schema of the version the file
 * declares, so the version is checked here (the page promises 4.5); the kernel named (the schema
 * only wants a string); that the page writes a notebook never run (no outputs, no execution
 * counts) and no cell metadata; that a cell's source is a list of single lines, as Jupyter writes
 * it (the schema also takes one string, or lines that hold several).
 */
export function assertValidNotebook(notebook) {
  const nb = typeof notebook === 'string' ? JSON.parse(readFileSync(notebook, 'utf8')) : notebook;
  assert.equal(nb.nbformat, 4, 'nbformat');
  assert.equal(nb.nbformat_minor, 5, 'nbformat_minor');
  assert.equal(nb.metadata?.kernelspec?.name, 'python3', 'kernelspec');
  assert.equal(nb.metadata?.language_info?.name, 'python', 'language_info');
  for (const [i, c] of (nb.cells ?? []).entries()) {
    assert.deepEqual(c.metadata, {}, `cell ${i}: metadata`);
    assert.ok(Array.isArray(c.source), `cell ${i}: source is a list of lines`);
    c.source.forEach((line, k) => {
      // one line each: '\n' only at its end, and at the end of every line but the last
      const at = String(line).indexOf('\n');
      const last = k === c.source.length - 1;
      assert.ok(at === line.length - 1 || (last && at === -1), `cell ${i} line ${k}`);
    });
    if (c.cell_type === 'code') {
      assert.equal(c.execution_count, null, `cell ${i}: execution_count`);
      assert.deepEqual(c.outputs, [], `cell ${i}: outputs`);
    }
  }
  const [error] = notebookErrors([notebook]);
  assert.equal(error, null, 'nbformat.validate');
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

// The kernel the notebook names, as Jupyter resolves it (jupyter_client, as nbconvert does).
const KERNEL = `import json, sys
from jupyter_client.kernelspec import KernelSpecManager
spec = KernelSpecManager().get_kernel_spec(sys.argv[1])
print(json.dumps({"argv": spec.argv, "dir": spec.resource_dir}))`;

const kernels = new Map();

/**
 * The kernelspec `name` resolves to, checked to start the same python3 as PYTHON (Debian's, with
 * python3-numpy): a kernel of another Python (say a user's own kernelspec) would run another NumPy.
 */
function assertKernel(name) {
  if (!kernels.has(name)) {
    const spec = JSON.parse(python(['-c', KERNEL, name], `the kernelspec "${name}"`));
    assert.equal(
      realpathSync(spec.argv[0]),
      realpathSync(PYTHON),
      `kernelspec "${name}" (${spec.dir}) starts ${spec.argv[0]}, not ${PYTHON}`,
    );
    assert.deepEqual(spec.argv.slice(1, 3), ['-m', 'ipykernel_launcher'], `kernelspec "${name}"`);
    kernels.set(name, spec);
  }
  return kernels.get(name);
}

/** Text without terminal colours (IPython colours its tracebacks). */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const plain = (text) => text.replace(ANSI_COLOUR, '');

/**
 * nbconvert --execute of a .ipynb file: { stdout, stderr, errors, executed } (see runNotebook).
 * --allow-errors: every cell runs, and each one that raised is reported with its own traceback.
 */
function execute(path) {
  const dir = mkdtempSync(join(tmpdir(), 'mha-ipynb-run-'));
  let executed;
  try {
    const args = ['--to', 'notebook', '--execute', '--allow-errors'];
    args.push('--ExecutePreprocessor.timeout=600', '--output-dir', dir, '--output', 'executed');
    python(['-m', 'nbconvert', ...args, path], 'nbconvert --execute');
    executed = JSON.parse(readFileSync(join(dir, 'executed.ipynb'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const stdout = {};
  const stderr = {};
  const errors = [];
  for (const cell of executed.cells.filter((c) => c.cell_type === 'code')) {
    const streams = { stdout: '', stderr: '' };
    for (const o of cell.outputs) {
      // a stream's text: one string, or its lines each with its '\n' (nbformat's multi-line string)
      if (o.output_type === 'stream') streams[o.name] += [o.text].flat().join('');
      if (o.output_type === 'error') {
        errors.push(`cell ${cell.id}: ${o.ename}: ${o.evalue}\n${plain(o.traceback.join('\n'))}`);
      }
    }
    stdout[cell.id] = streams.stdout;
    if (streams.stderr) stderr[cell.id] = streams.stderr;
  }
  return { stdout, stderr, errors, executed };
}

const runs = new Map();

/**
 * Runs a notebook (object, or path of a .ipynb file) in Jupyter: `python3 -m nbconvert --to
 * notebook --execute` with the kernel it names (checked first to be PYTHON's ipykernel), every
 * code cell in order in one kernel. Returns { stdout, stderr, errors, executed }: what each code
 * cell printed (by cell id, every code cell present), what it wrote to stderr (only the cells that
 * did), one message with traceback per cell that raised, and the executed notebook. A cell that
 * raised fails the call unless `allowErrors`. A notebook of the same text runs once per process:
 * later calls get the first run's result.
 */
export function runNotebook(notebook, { allowErrors = false } = {}) {
  const file = notebookFile(notebook);
  let result = runs.get(file.text);
  try {
    if (!result) {
      assertKernel(file.nb.metadata.kernelspec.name);
      result = execute(file.path);
      runs.set(file.text, result);
    }
  } finally {
    file.dispose();
  }
  if (!allowErrors) assert.deepEqual(result.errors, [], 'cells that raised');
  return result;
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
    PYTHON,
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
