// The C ABI of c/mha.h, called through the RAW wasm exports (mha.exports), without web/mha.js's
// argument checks in between: status codes, out-parameters, NULL handling, and that the module
// exports exactly the public functions of the header, plus malloc and free (the Makefile's EXPORTS
// list is read from the header's declarations; a test here checks that too).
// Status codes, tensor ids, version numbers and the other constants are parsed from c/mha.h (its
// enums and its one-line-each lists MHA_STATUSES, MHA_TENSORS, MHA_CHECK_ROW_FIELDS), not copied,
// and the module's own table of them (mha_constant_*) must say the same.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { loadMHA, readHeader, bitEqual, bitMismatches, repoRoot } from './helpers.mjs';

const mha = await loadMHA();
const ex = mha.exports;
const header = readHeader();

// The header's constants, parsed from its text: the lines of MHA_STATUSES (`STATUS(ENULL, -1,
// "message")`), the enums (`MHA_CAUSAL = 1`; members without a value count on from the last),
// the lines of MHA_TENSORS (`TENSOR(WQ, Wq, CC, PARAM, NONE, DWQ, 0, 1)`: id = line number; the
// lines with check = 1 are the MHA_CHECK_* rows) and the numeric #defines.
const K = {};
const messages = {};
for (const m of header.matchAll(/^\s*STATUS\((\w+),\s*(-?\d+),\s*((?:"[^"]*"[\s\\]*)+)\)/gm)) {
  K[`MHA_${m[1]}`] = Number(m[2]);
  messages[`MHA_${m[1]}`] = [...m[3].matchAll(/"([^"]*)"/g)].map((x) => x[1]).join('');
}
for (const [, body] of header.matchAll(/^enum \{([^}]*)\}/gm)) {
  let next = 0;
  for (const [, name, value] of body.matchAll(/\b(MHA_[A-Z_]+)(?:\s*=\s*(-?\d+))?\s*[,/\n]/g)) {
    next = value === undefined ? next : Number(value);
    K[name] = next++;
  }
}
const tableLines = [...header.matchAll(/^\s*TENSOR\((\w+),\s*(\w+),(?:\s*\w+,){5}\s*([01])\)/gm)];
const tensorTable = tableLines.map((m, id) => ({ id, ID: m[1], name: m[2], check: m[3] === '1' }));
tensorTable.forEach((t) => (K[`MHA_T_${t.ID}`] = t.id));
K.MHA_T_NONE = -1;
K.MHA_T_COUNT = tensorTable.length;
tensorTable.filter((t) => t.check).forEach((t, w) => (K[`MHA_CHECK_${t.ID}`] = w));
K.MHA_CHECK_COUNT = tensorTable.filter((t) => t.check).length;
for (const m of header.matchAll(/^#define (MHA_[A-Z_]+) (-?[\d.e-]+)$/gm)) K[m[1]] = Number(m[2]);
const rowFields = [...header.matchAll(/^\s*FIELD\((\w+)\)/gm)].map((m) => m[1]);
const codes = Object.entries(K).filter(([k]) => k === 'MHA_OK' || /^MHA_E[A-Z]+$/.test(k));

const f64 = (p, n) => new Float64Array(ex.memory.buffer, p, n);
const i32 = (p, n) => new Int32Array(ex.memory.buffer, p, n);
const u32 = (p, n) => new Uint32Array(ex.memory.buffer, p, n);
function cstr(p) {
  const b = new Uint8Array(ex.memory.buffer, p);
  return new TextDecoder().decode(b.subarray(0, b.indexOf(0)));
}
function alloc(bytes) {
  const p = ex.malloc(bytes);
  assert.ok(p > 0, 'malloc failed');
  return p;
}

const tensorId = (name) => {
  const t = tensorTable.find((x) => x.name === name);
  assert.ok(t, name);
  return t.id;
};

test('the header parses: status codes 0, -1 ... -16, tensor ids, flags', (t) => {
  assert.equal(K.MHA_OK, 0);
  assert.equal(K.MHA_ENULL, -1);
  assert.equal(K.MHA_EDIM, -2);
  assert.equal(K.MHA_EDIVISIBLE, -3);
  assert.equal(K.MHA_ENOFORWARD, -6);
  assert.equal(K.MHA_ESEED, -7);
  assert.equal(K.MHA_EFLAGS, -9);
  assert.deepEqual(
    codes.map(([, v]) => v).sort((a, b) => b - a),
    Array.from({ length: 17 }, (_, i) => 0 - i),
  );
  assert.equal(K.MHA_CAUSAL, 1);
  assert.equal(K.MHA_RNG_LEGACY, 1);
  assert.equal(K.MHA_T_WQ, 0);
  assert.equal(K.MHA_T_DX, K.MHA_T_COUNT - 1);
  assert.equal(K.MHA_CHECK_CONCAT, K.MHA_CHECK_COUNT - 1);
  assert.equal(K.MHA_STAGE_NONE, -1);
  assert.deepEqual(rowFields.slice(0, 2), ['size', 'checked']);
  t.diagnostic(`${codes.length} status codes: ${codes.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  t.diagnostic(`${tensorTable.length} tensors, ${K.MHA_CHECK_COUNT} check rows`);
});

test(`the module's constant table (mha_constant_*) holds every constant of the header, with its value`, (t) => {
  const n = ex.mha_constant_count();
  const table = {};
  for (let i = 0; i < n; i++) {
    const name = cstr(ex.mha_constant_name(i));
    assert.ok(!(name in table), `${name} twice`);
    table[name] = ex.mha_constant_value(i);
  }
  assert.equal(ex.mha_constant_name(n), 0);
  assert.equal(ex.mha_constant_name(-1), 0);
  assert.ok(Number.isNaN(ex.mha_constant_value(n)));
  // the same names, the same values: nothing missing on either side
  const fromModule = Object.keys(table).filter((k) => k.startsWith('MHA_'));
  assert.deepEqual(fromModule.sort(), Object.keys(K).sort());
  for (const [name, value] of Object.entries(K)) assert.equal(table[name], value, name);
  // mha_check_row: all doubles, in the header's field order; the ABI's type sizes (wasm32)
  assert.equal(table['sizeof(mha_check_row)'], 8 * rowFields.length);
  rowFields.forEach((f, i) => assert.equal(table[`offsetof(mha_check_row, ${f})`], 8 * i, f));
  assert.deepEqual(
    ['int', 'size_t', 'void *', 'double'].map((type) => table[`sizeof(${type})`]),
    [4, 4, 4, 8],
  );
  assert.equal(Object.keys(table).length, Object.keys(K).length + rowFields.length + 5);
  // and web/mha.js hands out exactly this table
  assert.deepEqual({ ...mha.constants }, table);
  t.diagnostic(`${n} constants, each equal to the header's`);
});

test(`the tensor table: count, names, kinds, stages, gradients, steps, check rows and shapes through the raw exports`, () => {
  assert.equal(ex.mha_tensor_count(), tensorTable.length);
  for (const { id, name, check } of tensorTable) {
    assert.equal(cstr(ex.mha_tensor_name(id)), name);
    assert.equal(
      check,
      tensorTable.filter((x) => x.check).some((x) => x.id === id),
    );
  }
  const line = (name) => header.match(new RegExp(`^\\s*TENSOR\\(\\w+,\\s*${name},(.*)\\)`, 'm'))[1];
  const columns = (name) =>
    line(name)
      .split(',')
      .map((c) => c.trim());
  for (const { id, name } of tensorTable) {
    const [, kind, restart, grad, step] = columns(name);
    assert.equal(ex.mha_tensor_kind(id), K[`MHA_KIND_${kind}`], `kind of ${name}`);
    assert.equal(ex.mha_tensor_stage(id), K[`MHA_STAGE_${restart}`], `stage of ${name}`);
    assert.equal(ex.mha_tensor_grad(id), K[`MHA_T_${grad}`], `grad of ${name}`);
    assert.equal(ex.mha_tensor_step(id), Number(step), `step of ${name}`);
  }
  for (const id of [-1, tensorTable.length, 1000]) {
    assert.equal(ex.mha_tensor_kind(id), -1);
    assert.equal(ex.mha_tensor_stage(id), K.MHA_STAGE_NONE);
    assert.equal(ex.mha_tensor_grad(id), K.MHA_T_NONE);
    assert.equal(ex.mha_tensor_step(id), -1);
  }
  // check rows in table order; out of range: MHA_T_NONE
  const checked = tensorTable.filter((x) => x.check).map((x) => x.id);
  assert.deepEqual(
    checked.map((_, w) => ex.mha_check_tensor(w)),
    checked,
  );
  assert.equal(ex.mha_check_tensor(checked.length), K.MHA_T_NONE);
  assert.equal(ex.mha_check_tensor(-1), K.MHA_T_NONE);
  // lesson 4's gradients: the table's gradients of tensors, by backward step
  const order = [];
  for (let i = 0; ex.mha_grad_order(i) !== K.MHA_T_NONE; i++) order.push(ex.mha_grad_order(i));
  assert.deepEqual(
    order.map((id) => tensorTable[id].name),
    ['dWo', 'dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK', 'dWq', 'dWk', 'dWv', 'dX'],
  );
  assert.equal(ex.mha_grad_order(-1), K.MHA_T_NONE);
  // shapes without a layer: mha_tensor_shape_for, and its errors
  const out = alloc(64);
  const shape = (name, B, T, C, h) => {
    assert.equal(ex.mha_tensor_shape_for(tensorId(name), B, T, C, h, out, out + 4), K.MHA_OK);
    return Array.from(i32(out + 4, i32(out, 1)[0]));
  };
  assert.deepEqual(shape('Wq', 2, 3, 8, 2), [8, 8]);
  assert.deepEqual(shape('dQm', 2, 3, 8, 2), [2, 3, 8]);
  assert.deepEqual(shape('dQ', 2, 3, 8, 2), [2, 2, 3, 4]);
  assert.deepEqual(shape('att', 2, 3, 8, 2), [2, 2, 3, 3]);
  assert.equal(ex.mha_tensor_shape_for(-1, 2, 3, 8, 2, out, out + 4), K.MHA_ETENSOR);
  assert.equal(ex.mha_tensor_shape_for(0, 0, 3, 8, 2, out, out + 4), K.MHA_EDIM);
  assert.equal(ex.mha_tensor_shape_for(0, 2, 3, 8, 3, out, out + 4), K.MHA_EDIVISIBLE);
  assert.equal(ex.mha_tensor_shape_for(0, 2, 3, 8, 2, 0, out + 4), K.MHA_ENULL);
  // the cache a forward needs: as many bytes as the allocation mha_forward makes
  assert.equal(ex.mha_cache_bytes(2, 6, 64, 4) % 8, 0);
  assert.equal(ex.mha_cache_bytes(0, 6, 64, 4), 0);
  assert.equal(ex.mha_cache_bytes(2, 6, 64, 5), 0);
  ex.free(out);
});

// The public functions of c/mha.h in its order: declarations start at column 0 with a lowercase
// type (`int mha_forward(`, `double *mha_params(`), as the Makefile reads them for EXPORTS.
const declared = [...header.matchAll(/^[a-z].*\b(mha_\w+)\(/gm)].map((m) => m[1]);

test("the Makefile's EXPORTS are c/mha.h's functions, read from it, plus malloc and free", () => {
  const out = execFileSync('make', ['-s', '--no-print-directory', 'exports'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  assert.deepEqual(out.trim().split(/\s+/), [...declared, 'malloc', 'free']);
});

test('every public function declared in c/mha.h is a wasm export', (t) => {
  assert.ok(declared.length >= 30, `only ${declared.length} declarations found`);
  assert.equal(new Set(declared).size, declared.length, 'duplicate declarations');
  const missing = declared.filter((f) => typeof ex[f] !== 'function');
  assert.deepEqual(missing, [], `not exported: ${missing.join(', ')}`);
  for (const f of ['malloc', 'free']) assert.equal(typeof ex[f], 'function', f);
  assert.ok(ex.memory instanceof WebAssembly.Memory);
  // and nothing mha_* is exported that the header doesn't declare
  const extra = Object.keys(ex).filter((k) => k.startsWith('mha_') && !declared.includes(k));
  assert.deepEqual(extra, []);
  t.diagnostic(`${declared.length} declared functions, all exported: ${declared.join(' ')}`);
});

test(`mha_strerror: a message per code, "unknown error code" otherwise; mha_version matches the header`, (t) => {
  const msgs = new Map();
  for (const [name, code] of codes) {
    const s = cstr(ex.mha_strerror(code));
    assert.ok(s.length > 0 && s !== 'unknown error code', `${name}: "${s}"`);
    assert.equal(s, messages[name], `${name}: the message of its MHA_STATUSES line`);
    msgs.set(name, s);
    assert.equal(mha.errorMessage(code), s);
  }
  assert.equal(new Set(msgs.values()).size, codes.length, 'two codes share a message');
  for (const code of [1, -17, 12345, -2147483648]) {
    assert.equal(cstr(ex.mha_strerror(code)), 'unknown error code');
  }
  // each message says what its header comment says
  const says = {
    MHA_ENULL: /NULL/,
    MHA_EDIM: /size/i,
    MHA_EDIVISIBLE: /divisible/,
    MHA_EOVERFLOW: /overflow/,
    MHA_ENOMEM: /memory/,
    MHA_ENOFORWARD: /forward/,
    MHA_ESEED: /seed.*2\^32-1/,
    MHA_ERNG: /generator/,
    MHA_EFLAGS: /flags/,
    MHA_EVALUE: /NaN, infinite/,
    MHA_ETENSOR: /tensor/,
    MHA_ELOSS: /loss/,
    MHA_ERANGE: /range/,
    MHA_ENOBACKWARD: /backward/,
    MHA_EDIVERGED: /diverged/,
    MHA_EALIAS: /own buffers/,
  };
  for (const [name, re] of Object.entries(says)) assert.match(msgs.get(name), re, name);
  const [maj, min, pat] = ['MAJOR', 'MINOR', 'PATCH'].map(
    (p) => header.match(new RegExp(`#define MHA_VERSION_${p} (\\d+)`))[1],
  );
  assert.equal(cstr(ex.mha_version()), `${maj}.${min}.${pat}`);
  assert.equal(mha.version, `${maj}.${min}.${pat}`);
  t.diagnostic(`version ${mha.version}; ${codes.length} distinct messages`);
});

test(`mha_create: EDIM for C <= 0 or h <= 0, EDIVISIBLE for 6 % 4, ENULL for a NULL out; *out = NULL on error`, () => {
  const out = alloc(8);
  const cases = [
    [0, 4, K.MHA_EDIM],
    [-1, 4, K.MHA_EDIM],
    [64, 0, K.MHA_EDIM],
    [64, -4, K.MHA_EDIM],
    [6, 4, K.MHA_EDIVISIBLE],
    [64, 5, K.MHA_EDIVISIBLE],
  ];
  for (const [C, h, want] of cases) {
    u32(out, 1)[0] = 0xdeadbee8; // garbage, must be overwritten with NULL
    assert.equal(ex.mha_create(C, h, out), want, `mha_create(${C}, ${h})`);
    assert.equal(u32(out, 1)[0], 0, `mha_create(${C}, ${h}) left *out non-NULL`);
  }
  assert.equal(ex.mha_create(64, 4, 0), K.MHA_ENULL);
  ex.free(out);
});

test(`a raw layer: sizes, num_params == 4*C*C, init errors (ESEED, ERNG, EVALUE) change nothing`, () => {
  const out = alloc(8);
  assert.equal(ex.mha_create(64, 4, out), K.MHA_OK);
  const L = u32(out, 1)[0];
  assert.ok(L !== 0);
  assert.equal(ex.mha_layer_C(L), 64);
  assert.equal(ex.mha_layer_heads(L), 4);
  assert.equal(ex.mha_layer_C(0), 0);
  assert.equal(ex.mha_layer_heads(0), 0);
  assert.equal(ex.mha_num_params(L) >>> 0, 4 * 64 * 64);
  const P = ex.mha_params(L),
    Gp = ex.mha_grads(L);
  assert.ok(P && Gp && P !== Gp);
  assert.equal(ex.mha_params(0), 0);
  assert.equal(ex.mha_grads(0), 0);
  // weights are zero until mha_init_weights
  assert.ok(f64(P, 4 * 64 * 64).every((v) => Object.is(v, 0)));
  // legacy seeds must be < 2^32: seed_hi != 0 -> ESEED (default_rng accepts it)
  assert.equal(ex.mha_init_weights(L, 42, 1, K.MHA_RNG_LEGACY, 0.125), K.MHA_ESEED);
  assert.equal(ex.mha_init_weights(L, 42, 0, 2, 0.125), K.MHA_ERNG);
  assert.equal(ex.mha_init_weights(L, 42, 0, -1, 0.125), K.MHA_ERNG);
  assert.equal(ex.mha_init_weights(L, 42, 0, K.MHA_RNG_DEFAULT, NaN), K.MHA_EVALUE);
  assert.equal(ex.mha_init_weights(L, 42, 0, K.MHA_RNG_DEFAULT, Infinity), K.MHA_EVALUE);
  assert.equal(ex.mha_init_weights(0, 42, 0, K.MHA_RNG_DEFAULT, 0.125), K.MHA_ENULL);
  assert.ok(
    f64(P, 4 * 64 * 64).every((v) => Object.is(v, 0)),
    'a failed init changed the weights',
  );
  // success: the same weights as the JS API's
  assert.equal(ex.mha_init_weights(L, 42, 0, K.MHA_RNG_DEFAULT, 0.125), K.MHA_OK);
  const ref = mha.createLayer({ C: 64, heads: 4, seed: 42, scale: 0.125 });
  assert.ok(bitEqual(f64(ex.mha_params(L), 4 * 64 * 64), ref.params));
  // two-word seeds are fine for default_rng
  assert.equal(ex.mha_init_weights(L, 7, 256, K.MHA_RNG_DEFAULT, 0.5), K.MHA_OK);
  const ref2 = mha.createLayer({ C: 64, heads: 4, seed: 2 ** 40 + 7, scale: 0.5 });
  assert.ok(bitEqual(f64(ex.mha_params(L), 4 * 64 * 64), ref2.params));
  ref.free();
  ref2.free();
  ex.mha_free(L);
  ex.mha_free(0); // NULL is allowed
  ex.free(out);
});

test(`before any forward: ENOFORWARD from backward/forward_from/tensor_shape, mha_tensor returns NULL`, () => {
  const out = alloc(64);
  assert.equal(ex.mha_create(16, 2, out), K.MHA_OK);
  const L = u32(out, 1)[0];
  const dY = alloc(2 * 3 * 16 * 8);
  assert.equal(ex.mha_backward(L, dY, 0), K.MHA_ENOFORWARD);
  assert.equal(ex.mha_backward(L, 0, 0), K.MHA_ENULL);
  assert.equal(ex.mha_backward(0, dY, 0), K.MHA_ENULL);
  assert.equal(ex.mha_forward_from(L, tensorId('headout')), K.MHA_ENOFORWARD);
  const len = out + 8;
  for (const name of ['X', 'Q', 'att', 'Y', 'dQ', 'dX']) {
    u32(len, 1)[0] = 99;
    assert.equal(ex.mha_tensor(L, tensorId(name), len), 0, `${name} before forward`);
    assert.equal(u32(len, 1)[0], 0, `${name}: *len`);
    assert.equal(
      ex.mha_tensor_shape(L, tensorId(name), out + 16, out + 20),
      K.MHA_ENOFORWARD,
      name,
    );
  }
  // the weights exist from the start: (C, C)
  assert.ok(ex.mha_tensor(L, tensorId('Wq'), len) !== 0);
  assert.equal(u32(len, 1)[0], 16 * 16);
  assert.equal(ex.mha_tensor_shape(L, tensorId('Wo'), out + 16, out + 20), K.MHA_OK);
  assert.deepEqual(Array.from(i32(out + 16, 3)), [2, 16, 16]);
  ex.free(dY);
  ex.mha_free(L);
  ex.free(out);
});

test(`mha_forward: EFLAGS, EDIM, ENULL; a raw forward gives the same Y as layer.forward, bit for bit`, (t) => {
  const C = 64,
    B = 2,
    T = 6,
    n = B * T * C;
  const out = alloc(64);
  assert.equal(ex.mha_create(C, 4, out), K.MHA_OK);
  const L = u32(out, 1)[0];
  assert.equal(ex.mha_init_weights(L, 42, 0, K.MHA_RNG_DEFAULT, 0.125), K.MHA_OK);
  const X = mha.standardNormal(n, { seed: 7 });
  const px = alloc(n * 8),
    py = alloc(n * 8);
  f64(px, n).set(X);
  for (const flags of [2, 3, -1, 0x100]) {
    assert.equal(ex.mha_forward(L, px, B, T, flags, py), K.MHA_EFLAGS, `flags ${flags}`);
  }
  assert.equal(ex.mha_forward(L, px, 0, T, 0, py), K.MHA_EDIM);
  assert.equal(ex.mha_forward(L, px, B, -1, 0, py), K.MHA_EDIM);
  assert.equal(ex.mha_forward(L, 0, B, T, 0, py), K.MHA_ENULL);
  assert.equal(ex.mha_forward(0, px, B, T, 0, py), K.MHA_ENULL);
  // still no forward after the failures
  assert.equal(ex.mha_backward(L, px, 0), K.MHA_ENOFORWARD);

  for (const causal of [false, true]) {
    assert.equal(ex.mha_forward(L, px, B, T, causal ? K.MHA_CAUSAL : 0, py), K.MHA_OK);
    const rawY = f64(py, n).slice();
    const layer = mha.createLayer({ C, heads: 4, seed: 42, scale: 0.125 });
    const { Y } = layer.forward(X, { B, T, causal });
    assert.equal(bitMismatches(rawY, Y), 0, `causal ${causal}`);
    // MHA_T_Y holds the same, with its length and shape
    const len = out + 8;
    const pY = ex.mha_tensor(L, tensorId('Y'), len);
    assert.equal(u32(len, 1)[0], n);
    assert.ok(bitEqual(f64(pY, n), Y));
    assert.equal(ex.mha_tensor_shape(L, tensorId('att'), out + 16, out + 20), K.MHA_OK);
    assert.deepEqual(Array.from(i32(out + 16, 5)), [4, B, 4, T, T]);
    // Y may be NULL
    assert.equal(ex.mha_forward(L, px, B, T, causal ? K.MHA_CAUSAL : 0, 0), K.MHA_OK);
    assert.ok(bitEqual(f64(ex.mha_tensor(L, tensorId('Y'), 0), n), Y));
    layer.free();
  }
  // X may be the layer's own MHA_T_X tensor when B*T does not grow the cache (c/mha.h)
  const ownX = ex.mha_tensor(L, tensorId('X'), 0);
  assert.ok(ownX !== 0);
  assert.equal(ex.mha_forward(L, ownX, B, T, 0, py), K.MHA_OK);
  assert.ok(bitEqual(f64(ownX, n), X), 'the cached X changed');
  const plain = mha.createLayer({ C, heads: 4, seed: 42, scale: 0.125 });
  assert.ok(bitEqual(f64(py, n), plain.forward(X, { B, T }).Y), 'forward from the own X tensor');
  plain.free();
  // gradients of intermediates before any backward: NULL
  assert.equal(ex.mha_tensor(L, tensorId('dQ'), 0), 0);
  // backward with dX == NULL works; dX must then be read through mha_tensor
  const pdy = alloc(n * 8);
  f64(pdy, n).set(mha.standardNormal(n, { seed: 1 }));
  assert.equal(ex.mha_backward(L, pdy, 0), K.MHA_OK);
  assert.ok(ex.mha_tensor(L, tensorId('dQ'), 0) !== 0);
  t.diagnostic(`raw mha_forward == layer.forward for ${n} outputs (plain and causal)`);
  for (const p of [px, py, pdy, out]) ex.free(p);
  ex.mha_free(L);
});

test('mha_tensor: NULL and *len = 0 for unknown ids; names and check names end with NULL', () => {
  const out = alloc(64);
  assert.equal(ex.mha_create(8, 2, out), K.MHA_OK);
  const L = u32(out, 1)[0];
  const count = mha.tensorNames.length;
  assert.equal(count, tensorTable.length);
  for (const id of [count, count + 1, -1, 1000, -2147483648]) {
    u32(out + 8, 1)[0] = 77;
    assert.equal(ex.mha_tensor(L, id, out + 8), 0, `id ${id}`);
    assert.equal(u32(out + 8, 1)[0], 0, `id ${id}: *len`);
    assert.equal(ex.mha_tensor_name(id), 0);
    assert.equal(
      ex.mha_tensor_shape(L, id, out + 16, out + 20),
      K.MHA_ETENSOR,
      `shape of id ${id}`,
    );
  }
  assert.equal(ex.mha_tensor(0, 0, out + 8), 0);
  assert.equal(ex.mha_tensor_shape(L, 0, 0, out + 20), K.MHA_ENULL);
  // forward_from accepts only the seven documented stages
  const stages = ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat'];
  const px = alloc(2 * 8 * 8);
  f64(px, 16).set(mha.standardNormal(16, { seed: 3 }));
  assert.equal(ex.mha_forward(L, px, 2, 1, 0, 0), K.MHA_OK);
  for (const [id, name] of mha.tensorNames.entries()) {
    const want = stages.includes(name) ? K.MHA_OK : K.MHA_ETENSOR;
    assert.equal(ex.mha_forward_from(L, id), want, `forward_from(${name})`);
  }
  assert.equal(ex.mha_forward_from(L, -1), K.MHA_ETENSOR);
  // check names: 12, then NULL
  const checks = [];
  for (let w = 0; ex.mha_check_name(w); w++) checks.push(cstr(ex.mha_check_name(w)));
  assert.deepEqual(checks, [
    'Wq',
    'Wk',
    'Wv',
    'Wo',
    'X',
    'Q',
    'K',
    'V',
    'scores',
    'att',
    'headout',
    'concat',
  ]);
  assert.equal(ex.mha_check_name(-1), 0);
  ex.free(px);
  ex.free(out);
  ex.mha_free(L);
});

test('loss, optimiser and rng entry points: ENULL, EDIM, EVALUE, ERNG, ESEED', () => {
  const out = alloc(64);
  const a = alloc(32),
    b = alloc(32);
  f64(a, 4).set([1, 2, 3, 4]);
  f64(b, 4).set([1, 1, 1, 1]);
  assert.equal(ex.mha_mse_loss(a, b, 0, out, 0), K.MHA_EDIM);
  assert.equal(ex.mha_mse_loss(0, b, 4, out, 0), K.MHA_ENULL);
  assert.equal(ex.mha_mse_loss(a, b, 4, 0, 0), K.MHA_ENULL);
  assert.equal(ex.mha_mse_loss(a, b, 4, out, 0), K.MHA_OK);
  // mean of 0, 1, 4, 9 = 14 / 4
  assert.equal(f64(out, 1)[0], 3.5);
  assert.equal(ex.mha_rng_create(2, 1, 0, out), K.MHA_ERNG);
  assert.equal(ex.mha_rng_create(K.MHA_RNG_LEGACY, 1, 1, out), K.MHA_ESEED);
  assert.equal(ex.mha_rng_create(K.MHA_RNG_DEFAULT, 1, 0, 0), K.MHA_ENULL);
  assert.equal(ex.mha_rng_create(K.MHA_RNG_DEFAULT, 42, 0, out), K.MHA_OK);
  const r = u32(out, 1)[0];
  assert.equal(ex.mha_rng_normal(r, NaN, 1, a, 2), K.MHA_EVALUE);
  assert.equal(ex.mha_rng_normal(r, 0, Infinity, a, 2), K.MHA_EVALUE);
  assert.equal(ex.mha_rng_standard_normal(r, 0, 2), K.MHA_ENULL);
  assert.equal(ex.mha_rng_standard_normal(0, a, 2), K.MHA_ENULL);
  // the failures above did not advance the stream: first value of default_rng(42).standard_normal
  assert.equal(ex.mha_rng_standard_normal(r, a, 1), K.MHA_OK);
  assert.equal(f64(a, 1)[0], mha.standardNormal(1, { seed: 42 })[0]);
  ex.mha_rng_free(r);
  ex.mha_rng_free(0);
  assert.equal(ex.mha_create(8, 2, out), K.MHA_OK);
  const L = u32(out, 1)[0];
  assert.equal(ex.mha_sgd_step(L, NaN), K.MHA_EVALUE);
  assert.equal(ex.mha_sgd_step(0, 0.1), K.MHA_ENULL);
  assert.equal(ex.mha_zero_grad(0), K.MHA_ENULL);
  const px = alloc(16 * 8);
  f64(px, 16).set(mha.standardNormal(16, { seed: 5 })); // finite X / target / G
  assert.equal(ex.mha_train(L, px, px, 2, 1, 0, 0.1, -1, 0), K.MHA_EDIM);
  assert.equal(ex.mha_train(L, px, px, 2, 1, 0, NaN, 1, 0), K.MHA_EVALUE);
  assert.equal(ex.mha_gradcheck(L, px, 2, 1, 0, 7, px, 1e-3, 0, out), K.MHA_ELOSS);
  assert.equal(ex.mha_gradcheck(L, px, 2, 1, 0, K.MHA_LOSS_DOT, px, 0, 0, out), K.MHA_EVALUE);
  assert.equal(ex.mha_gradcheck(L, px, 2, 1, 0, K.MHA_LOSS_DOT, px, 1e-3, -1, out), K.MHA_EDIM);
  assert.equal(ex.mha_split_heads(px, 2, 1, 6, 4, a), K.MHA_EDIVISIBLE);
  assert.equal(ex.mha_merge_heads(px, 0, 1, 8, 2, a), K.MHA_EDIM);
  ex.mha_free(L);
  for (const p of [a, b, px, out]) ex.free(p);
});

test(`inputs that point into the layer itself: X is copied first, target/aux are refused (EALIAS)`, () => {
  // The fuzzer found these: a forward whose X is the layer's own cached X, with a B,T that grows
  // the cache, read freed memory; and a target inside the cache would be rewritten by training.
  const layer = mha.createLayer({ C: 8, heads: 2, seed: 3 });
  const X = mha.standardNormal(2 * 3 * 8, { seed: 4 });
  layer.forward(X, { B: 2, T: 3 });
  const out = ex.malloc(16);
  assert.equal(ex.mha_create(8, 2, out), 0);
  const raw = new Int32Array(ex.memory.buffer, out, 1)[0];
  assert.equal(ex.mha_init_weights(raw, 3, 0, 0, 0.35), 0);
  const px = ex.malloc(48 * 8);
  new Float64Array(ex.memory.buffer, px, 48).set(X);
  assert.equal(ex.mha_forward(raw, px, 2, 3, 0, 0), 0);
  const y1 = new Float64Array(ex.memory.buffer, ex.mha_tensor(raw, K.MHA_T_Y, 0), 48).slice();
  // same B*T, different split: the attention part of the cache grows, so the block moves
  const ownX = ex.mha_tensor(raw, K.MHA_T_X, 0);
  assert.equal(ex.mha_forward(raw, ownX, 1, 6, 0, 0), 0);
  const xNow = new Float64Array(ex.memory.buffer, ex.mha_tensor(raw, K.MHA_T_X, 0), 48);
  assert.deepEqual(Array.from(xNow), Array.from(X), 'X survived the move');
  // back to (2,3): same Y bits as the first forward
  assert.equal(ex.mha_forward(raw, ex.mha_tensor(raw, K.MHA_T_X, 0), 2, 3, 0, 0), 0);
  assert.deepEqual(
    new Float64Array(ex.memory.buffer, ex.mha_tensor(raw, K.MHA_T_Y, 0), 48).slice(),
    y1,
  );
  const ownY = ex.mha_tensor(raw, K.MHA_T_Y, 0);
  assert.equal(ex.mha_train(raw, px, ownY, 2, 3, 0, 0.1, 1, 0), K.MHA_EALIAS);
  assert.equal(ex.mha_gradcheck_prepare(raw, px, 2, 3, 0, 1, ownY), K.MHA_EALIAS);
  ex.mha_free(raw);
  ex.free(px);
  ex.free(out);
  layer.free();
});
