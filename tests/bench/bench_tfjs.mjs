// bench_tfjs.mjs - the TensorFlow.js peer of the mha-wasm benchmark (tests/bench/bench.mjs starts
// it in its own Node process, so tfjs shares neither heap nor JIT with mha-wasm; not a test).
//
// The same layer in float32 with @tensorflow/tfjs-core and @tensorflow/tfjs-backend-wasm (SIMD
// binary, no threads): X @ Wq, reshape/transpose split, Q @ K^T / sqrt(hs), tf.softmax, @ V, merge,
// @ Wo; MSE loss; gradients with tf.variableGrads; an SGD update W.assign(W - lr * dW). One train
// step runs inside tf.tidy and ends by awaiting the loss's data, so the time includes execution.
// X is a variable too (never updated), so tfjs also computes dX, as mha-wasm and NumPy do.
//
// tfjs-core's Node bundle registers no gradients, and its ES-module build (which does, through
// dist/register_all_gradients.js) cannot be imported by Node directly. bench.mjs therefore bundles
// tfjs-core + its gradients + the wasm backend with esbuild into one CommonJS file (one copy of
// tfjs-core, as a page would bundle it) and passes its path as argv[2].
//
// Protocol (one command per line on stdin, one reply per line on stdout, prefixed with "@@ "):
//   info                              -> versions, backend, wasm binary, threads
//   load NAME B T C H LR DIR          -> reads DIR/NAME.{X,target,W}.f64 (raw float64 -> float32)
//   run NAME MIN_SECONDS MIN_REPS [CHECK]
//                                     -> resets the weights, 1 untimed step (its loss is the
//                                        "first loss"), then timed steps until both minimums are
//                                        met: {"first_loss", "last_loss", "times": [s, ...],
//                                        "cpu" (process CPU seconds over the timed steps), ...}
//                                        CHECK = 1 adds "first_loss_f64": the same loss summed in
//                                        float64 from tfjs's float32 Y (an extra untimed forward),
//                                        since tfjs's own Mean sums the B*T*C float32 squares
//                                        one after the other in float32
//   quit

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const bundle = process.argv[2];
if (!bundle) throw new Error('usage: node bench_tfjs.mjs BUILD/tfjs.cjs');
const tf = require(path.resolve(bundle));

// The backend's .wasm files, loaded from the installed package (file paths; Node reads them with
// fs).
const wasmDir = path.join(
  path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')),
  'dist',
);
tf.env().set('WASM_HAS_SIMD_SUPPORT', true); // the SIMD binary
// no threads (tfjs never uses them in Node anyway)
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
tf.wasm.setWasmPaths(wasmDir + path.sep);
if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend failed to initialise');
await tf.ready();
tf.enableProdMode();

const cases = new Map();

