// Statements a teacher's reread found false or misleading (issue 34's list), as the page used to
// word them: none is left in the page's sources (web/index.html and every module of web/ that
// writes text), and each has its corrected wording. The browser suite checks the drawn page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { matmulRules } from '../../web/model/backward-rules.js';
import { ERROR_FORMS } from '../../web/model/gradcheck-report.js';
import { COURSE_RESULTS } from '../../web/model/course-results.js';
import { loadMHA } from '../helpers.mjs';

const web = fileURLToPath(new URL('../../web/', import.meta.url));

/** The page's own text sources: index.html and every .js of web/ but the bundle and sources.js. */
function sources(dir = web) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    if (e.name === 'app.bundle.js' || e.name === 'sources.js') return [];
    return /\.(js|html)$/.test(e.name)
      ? [[path.slice(web.length), readFileSync(path, 'utf8')]]
      : [];
  });
}

// [what was said, why it was wrong]
const OLD = [
  [
    'A loss that falls step after step checks that the backward pass',
    'any direction with a positive dot product with the gradient goes down too',
  ],
  ['the form of Stanford cs231n’s notes', "that is the assignments' rel_error"],
  ['about 10⁻¹³·|L| absolute', 'the measured floor is about u·|L|/ε ≈ 10⁻¹¹·|L|'],
  ['10⁻¹² when both are 0', 'the denominator is floored at 10⁻¹²: the error is 0'],
  ['says which numbers match yours exactly', 'nothing matches a course notebook exactly'],
  ['concatᵀ @ dY, summed over the batch', 'it sums over batch and tokens'],
  ['a hundred times more precise at ε = 10⁻³', 'about ten times at each stencil’s best ε'],
  ['for C = A @ B, dA = dC @ Bᵀ', 'C is the layer’s width, not a matrix'],
  ['are the same four numbers, and yours must be these', 'a course notebook draws its own'],
  ["the course demo's random batch", 'the course demo is seed 42 too, but not these draws'],
  ['(its own seed, order of draws', 'the course’s lesson-3 demo is seed 42 too'],
  ['it is what your notebook should', 'not when the file lacks an array the page then draws'],
];

test('the statements found false are gone from the page’s sources', () => {
  const all = sources();
  assert.ok(all.some(([f]) => f === 'index.html') && all.length > 50, `${all.length} files`);
  for (const [said, why] of OLD) {
    const where = all.filter(([, text]) => text.includes(said)).map(([f]) => f);
    assert.deepEqual(where, [], `"${said}" (${why})`);
  }
});

test('their corrections: cs231n named, dWo summed over B·T rows, the falling loss', async () => {
  assert.match(
    ERROR_FORMS.sum.formula,
    /rel_error of the assignments of cs231n, Stanford’s course/,
  );
  const mha = await loadMHA();
  const rules = matmulRules(mha, { B: 2, T: 6, C: 64, heads: 4 });
  const dWo = rules.flatMap((r) => r.rows).find((row) => row.grad === 'dWo');
  assert.ok(dWo, 'a dWo row');
  assert.equal(dWo.rule, 'concatᵀ @ dY, summed over batch and tokens (B·T = 12 rows)');
  // the boxes of lessons 4 and 5 name the cause of their gap, not the draws
  assert.match(COURSE_RESULTS.lesson4.why, /not the draws: .*strict maximum/);
  assert.match(COURSE_RESULTS.lesson4.why, /convention selector/);
  assert.match(COURSE_RESULTS.lesson5.why, /E\[Y²\] \+ 1, at least 1/);
  assert.equal(COURSE_RESULTS.lesson1.why, undefined);
  const html = readFileSync(join(web, 'index.html'), 'utf8');
  assert.match(html, /is weak evidence that the backward pass is right/);
  assert.match(html, /training never uses dX/);
});
