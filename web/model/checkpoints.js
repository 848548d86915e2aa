// checkpoints.js - the checkpoints of every lesson (DOM-free): a few entries a notebook prints
// anyway, each named by the NumPy expression that prints it. The page's checkpoint box shows them
// (web/components/checkpoints.js) and every Copy-as-NumPy script prints the same expressions
// (checkpointPrints in web/model/numpy-scripts.js), from this one list, so the labels cannot drift.

/** The first n entries of data from offset off, as a plain array (n clipped to what is there). */
function entries(data, off, n) {
  return Array.from(data.slice(off, off + Math.max(0, n)));
}

// kind (the words of web/model/agreement.js): 'exact' (a random draw: NumPy's bit for bit) or
// 'lastDigits' (computed through matrix products: NumPy's to the last digit or two).
// of(r): the values, from the lesson's model result r (web/model/lessonN.js; lesson 5: the
// Trainer at its initial weights). when(r): false when the entry does not exist for r's sizes.
const LISTS = {
  // r = lesson1(): A1, A2 (T, T)
  lesson1: [
    { label: 'A1[0, :4]', kind: 'lastDigits', of: (r) => entries(r.A1, 0, Math.min(4, r.T)) },
    { label: 'A2[0, :4]', kind: 'lastDigits', of: (r) => entries(r.A2, 0, Math.min(4, r.T)) },
    { label: 'np.abs(A1 - A2).max()', kind: 'lastDigits', of: (r) => r.maxGap },
  ],
  // r = lesson2(): x, q (1, T, C), Qheads = heads (1, h, T, hs)
  lesson2: [
    { label: 'x[0, 0, :4]', kind: 'exact', of: (r) => entries(r.x, 0, Math.min(4, r.C)) },
    { label: 'q[0, 0, :4]', kind: 'lastDigits', of: (r) => entries(r.q, 0, Math.min(4, r.C)) },
    {
      label: 'heads[0, 1, 0, :4]',
      kind: 'lastDigits',
      when: (r) => r.heads > 1,
      of: (r) => entries(r.Qheads, r.T * r.hs, Math.min(4, r.hs)),
    },
    {
      label: '(x @ Wq[:, hs:2*hs])[0, 0, :4]',
      kind: 'lastDigits',
      when: (r) => r.heads > 1,
      of: (r) => [...r.head1Projection],
    },
  ],
  // r = lesson3(): r.tensors.X (B, T, C), headout (B, h, T, hs), Y (B, T, C); r.scoreSpread
  lesson3: [
    {
      label: 'X[0, 0, :4]',
      kind: 'exact',
      of: (r) => entries(r.tensors.X.data, 0, Math.min(4, r.C)),
    },
    {
      label: '(Q @ K.transpose(0, 1, 3, 2)).std()',
      kind: 'lastDigits',
      of: (r) => r.scoreSpread.before,
    },
    { label: 'scores.std()', kind: 'lastDigits', of: (r) => r.scoreSpread.after },
    {
      label: 'headout[0, 1, 0, :4]',
      kind: 'lastDigits',
      when: (r) => r.heads > 1,
      of: (r) => entries(r.tensors.headout.data, r.T * r.hs, Math.min(4, r.hs)),
    },
    {
      label: 'Y[0, 0, :4]',
      kind: 'lastDigits',
      of: (r) => entries(r.tensors.Y.data, 0, Math.min(4, r.C)),
    },
  ],
  // r = lesson4(): loss, grads by name ({ data, shape })
  lesson4: [
    { label: 'np.sum(dY * Y)', kind: 'lastDigits', of: (r) => r.loss },
    {
      label: 'dWo[0, :4]',
      kind: 'lastDigits',
      of: (r) => entries(r.grads.dWo.data, 0, Math.min(4, r.C)),
    },
    {
      label: 'dX[0, 0, :4]',
      kind: 'lastDigits',
      of: (r) => entries(r.grads.dX.data, 0, Math.min(4, r.C)),
    },
  ],
  // r = a Trainer before its first step: Y (1, T, C) and losses[0] at the initial weights
  lesson5: [
    {
      label: 'Y0[0, 0, :4]',
      kind: 'lastDigits',
      of: (r) => entries(r.Y, 0, Math.min(4, r.Y.length)),
    },
    { label: 'losses[0]', kind: 'lastDigits', of: (r) => r.losses[0] },
  ],
};

/** The lessons that have checkpoints: 'lesson1' ... 'lesson5'. */
export const CHECKPOINT_LESSONS = Object.freeze(Object.keys(LISTS));

function list(lesson) {
  const l = LISTS[lesson];
  if (!l) throw new Error(`checkpoints: no lesson "${lesson}" (one of ${CHECKPOINT_LESSONS})`);
  return l;
}

/** The NumPy expressions of a lesson's checkpoints, in order (what its script prints). */
export function checkpointLabels(lesson) {
  return list(lesson).map((c) => c.label);
}

/**
 * A lesson's checkpoints for its model result r: [{ label, kind, values }], values a number or
 * an array of numbers (an expression ending in a slice).
 */
export function checkpoints(lesson, r) {
  return list(lesson)
    .filter((c) => !c.when || c.when(r))
    .map((c) => ({ label: c.label, kind: c.kind, values: c.of(r) }));
}

/**
 * x as Python's repr(float) writes it: the shortest digits that read back as x (JavaScript's
 * too), in fixed notation for exponents -4 ... 15, else d.ddde±XX; 1 -> '1.0', 1e-5 -> '1e-05'.
 */
export function pythonRepr(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = mant.startsWith('-') ? '-' : '';
  const digits = mant.replace(/^-/, '').replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = String(Math.abs(exp)).padStart(2, '0');
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  return `${sign}${whole}.${digits.slice(exp + 1) || '0'}`;
}

/** The values as Python prints np.asarray(v).tolist(): a float, or [a, b, c]. */
export function pythonValues(values) {
  return Array.isArray(values) ? `[${values.map(pythonRepr).join(', ')}]` : pythonRepr(values);
}

/** One checkpoint as its script prints it: "A1[0, :4] = [0.0901..., ...]". */
export function checkpointLine(c) {
  return `${c.label} = ${pythonValues(c.values)}`;
}
