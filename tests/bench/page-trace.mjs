// page-trace.mjs - the page's main-thread tasks, read from a Chromium trace (bench_page.mjs).
//
//   await browser.startTracing(page, { categories: traceCategories({ profile }) });
//   ... load, interact ...
//   const trace = readTrace(await browser.stopTracing());
//   const t = mainThread(trace, 'mha:start', startTimeOfThatMarkInThePage);
//   t.tasks       [{ start, dur, cpu }] every top-level task of the page's main thread, in ms
//                 after navigation (performance.timeOrigin), in order; cpu: the thread's own time
//                 in it (less than dur when other processes took the core meanwhile)
//   t.toTrace(ms) the trace time (µs) of a page time (ms)
//   hotFunctions(trace, t, task)   with { profile: true }: the functions V8's sampling profiler
//                 saw in that task, by self time, e.g. [{ name: 'paintCells', ms: 40, stack }]
//   taskParts(trace, t, task)      with { profile: true }: what the browser did in the task, by
//                 time: [{ name: 'Layout', ms: 120 }, { name: 'FunctionCall', ms: 30 } ...]
//
// A task is a top-level ThreadControllerImpl::RunTask or BlinkScheduler_PerformMicrotaskCheckpoint
// on the thread that made the anchor mark (the page's main thread; marks are made there); the
// trace's clock is the monotonic one (µs), so the anchor mark ties it to the page's clock.

// The main thread's top-level work: tasks, and the microtask checkpoints Blink runs outside a
// task (a resolved wasm compilation continues an async function there).
const TASK_EVENTS = new Set([
  'ThreadControllerImpl::RunTask',
  'BlinkScheduler_PerformMicrotaskCheckpoint',
]);

/** The trace categories: tasks, the page's marks, and (profile) V8's CPU samples. */
export function traceCategories({ profile = false } = {}) {
  const cats = ['toplevel', 'blink.user_timing', '__metadata'];
  if (profile) cats.push('disabled-by-default-v8.cpu_profiler', 'devtools.timeline', 'v8');
  return cats;
}

/** The events of a trace buffer (Playwright's browser.stopTracing()). */
export function readTrace(buffer) {
  const json = JSON.parse(buffer.toString());
  return Array.isArray(json) ? json : json.traceEvents;
}

/** Keep the outermost of nested tasks (a nested run loop runs tasks inside a task). */
function topLevel(tasks) {
  const out = [];
  let end = -Infinity;
  for (const t of tasks) {
    if (t.ts >= end) {
      out.push(t);
      end = t.ts + t.dur;
    }
  }
  return out;
}

/**
 * The page's main thread: the thread and process that made the mark `anchor`, whose startTime in
 * the page was anchorMs. Returns { pid, tid, origin (µs), tasks, toTrace } (see the header).
 */
export function mainThread(events, anchor, anchorMs) {
  const mark = events.find((e) => e.name === anchor && e.cat.includes('user_timing'));
  if (!mark) throw new Error(`page-trace: the mark ${anchor} is not in the trace`);
  const { pid, tid } = mark;
  const origin = mark.ts - anchorMs * 1000;
  const raw = events
    .filter((e) => TASK_EVENTS.has(e.name) && e.ph === 'X' && e.pid === pid && e.tid === tid)
    .sort((a, b) => a.ts - b.ts);
  const tasks = topLevel(raw).map((e) => ({
    start: (e.ts - origin) / 1000,
    dur: (e.dur ?? 0) / 1000,
    cpu: (e.tdur ?? e.dur ?? 0) / 1000, // the thread's own time: without preemption
  }));
  return { pid, tid, origin, tasks, toTrace: (ms) => origin + ms * 1000 };
}

/**
 * The tasks that overlap [from, to) (ms after navigation): the longest (wall time and the
 * thread's own time) and how many took over `limit` ms.
 */
export function taskStats(tasks, from, to, limit = 50) {
  const inside = tasks.filter((t) => t.start < to && t.start + t.dur > from);
  const longest = inside.reduce((a, t) => (t.dur > (a?.dur ?? -1) ? t : a), null);
  return {
    count: inside.length,
    longest: longest?.dur ?? 0,
    longestAt: longest?.start ?? NaN,
    longTasks: inside.filter((t) => t.dur > limit).length,
    longTask: longest,
    longestCpu: Math.max(0, ...inside.map((t) => t.cpu)),
    longCpuTasks: inside.filter((t) => t.cpu > limit).length,
  };
}

/** V8's CPU profile of one process from the trace: nodes by id, samples with their times (µs). */
function cpuProfile(events, pid) {
  const nodes = new Map();
  const samples = [];
  const clocks = new Map(); // profile id -> time of its last sample
  for (const e of events) {
    if (e.pid !== pid || !e.cat?.includes('cpu_profiler')) continue;
    const d = e.args?.data;
    if (e.name === 'Profile') clocks.set(e.id, d.startTime);
    if (e.name !== 'ProfileChunk' || !clocks.has(e.id)) continue;
    for (const n of d.cpuProfile?.nodes ?? []) nodes.set(`${e.id}:${n.id}`, n);
    const ids = d.cpuProfile?.samples ?? [];
    const deltas = d.timeDeltas ?? [];
    let t = clocks.get(e.id);
    for (let i = 0; i < ids.length; i++) {
      t += deltas[i] ?? 0;
      samples.push({ node: `${e.id}:${ids[i]}`, ts: t });
    }
    clocks.set(e.id, t);
  }
  samples.sort((a, b) => a.ts - b.ts);
  return { nodes, samples };
}

