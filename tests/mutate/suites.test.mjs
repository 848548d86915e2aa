// The mutation run's suites (tests/mutate/suites.mjs) follow the test tree: every Node test file
// under tests/ is a suite a mutant must get past unless LEFT_OUT names it with a reason, so a test
// file that moves or is added cannot drop out of the run unnoticed (as tests/jobs/compute.test.mjs
// once did when tests/model/ was split into tests/ folders mirroring web/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers.mjs';
import { JS_SUITES, LEFT_OUT, NODE_SUITES, leftOut, nodeTestFiles } from './suites.mjs';

/** Every *.test.mjs under tests/, found here by a walk of its own. */
function walk(dir) {
  const out = [];
  for (const e of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...walk(`${dir}/${e.name}`));
    else if (e.name.endsWith('.test.mjs')) out.push(`${dir}/${e.name}`);
  }
  return out;
}

test('every Node test file is a suite, or left out with a reason; none twice', () => {
  const all = walk('tests').sort();
  assert.deepEqual([...nodeTestFiles()].sort(), all);
  for (const f of all) {
    assert.ok(NODE_SUITES.includes(f) !== leftOut(f), `${f}: in exactly one of the two lists`);
  }
  assert.equal(new Set(NODE_SUITES).size, NODE_SUITES.length, 'a suite listed twice');
  for (const f of NODE_SUITES) assert.ok(existsSync(join(repoRoot, f)), `${f} does not exist`);
  for (const [p, why] of Object.entries(LEFT_OUT)) {
    assert.ok(existsSync(join(repoRoot, p)), `LEFT_OUT: ${p} does not exist`);
    assert.ok(why.length > 10, `LEFT_OUT: ${p} needs its reason`);
  }
  // the files of the folders that mirror web/ are all in
  for (const f of ['tests/jobs/compute.test.mjs', 'tests/lessons/registry.test.mjs']) {
    assert.ok(NODE_SUITES.includes(f), f);
  }
});

test('the JS suites: the Node suites but the SIMD comparison (one web/mha.js, twice)', () => {
  assert.deepEqual(
    NODE_SUITES.filter((f) => !JS_SUITES.includes(f)),
    ['tests/simd.test.mjs'],
  );
});
