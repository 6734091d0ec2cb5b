// explorer.js's pure helpers: the payload's layout, numbers as tooltips write them, token names, pooled labels.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { delivered } from './delivered.mjs';

const { readHeader, decode, digits, exact, said, mean6, quoted, short, esc, blockRange } = await delivered(
  'explorer/explorer.js',
  ['readHeader', 'decode', 'digits', 'exact', 'said', 'mean6', 'quoted', 'short', 'esc', 'blockRange']);

// Bytes laid out as payload.py lays them out: MHAX, the header's length (uint32 LE), the header, zero padding to a
// multiple of 8, then the arrays at their offsets from there.
function payload(header, arrays) {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const start = Math.ceil((8 + json.length) / 8) * 8;
  const bytes = new Uint8Array(start + arrays.byteLength);
  bytes.set(new TextEncoder().encode('MHAX'));
  new DataView(bytes.buffer).setUint32(4, json.length, true);
  bytes.set(json, 8);
  bytes.set(new Uint8Array(arrays.buffer), start);
  return bytes;
}

test('decode reads the header and views each array at its offset, with its shape and dtype', () => {
  const header = { id: 'x', arrays: { '1/weights': { dtype: '<f4', shape: [1, 2, 2], offset: 0 },
                                      '1/mask': { dtype: '|u1', shape: [1, 2, 2], offset: 16 } } };
  const arrays = new Uint8Array(24);
  new Float32Array(arrays.buffer, 0, 4).set([1, 0, 0.25, 0.75]);
  arrays.set([0, 1, 0, 0], 16);
  const bytes = payload(header, arrays);
  const inside = new Uint8Array(bytes.length + 3);  // not at offset 0 of its buffer, as a message's bytes may be
  inside.set(bytes, 3);
  const { header: read, arrays: out } = decode(inside.subarray(3));
  assert.equal(read.id, 'x');
  assert.deepEqual([...out['1/weights'].data], [1, 0, 0.25, 0.75]);
  assert.deepEqual(out['1/weights'].shape, [1, 2, 2]);
  assert.deepEqual([...out['1/mask'].data], [0, 1, 0, 0]);
  assert.equal(out['1/mask'].dtype, '|u1');
});

test('readHeader refuses bytes that are not a payload', () => {
  assert.throws(() => readHeader(new TextEncoder().encode('PNG\0\0\0\0\0')), /not an explorer payload/);
});

test('digits: the fewest significant digits that read back as the same float32 or float64', () => {
  assert.equal(digits(0.5, '<f8'), 1);
  assert.equal(digits(0.1, '<f8'), 1);
  assert.equal(digits(Math.fround(0.1), '<f4'), 1);   // as float32 "0.1" is that value
  assert.equal(digits(Math.fround(0.1), '<f8'), 17);  // as float64 it is 0.10000000149011612
  assert.equal(exact(Math.fround(0.1), '<f4'), '0.1');
  assert.equal(exact(1 / 3, '<f8'), '0.3333333333333333');
});

test('said: decimals in full, small and large numbers as a power of ten', () => {
  assert.deepEqual(said('weight', 0.25, '<f8'), ['weight = 0.25']);
  assert.deepEqual(said('weight', 0, '<f8'), ['weight = 0']);
  assert.deepEqual(said('score', -2e-7, '<f8'), ['score = -2 × 10⁻⁷']);
  assert.deepEqual(said('w', 2.0797269e-7, '<f8'), ['w ≈ 2.08 × 10⁻⁷', '(exactly 2.0797269 × 10⁻⁷)']);
  assert.deepEqual(said('v', 1e6, '<f8'), ['v = 1 × 10⁶']);
});

test('mean6: 6 significant digits, a power of ten outside 0.0001 .. a million', () => {
  assert.equal(mean6(1 / 3), '0.333333');
  assert.equal(mean6(123456789), '1.23457 × 10⁸');
  assert.equal(mean6(0.00001234567), '1.23457 × 10⁻⁵');
  assert.equal(mean6(2), '2');
});

test('quoted and short cut a long token with an ellipsis', () => {
  assert.equal(quoted('cat'), '“cat”');
  assert.equal(quoted('a'.repeat(28)), `“${'a'.repeat(28)}”`);
  assert.equal(quoted('a'.repeat(29)), `“${'a'.repeat(27)}…”`);
  assert.equal(short('a'.repeat(18)), 'a'.repeat(18));
  assert.equal(short('a'.repeat(19)), `${'a'.repeat(17)}…`);
});

test('esc: a token is text in a saved SVG, never markup', () => {
  assert.equal(esc(`<b class="x">&'`), '&lt;b class=&quot;x&quot;&gt;&amp;&#39;');
});

test('blockRange: the items of each block of a pooled axis, the last one shorter', () => {
  // 10 queries in blocks of 4: 1-4, 5-8, 9-10
  assert.deepEqual([0, 1, 2].map(i => blockRange(i, 4, 10)), ['1–4', '5–8', '9–10']);
  assert.equal(blockRange(0, 1, 3), '1–1');
  assert.equal(blockRange(3, 128, 512), '385–512');
});
