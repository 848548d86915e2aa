// ticks.js - "nice" tick values for the loss chart's axes.

/** The nice step (1, 2, 2.5 or 5 x 10^k, else 10^(k+1)) at or above `raw`. */
function niceStep(raw) {
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return ([1, 2, 2.5, 5].find((m) => f <= m) ?? 10) * mag;
}

/** An empty range [v, v] widened by 10 % of |v| (or 1) each way. */
function widen(lo, hi) {
  if (hi > lo) return [lo, hi];
  const d = Math.abs(lo) * 0.1 || 1;
  return [lo - d, hi + d];
}

/** "Nice" ticks (1, 2, 5 x 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(lo0, hi0, count = 5) {
  const [lo, hi] = widen(lo0, hi0);
  const step = niceStep((hi - lo) / Math.max(1, count));
  const start = Math.floor(lo / step + 1e-9) * step;
  const end = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = start; v <= end + step * 1e-6; v += step) ticks.push(Number(v.toPrecision(12)));
  return { ticks, lo: start, hi: end, step };
}
