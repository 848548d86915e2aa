// The tensor table has one home, c/mha.h (MHA_TENSORS): web/mha.js keeps no list of its own.
// Everything mha.js reports about the tensors (names, kinds, restart stages, gradients, backward
// steps, check rows, lesson 4's gradient order, shapes) must equal what the module's raw exports
// say, read here from a SEPARATE instance of web/mha.wasm without going through mha.js; and
// mha.js's source must hold no list of tensor names (nor a status code as a bare number).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as espree from 'espree';
import { LESSON4_ORDER, loadMHA, repoRoot } from './helpers.mjs';

const mha = await loadMHA();

// The raw module, instantiated on its own (the same way mha.js does, but not by it).
const { instance } = await WebAssembly.instantiate(
  readFileSync(join(repoRoot, 'web', 'mha.wasm')),
  {
    env: { emscripten_notify_memory_growth() {} },
  },
);
const ex = instance.exports;
ex._initialize?.();
const cstr = (p) => {
  const b = new Uint8Array(ex.memory.buffer, p);
  return new TextDecoder().decode(b.subarray(0, b.indexOf(0)));
};
const K = {};
for (let i = 0; i < ex.mha_constant_count(); i++) {
  K[cstr(ex.mha_constant_name(i))] = ex.mha_constant_value(i);
}
const rawNames = Array.from({ length: ex.mha_tensor_count() }, (_, id) =>
  cstr(ex.mha_tensor_name(id)),
);

// The shape the raw module gives for tensor `id` and these sizes.
const out = ex.malloc(64);
function rawShape(id, B, T, C, h) {
  assert.equal(ex.mha_tensor_shape_for(id, B, T, C, h, out, out + 4), K.MHA_OK);
  return Array.from(
    new Int32Array(ex.memory.buffer, out + 4, new Int32Array(ex.memory.buffer, out, 1)[0]),
  );
}

test("mha.tensors, tensorNames, checkNames and gradOrder are the raw exports' table", (t) => {
  assert.ok(rawNames.length >= 29, `${rawNames.length} tensors`);
  assert.deepEqual(mha.tensorNames, rawNames);
  const kinds = {};
  for (const [k, v] of Object.entries(K)) {
    if (k.startsWith('MHA_KIND_')) kinds[v] = k.slice('MHA_KIND_'.length).toLowerCase();
  }
  const checkOf = new Map();
  for (let w = 0; w < K.MHA_CHECK_COUNT; w++) checkOf.set(ex.mha_check_tensor(w), w);
  const expected = rawNames.map((name, id) => {
    const stage = ex.mha_tensor_stage(id);
    const grad = ex.mha_tensor_grad(id);
    return {
      id,
      name,
      kind: kinds[ex.mha_tensor_kind(id)],
      stage: stage === K.MHA_STAGE_NONE ? null : stage,
      grad: grad === K.MHA_T_NONE ? null : rawNames[grad],
      step: ex.mha_tensor_step(id),
      check: checkOf.has(id) ? checkOf.get(id) : null,
    };
  });
  assert.deepEqual(
    mha.tensors.map((x) => ({ ...x })),
    expected,
  );
  assert.ok(Object.isFrozen(mha.tensors) && mha.tensors.every(Object.isFrozen));
  // the check rows and lesson 4's gradients, from their own exports
  assert.deepEqual(
    mha.checkNames,
    Array.from({ length: K.MHA_CHECK_COUNT }, (_, w) => cstr(ex.mha_check_name(w))),
  );
  const order = [];
  for (let i = 0; ex.mha_grad_order(i) !== K.MHA_T_NONE; i++) {
    order.push(rawNames[ex.mha_grad_order(i)]);
  }
  assert.deepEqual(mha.gradOrder, order);
  // ... which is lesson 4's order (the page's lesson 4 shows the gradients in mha.gradOrder)
  assert.deepEqual(mha.gradOrder, LESSON4_ORDER);
  // the merged gradients of step 9 are readable tensors, between dK (8) and dWq (10)
  for (const name of ['dQm', 'dKm', 'dVm']) {
    const x = mha.tensors.find((y) => y.name === name);
    assert.deepEqual([x.kind, x.step], ['gradient', 9], name);
  }
  // fresh copies: changing them changes nothing
  mha.gradOrder.pop();
  mha.tensorNames.pop();
  assert.equal(mha.gradOrder.length, order.length);
  assert.equal(mha.tensorNames.length, rawNames.length);
  t.diagnostic(`${rawNames.length} tensors; gradOrder ${mha.gradOrder.join(' ')}`);
});

test(`mha.tensorShape equals mha_tensor_shape_for, and layer.tensor(name).shape after a backward`, (t) => {
  const sizes = [
    [2, 6, 64, 4],
    [1, 1, 1, 1],
    [3, 5, 12, 3],
  ];
  let compared = 0;
  for (const [B, T, C, heads] of sizes) {
    const layer = mha.createLayer({ C, heads, seed: 1 });
    layer.forward(mha.standardNormal(B * T * C, { seed: 2 }), { B, T });
    layer.backward(mha.standardNormal(B * T * C, { seed: 3 }));
    rawNames.forEach((name, id) => {
      const shape = mha.tensorShape(name, { B, T, C, heads });
      assert.deepEqual(shape, rawShape(id, B, T, C, heads), name);
      const x = layer.tensor(name);
      assert.deepEqual(x.shape, shape, name);
      assert.equal(
        x.data.length,
        shape.reduce((a, b) => a * b, 1),
        name,
      );
      compared++;
    });
    layer.free();
  }
  t.diagnostic(`${compared} shapes compared`);
});

