import { describe, expect, test } from 'bun:test';
import { CursorError, decodeCursor, encodeCursor, type CursorState } from '../../actors/jobs/cursor.ts';

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

function decodeError(cursor: string, sortBy = 'createdAt', sortOrder: 'asc' | 'desc' = 'desc'): CursorError {
  try {
    decodeCursor(cursor, sortBy, sortOrder);
  } catch (error) {
    if (error instanceof CursorError) return error;
    throw error;
  }
  throw new Error(`cursor ${cursor} decoded`);
}

describe('cursor round trip', () => {
  const states: CursorState[] = [
    { sortBy: 'createdAt', sortOrder: 'desc', key: 1_717_171_717_171, id: '0190b7a2-5d3c-7cc1-9a52-3f4b1e2d6a10' },
    { sortBy: 'durationMs', sortOrder: 'asc', key: -0.125, id: 'a' },
    { sortBy: 'name', sortOrder: 'asc', key: 'emails.send "weekly" / ünïcödé \u{1F600}', id: 'b' },
    { sortBy: 'name', sortOrder: 'desc', key: 'lone \ud800 surrogate', id: 'c' },
    { sortBy: 'completedAt', sortOrder: 'desc', key: null, id: 'd' },
    { sortBy: 'name', sortOrder: 'asc', key: '', id: '' },
  ];

  for (const state of states) {
    test(`given ${JSON.stringify(state)}, when encoded and decoded for the same sort, then the position comes back`, () => {
      const cursor = encodeCursor(state);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor, state.sortBy, state.sortOrder)).toEqual({ key: state.key, id: state.id });
    });
  }

  test('given a non-finite number key, when encoded, then it is refused rather than turned into null', () => {
    for (const key of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => encodeCursor({ sortBy: 'durationMs', sortOrder: 'asc', key, id: 'a' })).toThrow('finite');
    }
  });
});

describe('cursor for another sort', () => {
  const cursor = encodeCursor({ sortBy: 'name', sortOrder: 'asc', key: 'x', id: 'a' });

  test('given a cursor issued for another sortBy, when decoded, then it is refused naming the sort it was issued for', () => {
    expect(decodeError(cursor, 'createdAt', 'asc').message).toBe('cursor was issued for sortBy=name&sortOrder=asc');
  });

  test('given a cursor issued for the other sortOrder, when decoded, then it is refused', () => {
    expect(decodeError(cursor, 'name', 'desc').message).toBe('cursor was issued for sortBy=name&sortOrder=asc');
  });
});

/**
 * The same bytes spelled differently: when the length is not a multiple of 4, the last
 * character carries unused low bits, which a lenient decoder ignores.
 */
function withTrailingBitSet(cursor: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  if (cursor.length % 4 === 0) throw new Error('test cursor has no unused bits');
  const last = alphabet.indexOf(cursor.slice(-1));
  const spelled = cursor.slice(0, -1) + alphabet.charAt(last | 1);
  if (!Buffer.from(spelled, 'base64url').equals(Buffer.from(cursor, 'base64url')) || spelled === cursor) {
    throw new Error('test cursor was not respelled');
  }
  return spelled;
}

describe('malformed cursors', () => {
  const valid = { v: 1, s: 'createdAt', o: 'desc', k: 5, i: 'ab' };
  const malformed: [string, string][] = [
    ['the empty string', ''],
    ['characters outside base64url', 'eyJ2IjoxfQ=='],
    ['standard base64 characters', `${base64url(JSON.stringify(valid))}+/`],
    ['a whitespace in the middle', `${base64url(JSON.stringify(valid)).slice(0, 8)} ${base64url(JSON.stringify(valid)).slice(8)}`],
    ['a length no base64 can have', 'abcde'],
    ['non-canonical trailing bits', withTrailingBitSet(base64url(JSON.stringify(valid)))],
    ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x7b, 0x7d]).toString('base64url')],
    ['text that is not JSON', base64url('createdAt:5:a')],
    ['truncated JSON', base64url(JSON.stringify(valid)).slice(0, 20)],
    ['a JSON array', base64url(JSON.stringify([1, 'createdAt', 'desc', 5, 'ab']))],
    ['JSON null', base64url('null')],
    ['a JSON string', base64url('"createdAt"')],
    ['another format version', base64url(JSON.stringify({ ...valid, v: 2 }))],
    ['no format version', base64url(JSON.stringify({ ...valid, v: undefined }))],
    ['a sortBy that is not a string', base64url(JSON.stringify({ ...valid, s: 5 }))],
    ['an unknown sortOrder', base64url(JSON.stringify({ ...valid, o: 'ASC' }))],
    ['an object as key', base64url(JSON.stringify({ ...valid, k: { $gt: 1 } }))],
    ['a boolean as key', base64url(JSON.stringify({ ...valid, k: true }))],
    ['no key at all', base64url(JSON.stringify({ ...valid, k: undefined }))],
    ['an overflowing number as key', base64url('{"v":1,"s":"createdAt","o":"desc","k":1e999,"i":"ab"}')],
    ['a number as id', base64url(JSON.stringify({ ...valid, i: 7 }))],
    ['no id', base64url(JSON.stringify({ ...valid, i: undefined }))],
  ];

  for (const [what, cursor] of malformed) {
    test(`given a cursor with ${what}, when decoded, then it is refused as malformed`, () => {
      expect(decodeError(cursor).message).toBe('cursor is malformed');
    });
  }

  test('given the valid form of those cursors, when decoded, then it is accepted (the cases above fail for their own reason)', () => {
    expect(decodeCursor(base64url(JSON.stringify(valid)), 'createdAt', 'desc')).toEqual({ key: 5, id: 'ab' });
  });

  test('given a malformed cursor, when refused, then the error is a CursorError by name too', () => {
    expect(decodeError('!').name).toBe('CursorError');
  });
});
