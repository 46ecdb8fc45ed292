/**
 * One copy of what the agents may send: agents/ingest-limits.json against the service's
 * ingest schema, so the file cannot drift from the service. Each agent's own tests hold its
 * constants against the file and run the shared bounding cases (agents/bounding-cases.json):
 * `agents/bullmq/test/shared-limits.test.js` (node), `agents/celery/tests/test_limits.py`
 * (pytest), `agents/sidekiq/test/unit/limits_test.rb` (minitest). Here also: any value at all,
 * once bounded by the BullMQ agent, is taken by the service's own check of extensions.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIELD_LIMITS } from '../../actors/ingest/event-schema.ts';
import { JSON_OBJECT_BYTES_MAX, JSON_OBJECT_DEPTH_MAX, jsonObjectProblem } from '../../actors/ingest/json-object-limits.ts';
import { INGEST_BODY_BYTES_MAX, INGEST_EVENTS_MAX } from '../../src/routes/ingest.ts';
import { JSON_SHAPE_LIMITS } from '../../src/http/json-shape.ts';
import { LOG_LINE_CHARS_MAX, LOG_LINES_PER_EVENT_MAX, PAYLOAD_LIMIT_DEFAULTS, PROGRESS_DATA_BYTES_MAX } from '../../actors/ingest/job-payload.ts';
import { DEFAULT_REDACT_KEYS, REDACTED } from '../../actors/ingest/redaction.ts';
import { boundJson } from '../../agents/bullmq/src/bound-json.js';

const AGENTS = join(import.meta.dir, '..', '..', 'agents');
const limits = JSON.parse(readFileSync(join(AGENTS, 'ingest-limits.json'), 'utf8'));

describe('agents/ingest-limits.json', () => {
  test("its field limits are the service's ingest schema's", () => {
    const { queuesPerWorkerMax, ...chars } = limits.fields;
    const { countMax: _count, queuesPerWorkerMax: serviceQueues, ...serviceChars } = FIELD_LIMITS;
    expect(chars).toEqual(serviceChars);
    expect(queuesPerWorkerMax).toBe(serviceQueues);
  });

  test("its free-form object and request limits are the service's", () => {
    expect(limits.freeFormObject.bytesMax).toBe(JSON_OBJECT_BYTES_MAX);
    expect(limits.freeFormObject.depthMax).toBe(JSON_OBJECT_DEPTH_MAX);
    for (const key of limits.freeFormObject.forbiddenKeys) expect(jsonObjectProblem(JSON.parse(`{"${key}":1}`))).toContain(key);
    expect(limits.request).toEqual({ eventsMax: INGEST_EVENTS_MAX, bodyBytesMax: INGEST_BODY_BYTES_MAX });
  });

  test("the agents' own bounds are within the service's, with room for another serializer's bytes", () => {
    const bounds = limits.agentBounds;
    expect(bounds.depthMax).toBeLessThanOrEqual(JSON_OBJECT_DEPTH_MAX);
    expect(bounds.bytesMax).toBeLessThan(JSON_OBJECT_BYTES_MAX - 4096);
    // the mark must fit the shortest limit it ends
    expect(bounds.truncatedMark.length).toBeLessThan(Math.min(bounds.keyChars, bounds.stringChars, ...Object.values(limits.fields as Record<string, number>)));
    // every value of a bounded object, escaped at 6 bytes a character, fits the byte bound many times over
    expect(bounds.objectKeysMax * bounds.keyChars * 6).toBeLessThan(bounds.bytesMax * 2);
    expect(4 + bounds.depthMax).toBeLessThan(JSON_SHAPE_LIMITS.depthMax);
  });

  test("its job payload limits are the service's defaults, and its default key patterns the service's", () => {
    const { redactKeys, redacted, ...sizes } = limits.jobPayload;
    expect(sizes).toEqual({
      argsBytesMax: PAYLOAD_LIMIT_DEFAULTS.argsBytesMax,
      resultBytesMax: PAYLOAD_LIMIT_DEFAULTS.resultBytesMax,
      progressBytesMax: PROGRESS_DATA_BYTES_MAX,
      logBytesMax: PAYLOAD_LIMIT_DEFAULTS.logBytesMax,
      logLinesMax: PAYLOAD_LIMIT_DEFAULTS.logLinesMax,
      logLinesPerEventMax: LOG_LINES_PER_EVENT_MAX,
      logLineCharsMax: LOG_LINE_CHARS_MAX,
    });
    expect(redactKeys).toEqual([...DEFAULT_REDACT_KEYS]);
    expect(redactKeys).toEqual([...PAYLOAD_LIMIT_DEFAULTS.redactKeys]);
    expect(redacted).toBe(REDACTED);
  });

  test("the agents' payload bounds keep a job's values whole at the service: within its caps, its levels and its lines", () => {
    const bounds = limits.payloadBounds;
    const service = limits.jobPayload;
    // bytes with room for another serializer's figures; jobwatch would keep a cut head past its caps
    expect(bounds.bytesMax).toBeLessThan(Math.min(service.argsBytesMax, service.resultBytesMax) - 4096);
    expect(bounds.progressBytesMax).toBeLessThan(service.progressBytesMax - 1024);
    expect(bounds.logLinesPerEventMax).toBeLessThanOrEqual(service.logLinesPerEventMax);
    expect(bounds.logLineChars).toBeLessThanOrEqual(service.logLineCharsMax);
    expect(bounds.logBytesPerEventMax).toBeLessThanOrEqual(service.logBytesMax);
    // body, events, event, job, then the value's own levels
    expect(4 + bounds.depthMax).toBeLessThan(JSON_SHAPE_LIMITS.depthMax);
    expect(bounds.objectKeysMax).toBeLessThan(JSON_SHAPE_LIMITS.objectMembersMax);
    expect(bounds.arrayItemsMax).toBeLessThan(JSON_SHAPE_LIMITS.arrayElementsMax);
    // a progress object is bounded with agentBounds' levels: jobwatch checks it as free-form JSON
    expect(limits.agentBounds.depthMax).toBeLessThanOrEqual(JSON_OBJECT_DEPTH_MAX);
  });
});

describe("the BullMQ agent's bounding rule, against the service's check", () => {
  test('the worst an app can put in a value, bounded, is taken by the service', () => {
    const nasty = '\u0000"\\\u2028😀'.repeat(2000);
    let deep: unknown = 'bottom';
    for (let level = 0; level < 5000; level++) deep = level % 2 === 0 ? [deep] : { [`k${level}`]: deep };
    const wide = Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`${nasty.slice(0, 400)}${index}`, Array.from({ length: 300 }, () => nasty)]));
    for (const value of [wide, { deep }, { __proto__: 1, list: Array.from({ length: 100_000 }, (_, index) => index) }]) {
      const bounded = boundJson(value);
      expect(jsonObjectProblem(bounded)).toBeNull();
      expect(Buffer.byteLength(JSON.stringify(bounded))).toBeLessThanOrEqual(limits.agentBounds.bytesMax);
    }
  });

  test('any JSON value, bounded, is taken by the service', () => {
    const deepValue = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.jsonValue({ maxDepth: 2 }), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string(), tie('value'), { maxKeys: 3 })),
    })).value;
    // long strings of any code units (lone surrogates, controls), made by repeating a short one: generating them whole is slow
    const longText = fc.tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }), fc.integer({ min: 100, max: 400 })).map(([text, times]) => text.repeat(times));
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'prototype')), fc.oneof(deepValue, longText)), (value) => {
        const bounded = boundJson(value);
        expect(jsonObjectProblem(bounded)).toBeNull();
      }),
      { numRuns: 150 },
    );
  }, 30_000);
});
