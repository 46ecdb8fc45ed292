import { describe, expect, test } from 'bun:test';
import { ApiError, envelopeError, messageOf, queryString } from '../../ui/src/api/client.ts';
import { relativeTime, shortDuration } from '../../ui/src/lib/time.ts';
import { axisMax } from '../../ui/src/lib/axis.ts';

describe('times', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z');
  test('relative: now within a second either way, then two units at most', () => {
    expect(relativeTime('2026-11-21T09:59:59.400Z', now)).toBe('now');
    expect(relativeTime('2026-11-21T10:00:00.600Z', now)).toBe('now');
    expect(relativeTime('2026-11-21T09:59:55.500Z', now)).toBe('4.5 s ago');
    expect(relativeTime('2026-11-21T09:56:55.000Z', now)).toBe('3 min 5 s ago');
    expect(relativeTime('2026-11-21T09:13:00.000Z', now)).toBe('47 min ago');
    expect(relativeTime('2026-11-19T07:00:00.000Z', now)).toBe('2 d 3 h ago');
    expect(relativeTime('2026-11-21T12:30:00.000Z', now)).toBe('in 2 h 30 min');
  });
  test('durations', () => {
    expect(shortDuration(0)).toBe('0 ms');
    expect(shortDuration(850)).toBe('850 ms');
    expect(shortDuration(1200)).toBe('1.2 s');
    expect(shortDuration(61_000)).toBe('1 min 1 s');
    expect(shortDuration(3_600_000)).toBe('1 h');
  });
});

describe('API errors in words', () => {
  test("the envelope's message, with field details", () => {
    const error = envelopeError(400, { error: { code: 'VALIDATION_ERROR', message: 'request body failed schema validation', docs_url: 'x', details: { name: ['is required'] } } });
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(messageOf(error)).toBe('request body failed schema validation (name: is required)');
  });
  test('a body that is not the envelope still says what happened', () => {
    expect(messageOf(envelopeError(502, null))).toBe('The service answered HTTP 502 without an explanation.');
  });
  test('query strings carry only the set values', () => {
    expect(queryString({ state: 'failed', search: '', queue: undefined, limit: 50, cursor: null })).toBe('?state=failed&limit=50');
    expect(queryString({})).toBe('');
  });
});

describe('the queue chart', () => {
  test('its y axis tops out at the largest count or just above, a number whose half is whole', () => {
    expect([0, 1, 2, 3, 5, 6, 7, 11, 45, 150, 999, 1000].map(axisMax)).toEqual([2, 2, 2, 4, 6, 6, 10, 20, 60, 200, 1000, 1000]);
  });
});
