// measure.js - text widths for the heatmap's layout.

import { FONT_STACK } from '../export.js';

// Widths measured so far, by font and text: a width depends on nothing else, so every heatmap of
// the page shares them (lesson 3's twenty maps label the same tokens at the same sizes).
const widths = new Map();
const WIDTHS_KEPT = 20000;

/**
 * A text measurer: measure(text, size, weight = 400) -> the width in px of `text` in the page's
 * font, from a canvas 2D context (0.6 em per character where there is none). Each heatmap has its
 * own (state.measure); the widths are remembered for the whole page.
 */
export function textMeasurer() {
  let ctx; // undefined until first needed; null when the browser gives no 2D context
  let font = ''; // the context's font: set only when it changes (parsing it is the slow part)
  return function measure(text, size, weight = 400) {
    const key = `${weight}|${size}|${text}`;
    let w = widths.get(key);
    if (w !== undefined) return w;
    if (ctx === undefined) ctx = document.createElement('canvas').getContext('2d');
    if (ctx) {
      const want = `${weight} ${size}px ${FONT_STACK}`;
      if (want !== font) ctx.font = font = want;
      w = ctx.measureText(text).width;
    } else {
      w = text.length * size * 0.6;
    }
    if (widths.size > WIDTHS_KEPT) widths.clear();
    widths.set(key, w);
    return w;
  };
}
