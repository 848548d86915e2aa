// chart.js - a small SVG line chart of a training loss, with its values in a table below.

import { svgEl } from './dom.js';
import { formatTick, uniqueId } from './scales.js';
import { FONT_STACK } from './export.js';

const LINE = '#3b528b'; // viridis blue
const POINT = '#21918c'; // viridis teal
const INK = '#111827';
const GRID = '#e5e7eb';
const AXIS = '#6b7280';

function r2(v) {
  return Math.round(v * 100) / 100;
}

/** "Nice" ticks (1, 2, 5 x 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) {
    const d = Math.abs(lo) * 0.1 || 1;
    lo -= d;
    hi += d;
  }
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
  const start = Math.floor(lo / step + 1e-9) * step;
  const end = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = start; v <= end + step * 1e-6; v += step) ticks.push(Number(v.toPrecision(12)));
  return { ticks, lo: start, hi: end, step };
}

const W_DEFAULT = 560;
const H = 250;
const M = { left: 64, right: 24, top: 18, bottom: 44 };

/**
 * lossChart({ losses, title = 'MSE loss', xLabel = 'step', yLabel = 'loss' }) -> { element, update(losses) }.
 * losses[i] is the loss at step i (step 0 = before any update). Additions: xStart (the step of
 * losses[0], default 0), digits (decimals in the table, default 6).
 */