test('mha.constants is the raw constant table; mha.js compares status codes by these names', () => {
  assert.deepEqual({ ...mha.constants }, K);
  assert.ok(Object.isFrozen(mha.constants));
  assert.equal(mha.constants.MHA_ENOFORWARD, K.MHA_ENOFORWARD);
});

// Every node of an ESTree AST (espree: the parser ESLint runs on web/mha.js).
function* nodes(node) {
  if (!node || typeof node.type !== 'string') return;
  yield node;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'parent') continue;
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child === 'object') yield* nodes(child);
    }
  }
}

test('web/mha.js holds no list of tensor names, and no status code as a number', (t) => {
  const src = readFileSync(join(repoRoot, 'web', 'mha.js'), 'utf8');
  const ast = espree.parse(src, { ecmaVersion: 2024, sourceType: 'module' });
  const names = new Set(rawNames);
  const isName = (n) => n?.type === 'Literal' && names.has(n.value);
  const all = [...nodes(ast)];
  const literals = all.filter(isName).map((n) => n.value);
  // no array (or Set, or Map) of tensor names, no object keyed or valued by them
  const listed = (n) => {
    if (n.type === 'ArrayExpression') return n.elements;
    if (n.type === 'ObjectExpression') return n.properties.flatMap((p) => [p.key, p.value]);
    return [];
  };
  for (const n of all) {
    const items = listed(n);
    const found = items.filter(isName).map((x) => x.value);
    assert.ok(found.length < 2, `a list of tensor names in web/mha.js: ${found.join(', ')}`);
  }
  // the few single names it uses: what its own API returns (forward's Y and attention,
  // backward's dX), the tensor it reads B and T from, and argument names in its error messages
  // (X, dY, and singleHead's options Wq, Wk, Wv: lesson 1's own projections, not the layer's)
  assert.deepEqual([...new Set(literals)].sort(), ['Wk', 'Wq', 'Wv', 'X', 'Y', 'att', 'dX', 'dY']);
  // no hand-kept list constants of the old kind, and no status code or struct offset by number
  for (const re of [
    /FORWARD_FROM|CHECK_ROW_FIELDS|LOSS_KINDS|RNG_KINDS/,
    /\bcode\s*[!=]==\s*-?\d/,
    /\bout\s*\+\s*\d/,
    /\bf\[\d\]/,
  ]) {
    assert.doesNotMatch(src, re);
  }
  t.diagnostic(`${literals.length} tensor-name literals in web/mha.js, none in a list`);
});

test(`web/mha.d.ts: TensorName lists exactly the module's tensors, CheckName its check rows`, () => {
  const dts = readFileSync(join(repoRoot, 'web', 'mha.d.ts'), 'utf8');
  const union = (type) => {
    const m = dts.match(new RegExp(`export type ${type} =([^;]*);`));
    assert.ok(m, type);
    return [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]);
  };
  assert.deepEqual(union('TensorName'), rawNames);
  assert.deepEqual(union('CheckName'), mha.checkNames);
  assert.deepEqual(
    union('ForwardFromName'),
    mha.tensors.filter((x) => x.stage !== null).map((x) => x.name),
  );
  assert.deepEqual(union('TensorKind').sort(), [...new Set(mha.tensors.map((x) => x.kind))].sort());
});

// The page's own modules: every .js file of a folder, recursively.
function webFiles(dir) {
  return readdirSync(join(repoRoot, 'web', dir), { withFileTypes: true }).flatMap((f) => {
    const rel = `${dir}/${f.name}`;
    if (f.isDirectory()) return webFiles(rel);
    return f.name.endsWith('.js') ? [rel] : [];
  });
}

test('no list of tensor names in web/model, jobs, components: they ask the module', async (t) => {
  const { weightNames, forwardNames } = await import('../web/model/tensors.js');
  const names = new Set(rawNames);
  const files = ['model', 'jobs', 'components'].flatMap(webFiles);
  assert.ok(files.length > 20, `only ${files.length} files found`);
  let literals = 0;
  for (const file of files) {
    const src = readFileSync(join(repoRoot, 'web', file), 'utf8');
    const ast = espree.parse(src, { ecmaVersion: 2024, sourceType: 'module', loc: true });
    for (const n of nodes(ast)) {
      if (n.type === 'Literal' && names.has(n.value)) literals++;
      let items = [];
      if (n.type === 'ArrayExpression') items = n.elements;
      if (n.type === 'ObjectExpression') items = n.properties.map((p) => p.key);
      const found = items.filter((x) => x?.type === 'Literal' && names.has(x.value));
      assert.ok(
        found.length < 2,
        `web/${file}:${n.loc.start.line}: a list of tensor names (${found.map((x) => x.value)})`,
      );
    }
  }
  // the lists the page uses come from the module's table
  assert.deepEqual(
    weightNames(mha),
    mha.tensors.filter((x) => x.kind === 'param').map((x) => x.name),
  );
  // the course draws the weights in this order from one stream: a reordered C table would
  // change every figure, so the order is pinned here against the course's text
  assert.deepEqual(weightNames(mha), ['Wq', 'Wk', 'Wv', 'Wo']);
  assert.deepEqual(forwardNames(mha), [
    'X',
    ...mha.tensors.filter((x) => x.kind === 'intermediate').map((x) => x.name),
    'Y',
  ]);
  t.diagnostic(`${files.length} modules, ${literals} single tensor-name literals, no list`);
});
