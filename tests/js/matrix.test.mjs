// matrix.js's pure helpers: the hover's number formats and the colour bar's ticks.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { delivered } from './delivered.mjs';

const { formatted, ticks } = await delivered('matrix/matrix.js', ['formatted', 'ticks']);

test('formatted writes plotly hover formats: .Nf decimals, .Ng significant digits', () => {
  assert.equal(formatted(0.123456789, '.4f'), '0.1235');
  assert.equal(formatted(0.123456789, '.6g'), '0.123457');
  assert.equal(formatted(-2, '.2f'), '-2.00');
  assert.equal(formatted(0.5, ''), '0.5');      // no format: the value as it is
  assert.equal(formatted(0.5, ',.2%'), '0.5');  // a format it does not know: the same
});

test('ticks: about five round steps of 1, 2 or 5 × 10^k from zmin to zmax', () => {
  assert.deepEqual(ticks(0, 1), [[0, '0.0'], [0.2, '0.2'], [0.4, '0.4'], [0.2 + 0.2 + 0.2, '0.6'], [0.8, '0.8'], [1, '1.0']]);
  assert.deepEqual(ticks(-3, 3), [[-2, '-2'], [0, '0'], [2, '2']]);
  // 0.14 / 5 = 0.028: a step of 0.05 (0.02 is too small); zero as 0, never -0.00
  assert.deepEqual(ticks(-0.07, 0.07), [[-0.05, '-0.05'], [0, '0.00'], [0.05, '0.05']]);
  assert.deepEqual(ticks(5, 5), [[5, '5']]);  // one value: a step of 1
});
