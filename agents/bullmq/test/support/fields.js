/**
 * `assertFields(actual, expected)`: every field `expected` names has that value in
 * `actual` (objects compared field by field, recursively; other fields of `actual` are
 * not looked at), and a RegExp stands for any string it matches. Node 20's assert has no
 * partial comparison of its own.
 */
import assert from 'node:assert/strict';

/** @param {unknown} actual @param {unknown} expected @param {string} [path] */
export function assertFields(actual, expected, path = 'value') {
  if (expected instanceof RegExp) {
    assert.equal(typeof actual, 'string', `${path} should be a string matching ${expected}`);
    assert.match(/** @type {string} */ (actual), expected, `${path} should match ${expected}`);
    return;
  }
  if (expected === null || typeof expected !== 'object' || Array.isArray(expected)) {
    assert.deepEqual(actual, expected, `${path} differs`);
    return;
  }
  assert.ok(actual !== null && typeof actual === 'object', `${path} should be an object, is ${JSON.stringify(actual)}`);
  for (const [key, value] of Object.entries(expected)) assertFields(/** @type {Record<string, unknown>} */ (actual)[key], value, `${path}.${key}`);
}
