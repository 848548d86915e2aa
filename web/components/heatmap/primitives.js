// primitives.js - the heatmap's drawing primitives and their three renderers: SVG DOM (the page),
// SVG markup (the SVG export) and canvas (the PNG export). A primitive is a plain object:
//   { type: 'text', x, y, text, size, weight?, anchor?, rotate?, fill?, mono?, cls?, key? }
//   { type: 'rect', x, y, w, h, fill?, stroke?, sw?, dash?, rx?, cls? }
//   { type: 'gradient', x, y, w, h, stops }     (a legend bar: markup and canvas only)
//   { type: 'line', x1, y1, x2, y2, stroke, sw? } (markup and canvas only)

import { svgEl } from '../dom.js';
import { FONT_STACK } from '../export.js';
import { r2 } from '../scales.js';
import { INK, MONO_STACK, MUTED_INK } from './theme.js';

const XML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escape text for SVG/XML markup (token labels are user text). */
export function escapeXML(s) {
  return String(s).replace(/[&<>"']/g, (ch) => XML_ESCAPES[ch]);
}

function textAttrs(it) {
  const a = { x: r2(it.x), y: r2(it.y), 'font-size': it.size };
  if (it.rotate) {
    a.x = 0;
    a.y = 0;
    a.transform = `translate(${r2(it.x)},${r2(it.y)}) rotate(${it.rotate})`;
  }
  if (it.anchor) a['text-anchor'] = it.anchor;
  if (it.weight) a['font-weight'] = it.weight;
  if (it.fill) a.fill = it.fill;
  if (it.mono) a['font-family'] = MONO_STACK;
  return a;
}

function rectAttrs(it) {
  const a = {
    x: r2(it.x),
    y: r2(it.y),
    width: r2(it.w),
    height: r2(it.h),
    fill: it.fill ?? 'none',
  };
  if (it.stroke) {
    a.stroke = it.stroke;
    a['stroke-width'] = it.sw ?? 1;
  }
  if (it.dash) a['stroke-dasharray'] = it.dash;
  if (it.rx) a.rx = it.rx;
  return a;
}

/** The SVG element of a text or rect primitive (null for other types). */
function itemElement(it) {
  if (it.type === 'text') {
    const e = svgEl('text', textAttrs(it));
    e.textContent = it.text;
    return e;
  }
  return it.type === 'rect' ? svgEl('rect', rectAttrs(it)) : null;
}

/** Append the text and rect primitives to `parent` as SVG elements; returns Map key -> element. */
export function drawItemsDOM(items, parent) {
  const keyed = new Map();
  const frag = document.createDocumentFragment();
  for (const it of items) {
    const e = itemElement(it);
    if (!e) continue;
    if (it.cls) e.setAttribute('class', it.cls);
    if (it.key) keyed.set(it.key, e);
    frag.append(e);
  }
  parent.append(frag);
  return keyed;
}

function attrString(a) {
  let s = '';
  for (const k in a) s += ` ${k}="${escapeXML(a[k])}"`;
  return s;
}

/** A legend bar as markup: its <linearGradient> goes into `defs` (an array of markup). */
function gradientMarkup(it, defs) {
  const id = `g${defs.length}`;
  const stops = it.stops
    .map(([o, c]) => `<stop offset="${o.toFixed(4)}" stop-color="${c}"/>`)
    .join('');
  defs.push(`<linearGradient id="${id}" x1="0" x2="1" y1="0" y2="0">${stops}</linearGradient>`);
  const bar = {
    x: r2(it.x),
    y: r2(it.y),
    width: r2(it.w),
    height: r2(it.h),
    fill: `url(#${id})`,
    stroke: MUTED_INK,
    'stroke-width': 0.5,
  };
  return `<rect${attrString(bar)}/>`;
}

function lineMarkup(it) {
  const a = {
    x1: r2(it.x1),
    y1: r2(it.y1),
    x2: r2(it.x2),
    y2: r2(it.y2),
    stroke: it.stroke,
    'stroke-width': it.sw ?? 1,
  };
  return `<line${attrString(a)}/>`;
}

function itemMarkup(it, defs) {
  switch (it.type) {
    case 'text':
      return `<text${attrString(textAttrs(it))}>${escapeXML(it.text)}</text>`;
    case 'rect':
      return `<rect${attrString(rectAttrs(it))}/>`;
    case 'gradient':
      return gradientMarkup(it, defs);
    case 'line':
      return lineMarkup(it);
    default:
      return '';
  }
}

/** The primitives as SVG markup; gradients add their definitions to `defs`. */
export function itemsMarkup(items, defs) {
  let out = '';
  for (const it of items) out += itemMarkup(it, defs);
  return out;
}

/** A (rounded) rectangle as the canvas's current path. */
export function roundRectPath(ctx, x, y, w, h, rx) {
  ctx.beginPath();
  if (rx > 0 && ctx.roundRect) ctx.roundRect(x, y, w, h, rx);
  else ctx.rect(x, y, w, h);
}

const CANVAS_ALIGN = { end: 'right', middle: 'center' };

function paintText(ctx, it) {
  ctx.font = `${it.weight ?? 400} ${it.size}px ${it.mono ? MONO_STACK : FONT_STACK}`;
  ctx.fillStyle = it.fill ?? INK;
  ctx.textAlign = CANVAS_ALIGN[it.anchor] ?? 'left';
  ctx.textBaseline = 'alphabetic';
  ctx.translate(it.x, it.y);
  if (it.rotate) ctx.rotate((it.rotate * Math.PI) / 180);
  ctx.fillText(it.text, 0, 0);
}

function paintRect(ctx, it) {
  roundRectPath(ctx, it.x, it.y, it.w, it.h, it.rx ?? 0);
  if (it.fill && it.fill !== 'none') {
    ctx.fillStyle = it.fill;
    ctx.fill();
  }
  if (it.stroke) {
    ctx.strokeStyle = it.stroke;
    ctx.lineWidth = it.sw ?? 1;
    if (it.dash) ctx.setLineDash(it.dash.split(' ').map(Number));
    ctx.stroke();
  }
}

function paintGradient(ctx, it) {
  const g = ctx.createLinearGradient(it.x, 0, it.x + it.w, 0);
  for (const [o, c] of it.stops) g.addColorStop(o, c);
  ctx.fillStyle = g;
  ctx.fillRect(it.x, it.y, it.w, it.h);
  ctx.strokeStyle = MUTED_INK;
  ctx.lineWidth = 0.5;
  ctx.strokeRect(it.x, it.y, it.w, it.h);
}

function paintLine(ctx, it) {
  ctx.strokeStyle = it.stroke;
  ctx.lineWidth = it.sw ?? 1;
  ctx.beginPath();
  ctx.moveTo(it.x1, it.y1);
  ctx.lineTo(it.x2, it.y2);
  ctx.stroke();
}

const PAINTERS = { text: paintText, rect: paintRect, gradient: paintGradient, line: paintLine };

/** Paint the primitives on a canvas 2D context. */
export function paintItems(ctx, items) {
  for (const it of items) {
    ctx.save();
    PAINTERS[it.type]?.(ctx, it);
    ctx.restore();
  }
}

/** The primitives moved by (dx, dy). */
export function shift(items, dx, dy) {
  return items.map((it) => {
    const o = { ...it };
    if ('x' in o) o.x += dx;
    if ('y' in o) o.y += dy;
    if ('x1' in o) {
      o.x1 += dx;
      o.x2 += dx;
      o.y1 += dy;
      o.y2 += dy;
    }
    return o;
  });
}
