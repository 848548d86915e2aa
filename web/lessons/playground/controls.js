// controls.js - the playground's form: one control per setting, the error line, and the two-way
// mapping between the controls and raw settings (strings, as validateSettings takes them).

import { el } from '../../components/dom.js';
import { field, errorLine, textInput } from '../../components/controls.js';
import {
  DEFAULTS,
  C_OPTIONS,
  MAX_PG_TOKENS,
  PRESETS,
  RNG_OPTIONS,
  MAX_STEPS,
  SETTING_KEYS,
  divisors,
  parseBool,
  presetOf,
} from '../../model/settings.js';

const DESCRIBED_BY = { 'aria-describedby': 'pg-error' };

function numberInput(id, attrs) {
  return el('input', { id, attrs: { type: 'number', ...attrs, ...DESCRIBED_BY } });
}

function select(id, options) {
  return el('select', { id, attrs: DESCRIBED_BY }, ...options);
}

/** The nine controls, by setting key. */
function makeControls() {
  return {
    s: textInput('pg-sentence', 'pg-error'),
    C: select(
      'pg-C',
      C_OPTIONS.map((c) => el('option', { value: String(c), text: String(c) })),
    ),
    h: select('pg-heads', []),
    seed: numberInput('pg-seed', { min: '0', step: '1', inputmode: 'numeric' }),
    rng: select(
      'pg-rng',
      RNG_OPTIONS.map((r) =>
        el('option', {
          value: r,
          text: r === 'legacy' ? 'legacy (np.random.seed)' : 'default_rng',
        }),
      ),
    ),
    causal: el('input', { id: 'pg-causal', attrs: { type: 'checkbox' } }),
    pe: el('input', { id: 'pg-pe', attrs: { type: 'checkbox' } }),
    lr: numberInput('pg-lr', { min: '0', step: '0.01', inputmode: 'decimal' }),
    steps: numberInput('pg-steps', {
      min: '1',
      max: String(MAX_STEPS),
      step: '1',
      inputmode: 'numeric',
    }),
  };
}

const LABELS = {
  s: `Sentence (1–${MAX_PG_TOKENS} tokens)`,
  C: 'C (width)',
  h: 'heads h',
  seed: 'seed',
  rng: 'random generator',
  causal: 'causal mask',
  pe: 'positional encoding',
  lr: 'learning rate',
  steps: 'training steps',
};

/** Select `value` in sel; a value it does not offer is added first as an option `text`. */
function selectValue(sel, value, text) {
  sel.value = value;
  if (sel.value !== value) {
    sel.append(el('option', { value, text }));
    sel.value = value;
  }
}

/** The heads a width C allows (h = a divisor of C); h itself is kept even when it is not one. */
function fillHeads(hSel, C, h) {
  const ds = divisors(C);
  const opts = ds.map((d) => el('option', { value: String(d), text: `${d} (hs = ${C / d})` }));
  if (Number.isInteger(h) && !ds.includes(h)) {
    opts.push(el('option', { value: String(h), text: `${h} (does not divide ${C})` }));
  }
  hSel.replaceChildren(...opts);
  hSel.value = String(h);
}

/** The size presets: picking one sets C and h; "your own" when C and h match none. */
function presetSelect() {
  return el(
    'select',
    { id: 'pg-preset' },
    el('option', { value: '', text: 'your own C and h' }),
    ...PRESETS.map((p) => el('option', { value: p.key, text: p.label })),
  );
}

/** The preset select follows C and h (as typed or loaded). */
function syncPreset(c, preset) {
  preset.value = presetOf(c.C.value, c.h.value)?.key ?? '';
}

/** Show raw settings (from the URL: maybe invalid) in the controls, keeping bad values visible. */
function setControls(c, raw) {
  const r = { ...DEFAULTS, ...raw };
  c.s.value = String(r.s);
  // a width that is not offered keeps its text, so the error can name it
  selectValue(c.C, String(r.C), `${r.C} (not offered)`);
  const C = Number(r.C);
  fillHeads(
    c.h,
    C_OPTIONS.includes(C) ? C : DEFAULTS.C,
    Number.isInteger(Number(r.h)) ? Number(r.h) : r.h,
  );
  selectValue(c.h, String(r.h), String(r.h));
  c.seed.value = String(r.seed);
  selectValue(c.rng, String(r.rng), String(r.rng));
  c.causal.checked = parseBool(r.causal) === true;
  c.pe.checked = parseBool(r.pe) === true;
  c.lr.value = String(r.lr);
  c.steps.value = String(r.steps);
}

// a number field whose text is not a number reads as '' in the DOM: say so in the message
const numText = (input) => (input.validity?.badInput ? 'not a number' : input.value);

/** Raw settings from the controls. */
function readControls(c) {
  return {
    s: c.s.value,
    C: c.C.value,
    h: c.h.value,
    seed: numText(c.seed),
    rng: c.rng.value,
    causal: c.causal.checked,
    pe: c.pe.checked,
    lr: numText(c.lr),
    steps: numText(c.steps),
  };
}

/**
 * The form: { element, controls (by key), preset, err, set(raw), read(), fillHeads(),
 * usePreset(), syncPreset(), showErrors(errors, hasView) }.
 */
export function playgroundForm() {
  const controls = makeControls();
  const preset = presetSelect();
  const err = errorLine('pg-error');
  const fields = SETTING_KEYS.map((k) => field(LABELS[k], controls[k]));
  fields.splice(SETTING_KEYS.indexOf('C'), 0, field('size preset', preset));
  const element = el('div', { className: 'controls' }, ...fields, err.element);
  return {
    element,
    controls,
    preset,
    err,
    set: (raw) => {
      setControls(controls, raw);
      syncPreset(controls, preset);
    },
    read: () => readControls(controls),
    /** The heads select for the width now chosen, keeping the heads chosen. */
    fillHeads: () => fillHeads(controls.h, Number(controls.C.value), Number(controls.h.value)),
    /** The preset picked: its C and h into their controls (false: "your own", nothing to do). */
    usePreset() {
      const p = PRESETS.find((x) => x.key === preset.value);
      if (!p) return false;
      controls.C.value = String(p.C);
      fillHeads(controls.h, p.C, p.h);
      return true;
    },
    syncPreset: () => syncPreset(controls, preset),
    /** Mark the refused controls and list the messages (none: the line is cleared). */
    showErrors(errors, hasView) {
      for (const k of SETTING_KEYS) {
        if (errors[k]) controls[k].setAttribute('aria-invalid', 'true');
        else controls[k].removeAttribute('aria-invalid');
      }
      const msgs = SETTING_KEYS.filter((k) => errors[k]).map((k) => errors[k]);
      if (!msgs.length) {
        err.clear();
        return;
      }
      err.set([
        ...msgs,
        hasView
          ? 'The view below still shows the last valid settings.'
          : 'The view below shows the default settings.',
      ]);
    },
  };
}