export function lossChart({
  losses = [],
  title = 'MSE loss',
  xLabel = 'step',
  yLabel = 'loss',
  xStart = 0,
  digits = 6,
} = {}) {
  const figure = document.createElement('figure');
  figure.className = 'chart loss-chart';
  const capId = uniqueId('chart-cap');
  figure.setAttribute('aria-labelledby', capId);
  const caption = document.createElement('figcaption');
  caption.className = 'chart-caption';
  caption.id = capId;
  const capTitle = document.createElement('span');
  capTitle.className = 'chart-title';
  capTitle.textContent = title;
  const capSummary = document.createElement('span');
  capSummary.className = 'chart-summary';
  caption.append(capTitle, capSummary);

  const plot = document.createElement('div');
  plot.className = 'chart-plot';
  const sizer = document.createElement('div');
  sizer.className = 'chart-sizer';
  sizer.setAttribute('aria-hidden', 'true');
  // the chart is laid out for the width it gets (text stays at its size on a phone)
  let W = W_DEFAULT;
  const svg = svgEl('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    class: 'chart-svg',
    role: 'img',
    'font-family': FONT_STACK,
  });
  plot.append(svg);

  const details = document.createElement('details');
  details.className = 'chart-values';
  const summary = document.createElement('summary');
  details.append(summary);
  const tableWrap = document.createElement('div');
  tableWrap.className = 'table-wrap';
  details.append(tableWrap);

  const readout = document.createElement('p');
  readout.className = 'chart-readout';
  readout.setAttribute('aria-hidden', 'true');

  figure.append(caption, sizer, plot, readout, details);

  let values = [];
  let geom = null;
  let guide = null;

  function draw() {
    svg.replaceChildren();
    const n = values.length;
    const px0 = M.left;
    const px1 = W - M.right;
    const py0 = H - M.bottom;
    const py1 = M.top;
    const finite = values.filter(Number.isFinite);
    const first = finite.length ? finite[0] : NaN;
    const last = finite.length ? finite[finite.length - 1] : NaN;

    if (n === 0 || finite.length === 0) {
      svg.setAttribute('aria-label', `${title}: no steps yet`);
      capSummary.textContent = 'no steps yet';
      svg.setAttribute('viewBox', `0 0 ${W} 60`);
      svg.setAttribute('width', W);
      svg.setAttribute('height', 60);
      const t = svgEl('text', {
        x: W / 2,
        y: 36,
        'text-anchor': 'middle',
        fill: AXIS,
        'font-size': 14,
      });
      t.textContent = 'No steps yet.';
      svg.append(t);
      geom = null;
      return;
    }
    {
      svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
      svg.setAttribute('width', W);
      svg.setAttribute('height', H);
    }
    const lo = Math.min(...finite);
    const hi = Math.max(...finite);
    const y = niceTicks(lo, hi, W < 400 ? 4 : 5);
    const xMax = xStart + Math.max(1, n - 1);
    const xt = niceTicks(
      xStart,
      xMax,
      Math.min(Math.max(2, Math.floor((px1 - px0) / 48)), Math.max(1, n - 1)),
    );
    const xStep = Math.max(1, Math.round(xt.step));
    const xTicks = [];
    for (let v = xStart; v <= xMax; v += xStep) xTicks.push(v);
    const sx = (i) => px0 + ((i - xStart) / (xMax - xStart)) * (px1 - px0);
    const sy = (v) => py0 - ((v - y.lo) / (y.hi - y.lo)) * (py0 - py1);
    geom = { sx, sy, px0, px1, py0, py1 };

    const frag = document.createDocumentFragment();
    // grid + y ticks
    for (const v of y.ticks) {
      const yy = r2(sy(v));
      frag.append(
        svgEl('line', { x1: px0, x2: px1, y1: yy, y2: yy, stroke: GRID, 'stroke-width': 1 }),
      );
      const t = svgEl('text', {
        x: px0 - 8,
        y: r2(yy + 4),
        'text-anchor': 'end',
        'font-size': 11.5,
        fill: AXIS,
        class: 'tick',
      });
      t.textContent = formatTick(v, 4);
      frag.append(t);
    }
    // x ticks
    for (const v of xTicks) {
      const xx = r2(sx(v));
      frag.append(
        svgEl('line', { x1: xx, x2: xx, y1: py0, y2: py0 + 5, stroke: AXIS, 'stroke-width': 1 }),
      );
      const t = svgEl('text', {
        x: xx,
        y: py0 + 18,
        'text-anchor': 'middle',
        'font-size': 11.5,
        fill: AXIS,
        class: 'tick',
      });
      t.textContent = String(v);
      frag.append(t);
    }
    // axes
    frag.append(
      svgEl('line', { x1: px0, x2: px1, y1: py0, y2: py0, stroke: AXIS, 'stroke-width': 1 }),
    );
    frag.append(
      svgEl('line', { x1: px0, x2: px0, y1: py1, y2: py0, stroke: AXIS, 'stroke-width': 1 }),
    );
    const xl = svgEl('text', {
      x: (px0 + px1) / 2,
      y: H - 6,
      'text-anchor': 'middle',
      'font-size': 12.5,
      fill: INK,
      'font-weight': 600,
      class: 'axis-title',
    });
    xl.textContent = xLabel;
    const yl = svgEl('text', {
      x: 0,
      y: 0,
      transform: `translate(16,${(py0 + py1) / 2}) rotate(-90)`,
      'text-anchor': 'middle',
      'font-size': 12.5,
      fill: INK,
      'font-weight': 600,
      class: 'axis-title',
    });
    yl.textContent = yLabel;
    frag.append(xl, yl);

    // the line (gaps at non-finite values) and the points
    let d = '';
    let pen = false;
    values.forEach((v, i) => {
      if (Number.isFinite(v)) {
        d += `${pen ? 'L' : 'M'}${r2(sx(xStart + i))},${r2(sy(v))}`;
        pen = true;
      } else {
        pen = false;
      }
    });
    frag.append(
      svgEl('path', {
        d,
        fill: 'none',
        stroke: LINE,
        'stroke-width': 2.25,
        'stroke-linejoin': 'round',
        'stroke-linecap': 'round',
      }),
    );
    const showPoints = n <= 60;
    if (showPoints) {
      values.forEach((v, i) => {
        if (!Number.isFinite(v)) return;
        frag.append(
          svgEl('circle', {
            cx: r2(sx(xStart + i)),
            cy: r2(sy(v)),
            r: n <= 20 ? 3.5 : 2.5,
            fill: '#ffffff',
            stroke: POINT,
            'stroke-width': 2,
          }),
        );
      });
    }
    // last value, labelled
    const li = values.length - 1;
    if (Number.isFinite(values[li])) {
      const lx = sx(xStart + li);
      const ly = sy(values[li]);
      const t = svgEl('text', {
        x: r2(Math.min(lx, px1 - 2)),
        y: r2(ly - 11),
        'text-anchor': 'end',
        'font-size': 12,
        fill: INK,
        'font-weight': 600,
        stroke: '#ffffff',
        'stroke-width': 4,
        'stroke-linejoin': 'round',
        'paint-order': 'stroke',
        class: 'last-value',
      });
      t.textContent = formatTick(values[li], 5);
      frag.append(t);
    }
    // hover guide
    guide = svgEl('g', { visibility: 'hidden', 'pointer-events': 'none' });
    guide.append(
      svgEl('line', {
        x1: 0,
        x2: 0,
        y1: py1,
        y2: py0,
        stroke: AXIS,
        'stroke-width': 1,
        'stroke-dasharray': '3 3',
      }),
    );
    guide.append(
      svgEl('circle', { cx: 0, cy: 0, r: 5, fill: POINT, stroke: '#ffffff', 'stroke-width': 2 }),
    );
    frag.append(guide);
    svg.append(frag);

    const change =
      n > 1 && Number.isFinite(first) && first !== 0
        ? ` (${formatTick(((last - first) / Math.abs(first)) * 100, 3)} %)`
        : '';
    const summaryText =
      n === 1
        ? `step ${xStart}: ${formatTick(first, 5)}`
        : `${n} values, from ${formatTick(first, 5)} at step ${xStart} to ${formatTick(last, 5)} at step ${xStart + n - 1}${change}`;
    capSummary.textContent = summaryText;
    svg.setAttribute(
      'aria-label',
      `Line chart of ${title}: ${summaryText}. The values are in the table below.`,
    );
  }

  function fillTable() {
    const t = document.createElement('table');
    t.className = 'data-table values-table';
    const thead = document.createElement('thead');
    const hr = document.createElement('tr');
    for (const [h, num] of [
      [xLabel, true],
      [yLabel, true],
    ]) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = h;
      if (num) th.className = 'num';
      hr.append(th);
    }
    thead.append(hr);
    const tbody = document.createElement('tbody');
    values.forEach((v, i) => {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      th.scope = 'row';
      th.className = 'num';
      th.textContent = String(xStart + i);
      const td = document.createElement('td');
      td.className = 'num';
      td.textContent = Number.isFinite(v) ? v.toFixed(digits) : String(v);
      tr.append(th, td);
      tbody.append(tr);
    });
    t.append(thead, tbody);
    tableWrap.replaceChildren(t);
    summary.textContent = `${title}: values (${values.length} ${values.length === 1 ? xLabel : `${xLabel}s`})`;
  }

  function update(next) {
    const wasOpen = details.dataset.touched ? details.open : null;
    values = Array.from(next ?? [], Number);
    draw();
    fillTable();
    details.open = wasOpen ?? values.length <= 12;
    details.hidden = values.length === 0;
    readout.textContent = '';
  }
  details.addEventListener('toggle', () => {
    details.dataset.touched = '1';
  });

  svg.addEventListener('pointermove', (e) => {
    if (!geom || !guide) return;
    const rect = svg.getBoundingClientRect();
    const x = ((e.clientX - rect.left) * W) / rect.width;
    const n = values.length;
    let best = -1;
    let bestD = Infinity;
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(values[i])) continue;
      const dx = Math.abs(geom.sx(xStart + i) - x);
      if (dx < bestD) {
        bestD = dx;
        best = i;
      }
    }
    if (best < 0) return;
    const gx = r2(geom.sx(xStart + best));
    const gy = r2(geom.sy(values[best]));
    guide.firstChild.setAttribute('x1', gx);
    guide.firstChild.setAttribute('x2', gx);
    guide.lastChild.setAttribute('cx', gx);
    guide.lastChild.setAttribute('cy', gy);
    guide.setAttribute('visibility', 'visible');
    readout.textContent = `${xLabel} ${xStart + best}: ${yLabel} ${values[best].toFixed(digits)}`;
  });
  svg.addEventListener('pointerleave', () => {
    if (guide) guide.setAttribute('visibility', 'hidden');
    readout.textContent = '';
  });

  if (typeof ResizeObserver === 'function') {
    const ro = new ResizeObserver((entries) => {
      const w = Math.round(entries[entries.length - 1].contentRect.width);
      const next = Math.max(260, Math.min(W_DEFAULT, w));
      if (w > 0 && next !== W) {
        W = next;
        draw();
      }
    });
    ro.observe(sizer);
  }

  update(losses);
  return { element: figure, update };
}
