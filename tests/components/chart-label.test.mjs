// The loss chart's end label (web/components/chart/line.js labelBaseline): beside the last point,
// above it unless earlier points lie where the label would be (a falling curve), never on them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelBaseline } from '../../web/components/chart/line.js';

// a 400 × 200 plot: x from step 0 to n - 1, y from a tick below the values to one above (the
// geometry draw.js makes with its nice ticks)
function geometry(values) {
  const [px0, px1, py0, py1] = [40, 440, 180, 20];
  const span = Math.max(...values) - Math.min(...values) || 1;
  const lo = Math.min(...values) - 0.1 * span;
  const hi = Math.max(...values) + 0.1 * span;
  const n = values.length;
  return {
    px0,
    px1,
    py0,
    py1,
    sx: (i) => px0 + (i / (n - 1)) * (px1 - px0),
    sy: (v) => py0 - ((v - lo) / (hi - lo || 1)) * (py0 - py1),
  };
}

/** How many points other than the last lie in the label's box (as labelBaseline measures it). */
function pointsUnder(values, g, base, text) {
  const li = values.length - 1;
  const lx = g.sx(li);
  return values.filter((v, i) => {
    const [x, y] = [g.sx(i), g.sy(v)];
    return i !== li && x >= lx - text.length * 7.44 - 5 && y >= base - 17 && y <= base + 5;
  }).length;
}

test('a falling loss: the label goes below the last point, clear of the earlier ones', () => {
  // 21 losses falling steadily, 1.3 to 0.3: 20 px apart, each 6.7 px above the next
  const values = Array.from({ length: 21 }, (_, k) => 1.3 - 0.05 * k);
  const g = geometry(values);
  const base = labelBaseline(values, g, 0, '0.30000');
  const ly = g.sy(values.at(-1));
  assert.ok(base > ly, `below the point: ${base} vs ${ly}`);
  // above, the earlier points would have been under it
  assert.ok(pointsUnder(values, g, ly - 11, '0.30000') > 0);
  assert.equal(pointsUnder(values, g, base, '0.30000'), 0);
  assert.ok(base <= g.py0 + 4, 'above the x ticks');
});

test('a falling curve that levels off: wherever the label goes, no point is under it', () => {
  const values = [1.3, 1.1, 0.98, 0.93, 0.9, 0.89, 0.885, 0.8849, 0.8847, 0.8846, 0.8845];
  const g = geometry(values);
  assert.equal(pointsUnder(values, g, labelBaseline(values, g, 0, '0.8845'), '0.8845'), 0);
});

test('a rising or level curve: the label stays above its point', () => {
  for (const values of [
    [0.1, 0.2, 0.4, 0.7, 1.1],
    [1, 1, 1, 1, 1],
  ]) {
    const g = geometry(values);
    const base = labelBaseline(values, g, 0, '1.1');
    const ly = g.sy(values.at(-1));
    assert.ok(base < ly, `${values}: above (${base} vs ${ly})`);
    assert.ok(base >= g.py1 + 12, 'inside the plot');
    assert.equal(pointsUnder(values, g, base, '1.1'), 0);
  }
});

test("lesson 5's 10 steps at 1280 px: the label leaves the point of step 9 free", () => {
  // the chart's plot (draw.js: 640 wide, margins 64 / 24 / 18 / 44) and its ticks 0.8 ... 1.4
  const values = [1.3006, 1.212, 1.144, 1.091, 1.048, 1.012, 0.981, 0.953, 0.928, 0.905, 0.88445];
  const [px0, px1, py0, py1] = [64, 616, 206, 18];
  const g = {
    px0,
    px1,
    py0,
    py1,
    sx: (i) => px0 + (i / 10) * (px1 - px0),
    sy: (v) => py0 - ((v - 0.8) / 0.6) * (py0 - py1),
  };
  const base = labelBaseline(values, g, 0, '0.88445');
  assert.ok(base > g.sy(0.88445), 'below its point');
  assert.equal(pointsUnder(values, g, base, '0.88445'), 0);
});
