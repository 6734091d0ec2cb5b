// explorer.js's lines view, its pure geometry: where a line starts and ends, and its opacity at each stage.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { delivered } from './delivered.mjs';

const { lineOpacity, lineGeometry, linesSummary, slotY } = await delivered(
  'explorer/explorer.js', ['lineOpacity', 'lineGeometry', 'linesSummary', 'slotY']);

test('lineOpacity: a weight or share is its own opacity; a blocked pair has no line, except before the mask', () => {
  assert.equal(lineOpacity('weights', 0.375, false), 0.375);
  assert.equal(lineOpacity('contributions', 0.5, false), 0.5);
  assert.equal(lineOpacity('weights', 0.9, true), 0);
  assert.equal(lineOpacity('scaled', -3, true, 4), 0);
  assert.equal(lineOpacity('raw', -3, true, 4), 0.75);       // |score| ÷ the head's largest |score|
  assert.equal(lineOpacity('scaled', Number.NEGATIVE_INFINITY, false, 4), 0);
  assert.equal(lineOpacity('mask', 0), 1);                   // open
  assert.equal(lineOpacity('mask', 1), 0);                   // blocked
  assert.equal(lineOpacity('mask', 0.25), 0.75);             // a pooled block, a quarter of it blocked
});

test('lineGeometry: a line from each query on the left to each key on the right, at the middle of their slots', () => {
  const head = { head: 2, data: Float32Array.of(0.25, 0.75, 1, 0), blocked: null, rows: 2, cols: 2, top: 1 };
  const lines = lineGeometry('weights', [head], { x1: 10, x2: 110, y0: 50, querySlot: 20, keySlot: 10 });
  assert.deepEqual(lines.map(l => [l.query, l.key, l.y1, l.y2, l.opacity]),
                   [[0, 0, 60, 55, 0.25], [0, 1, 60, 65, 0.75], [1, 0, 80, 55, 1]]);  // a weight of 0: no line
  assert.ok(lines.every(l => l.x1 === 10 && l.x2 === 110 && l.head === 2));
  assert.equal(slotY(3, 50, 20), 120);
});

test('lineGeometry: blocked pairs have no line; a focus keeps one token\'s lines; heads are drawn together', () => {
  const a = { head: 0, data: Float32Array.of(1, 0, 0.5, 0.5), blocked: Uint8Array.of(0, 1, 0, 0), rows: 2, cols: 2 };
  const b = { ...a, head: 1, data: Float32Array.of(0.9, 0.1, 0.2, 0.8), blocked: null };
  const at = { x1: 0, x2: 1, y0: 0, querySlot: 1, keySlot: 1 };
  assert.equal(lineGeometry('weights', [a], at).length, 3);
  const key1 = lineGeometry('weights', [a, b], { ...at, focus: { side: 'key', index: 1 } });
  assert.deepEqual(key1.map(l => [l.head, l.query, l.key]), [[0, 1, 1], [1, 0, 1], [1, 1, 1]]);
  const query0 = lineGeometry('weights', [a, b], { ...at, focus: { side: 'query', index: 0 } });
  assert.deepEqual(linesSummary(query0), { count: 3, heads: [1, 2], queries: [1], keys: [1, 2],
                                           strongest: { head: 1, query: 1, key: 1, opacity: 1 } });
  assert.deepEqual(linesSummary([]), { count: 0, heads: [], queries: [], keys: [], strongest: null });
});