/** A profile node's name: function (file:line), or V8's own (program), (garbage collector). */
function nodeName(node) {
  const f = node?.callFrame ?? {};
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  const file = f.url.split('/').pop();
  return `${name} (${file}:${(f.lineNumber ?? 0) + 1})`;
}

/** The callers of a profile node, innermost first (at most `depth`), as names. */
function stackOf(nodes, key, depth) {
  const prefix = key.slice(0, key.indexOf(':') + 1);
  const out = [];
  for (let n = nodes.get(key); n && out.length < depth; n = nodes.get(`${prefix}${n.parent}`)) {
    const name = nodeName(n);
    if (name !== '(root)') out.push(name);
  }
  return out;
}

/**
 * The functions the sampling profiler saw during `task` ({ start, dur } in page ms) of thread t,
 * by self time: [{ name, ms, stack }] (stack: the callers of its most sampled call site), the n
 * largest; the trace must have been recorded with profile.
 */
export function hotFunctions(events, t, task, n = 6) {
  const { nodes, samples } = cpuProfile(events, t.pid);
  const from = t.toTrace(task.start);
  const to = t.toTrace(task.start + task.dur);
  const self = new Map(); // name -> { ms, sites: Map(node key -> ms) }
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    if (s.ts < from || s.ts >= to) continue;
    const ms = (Math.min(samples[i + 1]?.ts ?? to, to) - s.ts) / 1000;
    const name = nodeName(nodes.get(s.node));
    const entry = self.get(name) ?? { ms: 0, sites: new Map() };
    entry.ms += ms;
    entry.sites.set(s.node, (entry.sites.get(s.node) ?? 0) + ms);
    self.set(name, entry);
  }
  return [...self]
    .map(([name, { ms, sites }]) => {
      const site = [...sites].sort((a, b) => b[1] - a[1])[0][0];
      return { name, ms, stack: stackOf(nodes, site, 8).slice(1) };
    })
    .sort((a, b) => b.ms - a.ms)
    .slice(0, n);
}

/**
 * What the browser did in `task` of thread t (trace recorded with profile): the outermost
 * devtools.timeline events inside it (FunctionCall, Layout, UpdateLayoutTree (style), Paint,
 * EvaluateScript, ...) with their time summed by name, largest first: [{ name, ms }].
 */
export function taskParts(events, t, task) {
  const from = t.toTrace(task.start);
  const to = t.toTrace(task.start + task.dur);
  const inside = events
    .filter(
      (e) =>
        e.pid === t.pid &&
        e.tid === t.tid &&
        e.ph === 'X' &&
        e.cat.includes('devtools.timeline') &&
        e.ts >= from &&
        e.ts < to,
    )
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const sums = new Map();
  let end = -Infinity;
  for (const e of inside) {
    if (e.ts < end) continue; // nested in the last outermost event
    end = e.ts + (e.dur ?? 0);
    sums.set(e.name, (sums.get(e.name) ?? 0) + (e.dur ?? 0) / 1000);
  }
  return [...sums].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
}

/** Thread names from the trace's metadata: Map('pid:tid' -> name). */
function threadNames(events) {
  const names = new Map();
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args?.name);
  }
  return names;
}

/**
 * Where the machine's CPU went between from and to (ms after navigation of thread t's page): the
 * threads' own time in their top-level tasks, clipped to the window, summed as { main (the page's
 * main thread), workers (its dedicated workers: the compute engine), other (every other thread
 * of every Chromium process: browser, GPU, compositor, network, ...), total } in ms. With
 * `cores`, total / cores is the least wall time that work could take.
 */
export function cpuBudget(events, t, from, to) {
  const names = threadNames(events);
  const lo = t.toTrace(from);
  const hi = t.toTrace(to);
  const byThread = new Map();
  for (const e of events) {
    if (!TASK_EVENTS.has(e.name) || e.ph !== 'X') continue;
    const key = `${e.pid}:${e.tid}`;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  const sums = { main: 0, workers: 0, other: 0, total: 0 };
  for (const [key, list] of byThread) {
    list.sort((a, b) => a.ts - b.ts);
    let ms = 0;
    for (const e of topLevel(list)) {
      const dur = e.dur ?? 0;
      const inside = Math.min(e.ts + dur, hi) - Math.max(e.ts, lo);
      if (inside <= 0 || dur <= 0) continue;
      ms += ((e.tdur ?? dur) * (inside / dur)) / 1000; // own time, pro rata inside the window
    }
    const name = names.get(key) ?? '';
    let part = 'other';
    if (key === `${t.pid}:${t.tid}`) part = 'main';
    else if (Number(key.split(':')[0]) === t.pid && /worker/i.test(name)) part = 'workers';
    sums[part] += ms;
    sums.total += ms;
  }
  return sums;
}
