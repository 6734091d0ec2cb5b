// eslint over the components' browser code (mha_app/components) and its tests (tests/js). eslint, @eslint/js and
// globals are installed by .ci/run into .ci/node (no package.json here), so they are required from there.
//
// A component's script reaches the browser as one ES module: shared.js, then the component's file
// (mha_app/components/__init__.py: source). Each such file is linted as it is delivered, shared.js in front (the
// processor below), so that a name the component takes from shared.js is seen defined there, and one it declares
// again is the error the browser would raise; only the component's own lines are reported. shared.js on its own is a
// script of helpers for those files: its `/* exported */` line names what the components take from it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('.ci/node/', import.meta.url));
const js = require('@eslint/js');
const globals = require('globals');

const SHARED = readFileSync(new URL('mha_app/components/shared.js', import.meta.url), 'utf8') + '\n';
const SHARED_LINES = SHARED.split('\n').length - 1;

const delivered = {
  meta: { name: 'delivered' },
  preprocess: text => [SHARED + text],
  postprocess: ([messages]) => messages
    .filter(m => !m.line || m.line > SHARED_LINES)
    .map(({ fix, suggestions, ...m }) => ({  // fixes would point into the joined text
      ...m, line: m.line && m.line - SHARED_LINES, endLine: m.endLine && m.endLine - SHARED_LINES })),
  supportsAutofix: false,
};

export default [
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['mha_app/components/**/*.js'],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  {
    files: ['mha_app/components/explorer/explorer.js', 'mha_app/components/matrix/matrix.js'],
    processor: delivered,
  },
  {
    files: ['mha_app/components/shared.js'],
    languageOptions: { sourceType: 'script' },
  },
  {
    files: ['tests/js/**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: globals.node },
  },
];
