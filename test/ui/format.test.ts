import { describe, expect, test } from 'bun:test';
import { ApiError, envelopeError, messageOf, queryString } from '../../ui/src/api/client.ts';
import { attemptText, retryLimitText } from '../../ui/src/lib/attempts.ts';
import { percentText, progressNote } from '../../ui/src/lib/progress.ts';
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

describe('attempts in words', () => {
  test('a run added by hand is said beside the attempt, never as "attempt 3 of 2"', () => {
    expect(attemptText({ attempt: 3, maxRetries: 1, manualRetries: 1 })).toBe('3 (1 run added by hand)');
    expect(attemptText({ attempt: 4, maxRetries: 0, manualRetries: 3 })).toBe('4 (3 runs added by hand)');
    expect(attemptText({ attempt: 2, maxRetries: 1, manualRetries: 0 })).toBe('2');
  });
  test("the retry limit is the job system's, in retries and attempts", () => {
    expect(retryLimitText(1)).toBe('1 retry (2 attempts)');
    expect(retryLimitText(3)).toBe('3 retries (4 attempts)');
    expect(retryLimitText(0)).toBe('none (1 attempt)');
    expect(retryLimitText(null)).toBeNull();
  });
});

describe('progress in words', () => {
  test('a fraction as a whole percentage; none without one', () => {
    expect([percentText(0), percentText(0.354), percentText(1), percentText(null)]).toEqual(['0 %', '35 %', '100 %', null]);
  });
  test("a progress object's stage, step, status or message, in that order, when it is text or a number", () => {
    expect(progressNote({ percent: 50, stage: 'upload', message: 'x' })).toBe('upload');
    expect(progressNote({ step: 3 })).toBe('3');
    expect(progressNote({ status: { nested: true }, message: 'half way' })).toBe('half way');
    expect([progressNote({ percent: 5 }), progressNote(null), progressNote([1]), progressNote('text')]).toEqual([null, null, null, null]);
  });
});

describe('the queue chart', () => {
  test('its y axis tops out at the largest count or just above, a number whose half is whole', () => {
    expect([0, 1, 2, 3, 5, 6, 7, 11, 45, 150, 999, 1000].map(axisMax)).toEqual([2, 2, 2, 4, 6, 6, 10, 20, 60, 200, 1000, 1000]);
  });
});
