// measure.js - text widths for the heatmap's layout.

import { FONT_STACK } from '../export.js';

/**
 * A text measurer: measure(text, size, weight = 400) -> the width in px of `text` in the page's
 * font, from a canvas 2D context (0.6 em per character where there is none). Each heatmap has its
 * own (state.measure), with a cache of the widths it has measured.
 */
export function textMeasurer() {
  let ctx; // undefined until first needed; null when the browser gives no 2D context
  const cache = new Map();
  return function measure(text, size, weight = 400) {
    const key = `${weight}|${size}|${text}`;
    let w = cache.get(key);
    if (w !== undefined) return w;
    if (ctx === undefined) ctx = document.createElement('canvas').getContext('2d');
    if (ctx) {
      ctx.font = `${weight} ${size}px ${FONT_STACK}`;
      w = ctx.measureText(text).width;
    } else {
      w = text.length * size * 0.6;
    }
    if (cache.size > 5000) cache.clear();
    cache.set(key, w);
    return w;
  };
}
