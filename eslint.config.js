// ESLint flat config for web/ and tests/ (formatting is Prettier's: `npm run format`).
// `npm run lint` runs ESLint, Prettier --check and clang-format over everything and fails on any
// finding. The page's layers import only downward; the rules below make an upward import an error:
//   engine (web/mha.js, web/io/, web/check.js, web/check/) -> model (web/model/) -> jobs
//   (web/jobs/) -> components (web/components/) -> lessons (web/lessons/) -> app (web/app.js,
//   web/boot.js)
import js from '@eslint/js';
import globals from 'globals';

const LAYERS = ['model', 'jobs', 'components', 'lessons'];

// the notebook check's modules: the page reaches them through its facade, web/check.js
// (but two small modules a lesson needs without the rest of the check: the course's names and
// save lines, and lesson 5's run read from a student's arrays; through the facade, the bundler
// put the whole check in every lesson's chunk)
const CHECK_INSIDE = {
  group: ['**/check/**', '!**/check/names.js', '!**/check/training-run.js'],
  message: 'the notebook check is used through its facade, web/check.js, not its modules',
};

/** `no-restricted-imports` patterns forbidding every layer above `layer` (and the app). */
function importsAbove(layer) {
  const above = LAYERS.slice(LAYERS.indexOf(layer) + 1);
  const group = [...above.map((l) => `**/${l}/**`), '**/app.js', '**/boot.js'];
  const message = `web/${layer}/ may import only from layers below it (see README, "Layout")`;
  return ['error', { patterns: [{ group, message }, CHECK_INSIDE] }];
}

export default [
  {
    ignores: [
      'build/**',
      'node_modules/**',
      'web/app.bundle.js',
      'web/chunks/**',
      'web/model/scripts/sources.js',
      'web/vendor/**',
      'test-results/**',
      'tests/fuzz/corpus/**',
      '.stryker-tmp/**',
      'reports/**',
    ],
  },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      globals: { ...globals.browser, ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
      'no-shadow': 'error',
      'no-param-reassign': ['error', { props: false }],
      'no-implicit-coercion': ['error', { allow: ['!!'] }],
      'no-eval': 'error',
      'no-new-func': 'error',
      'no-implied-eval': 'error',
      'object-shorthand': 'error',
      'prefer-template': 'error',
      'no-useless-concat': 'error',
      'no-else-return': 'error',
      'no-lonely-if': 'error',
      'no-nested-ternary': 'error',
      curly: ['error', 'multi-line'],
      'max-len': [
        'error',
        { code: 100, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreTemplateLiterals: true },
      ],
      'max-depth': ['error', 4],
      'max-params': ['error', 6],
    },
  },
  {
    files: ['web/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 20],
    },
  },
  {
    files: ['web/mha.js'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['./*', '../*'] }] },
  },
  {
    // the notebook check (engine layer): its own modules and bundled libraries only
    files: ['web/check.js', 'web/check/**/*.js'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/model/**', '**/jobs/**', '**/components/**', '**/lessons/**'].concat(
                '**/app.js',
                '**/boot.js',
              ),
              message: 'web/check/ is the engine layer: it imports only its own modules',
            },
          ],
        },
      ],
    },
  },
  {
    // the file codecs (engine layer, under the check): their own modules and fflate only
    files: ['web/io/**/*.js'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/check/**', '**/check.js', '**/model/**', '**/jobs/**'].concat(
                '**/components/**',
                '**/lessons/**',
                '**/app.js',
                '**/boot.js',
              ),
              message: 'web/io/ holds the file codecs: it imports only its own modules',
            },
          ],
        },
      ],
    },
  },
  { files: ['web/model/**/*.js'], rules: { 'no-restricted-imports': importsAbove('model') } },
  { files: ['web/jobs/**/*.js'], rules: { 'no-restricted-imports': importsAbove('jobs') } },
  {
    files: ['web/components/**/*.js'],
    rules: { 'no-restricted-imports': importsAbove('components') },
  },
  { files: ['web/lessons/**/*.js'], rules: { 'no-restricted-imports': importsAbove('lessons') } },
  {
    files: ['web/app.js', 'web/boot.js'],
    rules: { 'no-restricted-imports': ['error', { patterns: [CHECK_INSIDE] }] },
  },
];
