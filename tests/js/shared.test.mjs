// shared.js: colours, their lookup table, label thinning, title wrapping and the copy's templates filled (as
// explorer.js and matrix.js get them).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { delivered } from './delivered.mjs';

const { rgbOf, lut, labelEvery, wrap, fill, pick } = await delivered(
  'matrix/matrix.js', ['rgbOf', 'lut', 'labelEvery', 'wrap', 'fill', 'pick']);

// figures.base LIGHT.diverging, at even positions from 0 to 1 (figures.base.colour_scale), as the payload sends it.
const DIVERGING = ['#0c379b', '#325ab3', '#597bc5', '#859dd2', '#b4c0de', '#eae7e8', '#fba688', '#ef6e40', '#d23e02',
                   '#9f2d01', '#6e1c00'].map((c, i) => [i / 10, c]);
const at = (table, i) => [...table.subarray(3 * i, 3 * i + 3)];

test('rgbOf reads #rrggbb and plotly rgb() colours', () => {
  assert.deepEqual(rgbOf('#3b5bdb'), [59, 91, 219]);
  assert.deepEqual(rgbOf('rgb(12, 34, 56)'), [12, 34, 56]);
  assert.deepEqual(rgbOf('rgba(1, 2, 3, 0.5)'), [1, 2, 3]);
});

test('lut interpolates linearly between two stops', () => {
  const grey = lut([[0, '#000000'], [1, '#ffffff']]);
  assert.equal(grey.length, 256 * 3);
  for (const i of [0, 1, 100, 254, 255]) assert.deepEqual(at(grey, i), [i, i, i]);
});

test('lut of the diverging scale: its end stops at 0 and 1, a stop exactly where t meets it', () => {
  const table = lut(DIVERGING);
  assert.deepEqual(at(table, 0), [12, 55, 155]);     // #0c379b
  assert.deepEqual(at(table, 255), [110, 28, 0]);    // #6e1c00
  assert.deepEqual(at(table, 51), [89, 123, 197]);   // t = 0.2: #597bc5
  assert.deepEqual(at(table, 153), [251, 166, 136]); // t = 0.6: #fba688
});

test('lut at 0.5: the entry a value of 0 takes, round(0.5 × 255) = 128, just past the centre stop', () => {
  // t = 128/255, 0.0196 of the way from #eae7e8 (234, 231, 232) at 0.5 to #fba688 (251, 166, 136) at 0.6
  assert.deepEqual(at(lut(DIVERGING), 128), [234, 230, 230]);
});

test('labelEvery: every label while cells have room, else every k-th', () => {
  assert.equal(labelEvery(20, 13), 1);
  assert.equal(labelEvery(13, 13), 1);
  assert.equal(labelEvery(6.5, 13), 2);
  assert.equal(labelEvery(5, 13), 3);
  assert.equal(labelEvery(0.5, 14), 28);
});

test('wrap breaks a title at spaces to the width, bold about 8% wider', () => {
  const measurer = { measure: (text, size) => text.length * size / 2 };  // 5 px a character at 10 px
  assert.deepEqual(wrap(measurer, 'one two three four', 40, 10), ['one two', 'three', 'four']);
  assert.deepEqual(wrap(measurer, 'one two three four', 36, 10), ['one two', 'three', 'four']);  // 35 px fits
  assert.deepEqual(wrap(measurer, 'one two three four', 36, 10, true), ['one', 'two', 'three', 'four']);  // 37.8 px
  assert.deepEqual(wrap(measurer, 'extraordinarily long', 40, 10), ['extraordinarily', 'long']);  // a long word alone
  assert.deepEqual(wrap(measurer, '', 40, 10), []);
});

test('fill puts each value in its placeholder, as text, every time it is named', () => {
  assert.equal(fill('head {head} of 12 · query {query} {token}', { head: 3, query: 1, token: '“The”' }),
               'head 3 of 12 · query 1 “The”');
  assert.equal(fill('{n}×{n} block', { n: 4 }), '4×4 block');
  assert.equal(fill('weight = {w}', { w: 0 }), 'weight = 0');  // a falsy value is still a value
  assert.equal(fill('no placeholder', { head: 1 }), 'no placeholder');
});

test('fill reads a template once: a value that holds braces or $ stays as written', () => {
  assert.equal(fill('query {token} ({query})', { token: '{query}', query: 2 }), 'query {query} (2)');
  assert.equal(fill('key {token}', { token: "$& $1 $'" }), "key $& $1 $'");
});

test('fill leaves a placeholder it has no value for as it is (a gap shows, nothing breaks)', () => {
  assert.equal(fill('head {head} · {name}', { head: 2 }), 'head 2 · {name}');
  assert.equal(fill('{toString} {constructor}', {}), '{toString} {constructor}');  // not the object's own methods
});

test('pick takes the form for one for a count of 1, else the form for many', () => {
  const forms = { one: '{count} query in the set', many: '{count} queries in the set' };
  assert.equal(pick(forms, 1), forms.one);
  assert.equal(pick(forms, 2), forms.many);
  assert.equal(pick(forms, 0), forms.many);
  assert.equal(fill(pick(forms, 3), { count: 3 }), '3 queries in the set');
});
