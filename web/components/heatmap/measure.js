// measure.js - text widths for the heatmap's layout.

import { FONT_STACK } from '../export.js';

// Widths at REF_PX, by weight and text: a width scales with the font size, so each text is
// measured once, and every heatmap of the page shares them (lesson 3's maps label the same tokens;
// fitting a map's cells tries several label sizes).
const REF_PX = 100;
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
    const key = `${weight}|${text}`;
    let w = widths.get(key);
    if (w === undefined) {
      if (ctx === undefined) ctx = document.createElement('canvas').getContext('2d');
      if (ctx) {
        const want = `${weight} ${REF_PX}px ${FONT_STACK}`;
        if (want !== font) ctx.font = font = want;
        w = ctx.measureText(text).width;
      } else {
        w = text.length * REF_PX * 0.6;
      }
      if (widths.size > WIDTHS_KEPT) widths.clear();
      widths.set(key, w);
    }
    return (w * size) / REF_PX;
  };
}
