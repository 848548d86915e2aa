// gradcheck-convention.js - the controls of a gradient check's convention: the stencil (two-point
// as a notebook writes it, or five-point), the step ε, and the relative error the pass line reads.
// The choices come from web/model/gradcheck-report.js (STENCILS, ERROR_FORMS); nothing is listed
// twice.

import { el } from './dom.js';
import { field, errorLine } from './controls.js';
import { formatSci } from './scales.js';
import { DEFAULT_CONVENTION, ERROR_FORMS, STENCILS } from '../model/gradcheck-report.js';

const EPS_MIN = 1e-15; // below this x + ε == x for every entry the check meets
const EPS_MAX = 1; // above this the difference says nothing about a derivative

/** ε from the input's text, or an error message: a number in [1e-15, 1]. */
export function parseEps(text) {
  const t = String(text).trim();
  const v = Number(t);
  if (t === '' || !Number.isFinite(v)) {
    return { error: `ε must be a number such as 1e-5, got “${t}”.` };
  }
  if (v < EPS_MIN || v > EPS_MAX) {
    return { error: `ε must lie between 1e-15 and 1, got ${t}.` };
  }
  return { eps: v };
}

function select(id, options, value) {
  const s = el('select', { id });
  for (const [key, text] of options) s.append(el('option', { text, attrs: { value: key } }));
  s.value = value;
  return s;
}

/**
 * The convention controls of check `id`: { element, value() ({ stencil, eps, form }),
 * describe() (one line saying what the table shows) }. onChange(value, what) runs after a valid
 * change; what: 'run' (stencil or ε: the check must run again) or 'form' (the table only).
 */
export function conventionControls(id, onChange) {
  const state = { ...DEFAULT_CONVENTION };
  const stencil = select(
    `${id}-stencil`,
    Object.values(STENCILS).map((s) => [s.name, `${s.name}: ${s.formula}`]),
    state.stencil,
  );
  const eps = el('input', {
    id: `${id}-eps`,
    attrs: { type: 'text', inputmode: 'decimal', size: '8', spellcheck: 'false' },
  });
  const epsText = (v) =>
    v
      .toExponential()
      .replace(/\.?0*e/, 'e')
      .replace('e+', 'e');
  eps.value = epsText(state.eps);
  const form = select(
    `${id}-form`,
    Object.entries(ERROR_FORMS).map(([k, f]) => [k, f.formula]),
    state.form,
  );
  const err = errorLine(`${id}-eps-error`);
  eps.setAttribute('aria-describedby', err.element.id);
  stencil.addEventListener('change', () => {
    state.stencil = stencil.value;
    state.eps = STENCILS[state.stencil].eps; // each stencil at the step it is used with
    eps.value = epsText(state.eps);
    err.clear();
    onChange({ ...state }, 'run');
  });
  eps.addEventListener('change', () => {
    const r = parseEps(eps.value);
    if (r.error) return err.set(r.error); // the last check stays on screen
    err.clear();
    if (r.eps === state.eps) return undefined;
    state.eps = r.eps;
    return onChange({ ...state }, 'run');
  });
  form.addEventListener('change', () => {
    state.form = form.value;
    onChange({ ...state }, 'form');
  });
  const element = el(
    'div',
    { className: 'controls gradcheck-convention' },
    field('finite difference', stencil),
    field('step ε', eps),
    field('pass line on', form),
    err.element,
  );
  return { element, value: () => ({ ...state }) };
}

/** "two-point central differences (L(x+ε) − L(x−ε)) / 2ε, ε = 1.0e-5" for a convention. */
export function conventionText({ stencil, eps }) {
  const s = STENCILS[stencil];
  return `${s.name} central differences ${s.formula}, ε = ${formatSci(eps, 1)}`;
}
