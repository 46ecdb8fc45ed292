/** What a job was called with, as the service keeps it: masking by key, cutting past a cap, a log's lines within its caps, a progress object's fraction. */
import { describe, expect, test } from 'bun:test';
import { appendedLog, cutText, CUT_MARK, PayloadRules, PAYLOAD_LIMIT_DEFAULTS, progressFractionOf, readPayloadText } from '../../actors/ingest/job-payload.ts';
import { DEFAULT_REDACT_KEYS, KeyRedactor, REDACTED } from '../../actors/ingest/redaction.ts';

describe('masking by key', () => {
  const redactor = new KeyRedactor(DEFAULT_REDACT_KEYS);

  test('a key matches when its letters and digits contain a pattern, whatever its case and separators', () => {
    for (const key of ['password', 'user_password', 'passwordHash', 'PASSWD', 'clientSecret', 'x-api-key', 'API_KEY', 'apikey', 'Authorization', 'set-cookie', 'creditCardNumber', 'card_number', 'accessToken', 'csrftoken']) {
      expect([key, redactor.matches(key)]).toEqual([key, true]);
    }
    for (const key of ['name', 'email', 'invoice_id', 'amount', 'passage', 'className', 'lessons', 'cards']) expect([key, redactor.matches(key)]).toEqual([key, false]);
  });

  test('a pattern of three characters or fewer matches a whole word only', () => {
    expect(['ssn', 'user_ssn', 'ssnLast4', 'SSN', 'className', 'lessnumbers'].map((key) => redactor.matches(key))).toEqual([true, true, true, true, false, false]);
  });

  test('the whole value under a matching key is masked, at any depth, in objects and arrays; digits (array indices) never match', () => {
    const value = { a: [{ token: { deep: 1 } }, 'token'], b: { secretKeys: ['x'], keep: { password: null } }, 0: 'zero' };
    expect(JSON.parse(redactor.json(value))).toEqual({ 0: 'zero', a: [{ token: REDACTED }, 'token'], b: { secretKeys: REDACTED, keep: { password: REDACTED } } });
    expect(redactor.json([1, 'password'])).toBe('[1,"password"]');
    expect(new KeyRedactor([]).json({ password: 'p' })).toBe('{"password":"p"}');
  });

  test('verdicts are remembered, but never more than a bound of keys', () => {
    const fresh = new KeyRedactor(['secret']);
    for (let i = 0; i < 25_000; i++) fresh.matches(`key${i}`);
    expect(fresh.matches('topSecret')).toBe(true);
    expect((fresh as unknown as { verdicts: Map<string, boolean> }).verdicts.size).toBeLessThanOrEqual(10_000);
  });
});

describe('texts past their caps', () => {
  test('a text within its cap is kept whole; past it, its head (never half a character) behind the mark and the whole size', () => {
    expect(cutText('{"a":1}', 7)).toBe('{"a":1}');
    const text = JSON.stringify({ name: 'Jürgen'.repeat(10) });
    const cut = cutText(text, 20);
    expect(cut.startsWith(`${CUT_MARK}${Buffer.byteLength(text)}${CUT_MARK}`)).toBe(true);
    const read = readPayloadText(cut);
    expect(read.cutFromBytes).toBe(Buffer.byteLength(text));
    expect(Buffer.byteLength(read.value as string)).toBeLessThanOrEqual(20);
    expect(text.startsWith(read.value as string)).toBe(true);
    expect(readPayloadText('[1,2]')).toEqual({ value: [1, 2], cutFromBytes: null });
  });

  test('the rules mask, then cut; log lines past 16,384 characters are cut with an ellipsis', () => {
    const rules = new PayloadRules({ ...PAYLOAD_LIMIT_DEFAULTS, redactKeys: ['token'] });
    expect(rules.text({ token: 'x'.repeat(100), id: 1 }, 64)).toBe('{"token":"[redacted]","id":1}');
    const [long, short] = JSON.parse(rules.logLines(['y'.repeat(20_000), 'ok'])) as string[];
    expect([long!.length, long!.endsWith('…'), short]).toEqual([16_385, true, 'ok']);
  });
});

describe("a job's log", () => {
  const caps = { logBytesMax: 100, logLinesMax: 8 };
  const lines = (...texts: string[]) => JSON.stringify(texts);

  test('lines are appended in order; nothing held takes the new lines as they are', () => {
    expect(appendedLog(null, 0, lines('a', 'b'), 2, caps)).toEqual({ text: '["a","b"]', lines: 2 });
    expect(appendedLog('["a","b"]', 2, lines('c'), 1, caps)).toEqual({ text: '["a","b","c"]', lines: 3 });
    expect(appendedLog('["a"]', 1, '[]', 0, caps)).toEqual({ text: '["a"]', lines: 1 });
  });

  test('past the line cap the oldest go, down to three quarters of it', () => {
    const held = lines('1', '2', '3', '4', '5', '6', '7', '8');
    expect(appendedLog(held, 8, lines('9'), 1, caps)).toEqual({ text: lines('4', '5', '6', '7', '8', '9'), lines: 6 });
  });

  test('past the byte cap the oldest go, down to three quarters of it; the newest line stays even when larger', () => {
    const held = lines('a'.repeat(40), 'b'.repeat(40));
    const appended = appendedLog(held, 2, lines('c'.repeat(30)), 1, caps);
    expect(JSON.parse(appended.text)).toEqual(['c'.repeat(30)]);
    expect(Buffer.byteLength(appended.text)).toBeLessThanOrEqual(75);
    expect(appendedLog(null, 0, lines('d'.repeat(200)), 1, caps)).toEqual({ text: lines('d'.repeat(200)), lines: 1 });
  });
});

describe("a progress object's fraction", () => {
  test('percent or percentage of 100, progress, fraction or ratio of 1, or a count done of a total; clamped; else none', () => {
    expect(progressFractionOf({ percent: 40 })).toBe(0.4);
    expect(progressFractionOf({ percentage: 250 })).toBe(1);
    expect(progressFractionOf({ progress: 0.3, percent: 90 })).toBe(0.9);
    expect(progressFractionOf({ fraction: -1 })).toBe(0);
    expect(progressFractionOf({ ratio: 0.5 })).toBe(0.5);
    expect(progressFractionOf({ done: 3, total: 4 })).toBe(0.75);
    expect(progressFractionOf({ processed: 10, total: 0 })).toBeUndefined();
    expect(progressFractionOf({ current: 5 })).toBeUndefined();
    expect(progressFractionOf({ percent: '40' })).toBeUndefined();
    expect(progressFractionOf({ stage: 'upload' })).toBeUndefined();
  });
});
