// lesson-files.mjs - each lesson's file as a student's notebook writes it (issue 34, item 6): the
// lesson's own Copy-as-NumPy script, run by Debian's NumPy with a seed of its own (so no two
// lessons' arrays are alike), then the lesson's np.savez line. Returns what each file holds as
// NumPy computed it, for the tests to compare the page's reading with.
//
//   writeLessonFiles(dir)            -> { lesson1: { path, arrays: { X: { shape, data }, … } }, … }
//   writeLessonFiles(dir, lineOf)    -> the same with other save lines (lineOf(key) -> the line)

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import {
  layerObjectScript,
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
} from '../../web/model/numpy-scripts.js';
import { LESSON_SAVES, lessonSaveLine } from '../../web/check/names.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { COURSE } from '../../web/model/defaults.js';
import { PYTHON } from '../helpers.mjs';

const WEIGHTS = 'Wq, Wk, Wv, Wo = (layer.W[k] for k in ("Wq", "Wk", "Wv", "Wo"))';

/** Lesson 5's run as the file saves it: lr and the steps. */
export const LESSON5_RUN = Object.freeze({ lr: 0.05, steps: 4 });

/** A script with the course's seed replaced by `seed` (each lesson draws its own arrays). */
function reseeded(script, seed) {
  const out = script
    .replaceAll(`default_rng(${COURSE.seed})`, `default_rng(${seed})`)
    .replaceAll(`np.random.seed(${COURSE.seed})`, `np.random.seed(${seed})`);
  if (out === script) throw new Error('the script draws from no seed this helper knows');
  return out;
}

/** Each lesson's script and what binds the names its save line uses. */
function programs() {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const { lr, steps } = LESSON5_RUN;
  return {
    lesson1: [lesson1Script({ sentence: DEFAULT_SENTENCE, tokens }), ''],
    lesson2: [lesson2Script(), ''],
    lesson3: [lesson3Script({}), ''], // (its own Wq … Wo)
    lesson4: [lesson4Script(), WEIGHTS],
    // the layer's initial weights (the listing resets them at its end) and the run's lr and steps
    lesson5: [
      layerObjectScript({ lr, runSteps: steps - 1 }),
      `${WEIGHTS}\nlr, steps = ${lr}, ${steps}`,
    ],
  };
}

/**
 * Write lesson1.npz … lesson5.npz into `dir` with each lesson's save line (lineOf(key); default:
 * the page's, lessonSaveLine). Returns per lesson { path, arrays: { name: { shape, data } } }: the
 * arrays its line names (LESSON_SAVES), as NumPy holds them when the line runs.
 */
export function writeLessonFiles(dir, lineOf = lessonSaveLine) {
  const out = {};
  const entries = Object.entries(programs());
  for (const [i, [key, [script, bind]]] of entries.entries()) {
    const names = LESSON_SAVES[key].names;
    const dump = names.map((n) => `${JSON.stringify(n)}: _dump(${n})`).join(', ');
    const program = [
      reseeded(script, 100 + i),
      bind,
      'import json as _json, os as _os',
      `_os.chdir(${JSON.stringify(dir)})`,
      lineOf(key),
      'def _dump(a):',
      '    a = np.asarray(a, dtype=float)',
      '    return {"shape": list(a.shape), "data": a.ravel().tolist()}',
      `print("JSON", _json.dumps({${dump}}))`,
    ].join('\n');
    const text = execFileSync(PYTHON, ['-'], {
      input: program,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const line = text.split('\n').find((l) => l.startsWith('JSON '));
    out[key] = { path: join(dir, `${key}.npz`), arrays: JSON.parse(line.slice(5)) };
  }
  return out;
}