function readF64(dir, name, what, n) {
  const buf = fs.readFileSync(path.join(dir, `${name}.${what}.f64`));
  if (buf.byteLength !== n * 8) {
    throw new Error(`${name}.${what}.f64: ${buf.byteLength / 8} doubles, expected ${n}`);
  }
  return new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

// one size's case, { name, B, T, C, h, lr, dir }: its inputs are read from dir
function load({ name, B, T, C, h, lr, dir }) {
  if (cases.has(name)) throw new Error(`case ${name} already loaded`);
  const n = B * T * C,
    cc = C * C;
  const Wflat = Float32Array.from(readF64(dir, name, 'W', 4 * cc));
  const W0 = [0, 1, 2, 3].map((i) => Wflat.slice(i * cc, (i + 1) * cc));
  const c = {
    B,
    T,
    C,
    h,
    hs: C / h,
    lr,
    W0,
    X: tf.variable(
      tf.tensor2d(Float32Array.from(readF64(dir, name, 'X', n)), [B * T, C]),
      true,
      `${name}_X`,
    ),
    target64: readF64(dir, name, 'target', n),
    W: ['Wq', 'Wk', 'Wv', 'Wo'].map((w, i) =>
      tf.variable(tf.tensor2d(W0[i], [C, C]), true, `${name}_${w}`),
    ),
  };
  c.target = tf.keep(tf.tensor2d(Float32Array.from(c.target64), [B * T, C]));
  c.varList = [...c.W, c.X];
  cases.set(name, c);
}

// The layer's output Y (B*T, C), and the MSE loss, as functions of the variables
function layerFns(c) {
  const { B, T, C, h, hs } = c;
  const [Wq, Wk, Wv, Wo] = c.W;
  const split = (Z) => tf.transpose(tf.reshape(Z, [B, T, h, hs]), [0, 2, 1, 3]); // (B,h,T,hs)
  const merge = (Z) => tf.reshape(tf.transpose(Z, [0, 2, 1, 3]), [B * T, C]); // (B*T,C)
  const forward = () => {
    const Q = split(tf.matMul(c.X, Wq));
    const K = split(tf.matMul(c.X, Wk));
    const V = split(tf.matMul(c.X, Wv));
    const scores = tf.div(tf.matMul(Q, K, false, true), Math.sqrt(hs)); // (B,h,T,T)
    const att = tf.softmax(scores); // last axis
    const headout = tf.matMul(att, V);
    return tf.matMul(merge(headout), Wo);
  };
  return { forward, loss: () => tf.mean(tf.squaredDifference(forward(), c.target)) };
}

// mean((Y - target)^2) in float64 from the float32 Y of the current weights
async function lossF64(c) {
  const Yt = tf.tidy(c.forward);
  const Y = await Yt.data();
  Yt.dispose();
  let s = 0;
  for (let i = 0; i < Y.length; i++) s += (Y[i] - c.target64[i]) ** 2;
  return s / Y.length;
}

// One train step; resolves to the loss (before the update)
async function step(c) {
  const lossTensor = tf.tidy(() => {
    const { value, grads } = tf.variableGrads(c.loss, c.varList);
    for (const W of c.W) W.assign(tf.sub(W, tf.mul(grads[W.name], c.lr)));
    return value;
  });
  const loss = (await lossTensor.data())[0];
  lossTensor.dispose();
  return loss;
}

async function run(name, minTime, minReps, check) {
  const c = cases.get(name);
  if (!c) throw new Error(`unknown case ${name}`);
  if (!c.loss) Object.assign(c, layerFns(c));
  tf.tidy(() => c.W.forEach((W, i) => W.assign(tf.tensor2d(c.W0[i], [c.C, c.C]))));
  const firstF64 = check ? await lossF64(c) : undefined;
  const first = await step(c); // warm-up
  const tensors0 = tf.memory().numTensors;
  const times = [];
  let total = 0,
    loss;
  const cpu0 = process.cpuUsage();
  while (total < minTime || times.length < minReps) {
    const t0 = performance.now();
    loss = await step(c);
    const dt = (performance.now() - t0) / 1000;
    times.push(dt);
    total += dt;
  }
  const cpu = process.cpuUsage(cpu0);
  if (!Number.isFinite(loss)) throw new Error(`loss is ${loss} after ${times.length + 1} steps`);
  return {
    first_loss: first,
    first_loss_f64: firstF64,
    last_loss: loss,
    times,
    cpu: (cpu.user + cpu.system) / 1e6,
    tensors_before: tensors0,
    tensors_after: tf.memory().numTensors,
    wasm_memory: tf.backend().wasm.HEAPU8.buffer.byteLength,
  };
}

// the backend's .wasm binary for these flags
function wasmBinary(simd, threads) {
  if (simd && threads) return 'tfjs-backend-wasm-threaded-simd.wasm';
  if (simd) return 'tfjs-backend-wasm-simd.wasm';
  return 'tfjs-backend-wasm.wasm';
}

function info() {
  const simd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT');
  const threads = tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT');
  return {
    tfjs_core: tf.version_core,
    tfjs_backend_wasm: tf.wasm.version_wasm,
    backend: tf.getBackend(),
    binary: wasmBinary(simd, threads),
    simd,
    threads,
    xnnpack_threads: tf.wasm.getThreadsCount(),
    prod: tf.env().getBool('PROD'),
  };
}

const reply = (obj) => process.stdout.write(`@@ ${JSON.stringify(obj)}\n`);
const rl = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of rl) {
  const cmd = line.trim().split(/\s+/);
  if (!cmd[0]) continue;
  if (cmd[0] === 'quit') break;
  try {
    if (cmd[0] === 'info') reply(info());
    else if (cmd[0] === 'load') {
      const [name, B, T, C, h, lr, dir] = cmd.slice(1);
      const nums = { B: Number(B), T: Number(T), C: Number(C), h: Number(h), lr: Number(lr) };
      load({ name, ...nums, dir });
      reply({ ok: true });
    } else if (cmd[0] === 'run') {
      reply(await run(cmd[1], Number(cmd[2]), Number(cmd[3]), cmd[4] === '1'));
    } else throw new Error(`unknown command ${cmd[0]}`);
  } catch (e) {
    reply({ error: String(e?.message ?? e) });
  }
}
rl.close();
