'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { slugify, unique } = require('../src/slug');

test('lowercases and joins words', () => {
  assert.strictEqual(slugify('Hello World'), 'hello-world');
});

test('drops accents', () => {
  assert.strictEqual(slugify('Crème Brûlée'), 'creme-brulee');
});

test('custom separator', () => {
  assert.strictEqual(slugify('a b c', { separator: '_' }), 'a_b_c');
});

test('limits the length', () => {
  assert.strictEqual(slugify('abc def ghi', { maxLength: 6 }), 'abc-de');
});

test('unique appends a counter', () => {
  assert.strictEqual(unique('post', new Set(['post', 'post-2'])), 'post-3');
});
