// readout.js - the words for the current cell, row or column: the live readout below the plot
// ("query ‘cat’ → key ‘sat’: 0.4321") and the lines of the tooltip.

import { MINUS } from '../dom.js';
import { formatFixed, formatTick } from '../scales.js';
import { axisNoun } from './axes.js';

/** 'query ‘cat’' (a labelled row) or 'query 3'; which: 'row' | 'col'. */
export function nameOf(s, which, i) {
  const labels = which === 'row' ? s.rowLabels : s.colLabels;
  const noun = axisNoun(which === 'row' ? s.rowAxis : s.colAxis);
  return labels[i] !== null ? `${noun} ‘${labels[i]}’` : `${noun} ${i}`;
}

/** A value in the readout: at least 4 decimals; an exponent for tiny or huge signed values. */
function readoutValue(s, v) {
  if (!Number.isFinite(v)) {
    return v === -Infinity && !s.markNonFinite ? `${MINUS}∞ (masked)` : formatFixed(v);
  }
  if (s.scale === 'unit') return formatFixed(v, Math.max(4, s.digits));
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5)
    ? formatTick(v, 4)
    : formatFixed(v, Math.max(4, s.digits));
}

/** A value at full precision (the tooltip), with a real minus sign. */
export function fullValue(v) {
  if (!Number.isFinite(v)) return formatFixed(v);
  return String(v).replace('-', MINUS);
}

/** "sum …, largest … at key ‘sat’" of row r (c = -1) or column c (r = -1), finite values only. */
function summary(s, r, c) {
  const vals = [];
  if (r >= 0) for (let j = 0; j < s.cols; j++) vals.push(s.data[r * s.cols + j]);
  else for (let i = 0; i < s.rows; i++) vals.push(s.data[i * s.cols + c]);
  let sum = 0;
  let best = -1;
  for (let i = 0; i < vals.length; i++) {
    if (Number.isFinite(vals[i])) {
      sum += vals[i];
      if (best < 0 || vals[i] > vals[best]) best = i;
    }
  }
  if (best < 0) return 'no finite values';
  const where = r >= 0 ? nameOf(s, 'col', best) : nameOf(s, 'row', best);
  return `sum ${readoutValue(s, sum)}, largest ${readoutValue(s, vals[best])} at ${where}`;
}

/** The readout of cell (r, c), row r (c = -1) or column c (r = -1). */
export function readoutText(s, { r, c }) {
  if (r >= 0 && c >= 0) {
    const v = s.data[r * s.cols + c];
    const value = s.blank?.[r * s.cols + c] ? `— (${s.blankText ?? 'empty'})` : readoutValue(s, v);
    // a ringed cell (markCells) says so: the keyboard and screen reader see the ring too
    const ringed = s.markCells?.some((rc) => rc?.[0] === r && rc?.[1] === c);
    const mark = ringed ? ` (ringed: ${s.markLabel ?? 'marked cell'})` : '';
    return `${nameOf(s, 'row', r)} → ${nameOf(s, 'col', c)}: ${value}${mark}`;
  }
  if (r >= 0) return `${nameOf(s, 'row', r)} (row ${r}): ${summary(s, r, -1)}`;
  return `${nameOf(s, 'col', c)} (column ${c}): ${summary(s, -1, c)}`;
}

/** The readout while there is no current cell. */
export const IDLE_TEXT = 'Hover a cell, or focus the figure and use the arrow keys.';
