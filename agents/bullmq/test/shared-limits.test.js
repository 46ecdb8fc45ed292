/**
 * The agent's limits are agents/ingest-limits.json's (test/agents/agent-ingest-limits.test.ts
 * holds that file against the service's ingest schema; the Celery and Sidekiq agents' tests
 * hold their own constants against it too), and its bounding rule passes the cases every
 * agent runs (agents/bounding-cases.json).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { boundJson, boundPayload } from '../src/bound-json.js';
import * as limits from '../src/limits.js';
import { DEFAULT_REDACT_KEYS, REDACTED, Redactor } from '../src/redaction.js';

/** @param {string} name */
const shared = (name) => JSON.parse(readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8'));
const fixture = shared('ingest-limits.json');
const cases = shared('bounding-cases.json');

describe("the agent's limits", () => {
  test("its field and request limits and the keys it leaves out are the shared fixture's", () => {
    assert.deepEqual(
      {
        externalIdChars: limits.EXTERNAL_ID_CHARS,
        nameChars: limits.NAME_CHARS,
        queueChars: limits.QUEUE_CHARS,
        workerIdChars: limits.WORKER_ID_CHARS,
        hostnameChars: limits.HOSTNAME_CHARS,
        errorChars: limits.ERROR_CHARS,
        stacktraceChars: limits.STACKTRACE_CHARS,
        queuesPerWorkerMax: limits.QUEUES_PER_WORKER_MAX,
      },
      fixture.fields,
    );
    assert.deepEqual(limits.FORBIDDEN_KEYS, fixture.freeFormObject.forbiddenKeys);
    assert.deepEqual({ eventsMax: limits.INGEST_EVENTS_MAX, bodyBytesMax: limits.INGEST_BODY_BYTES_MAX }, fixture.request);
  });

  test("its own bounds and truncation mark are the shared fixture's", () => {
    assert.deepEqual({ ...limits.AGENT_BOUNDS, truncatedMark: limits.TRUNCATED_MARK }, fixture.agentBounds);
  });

  test("its bounds of a job's arguments, result, progress and log lines, and its default key patterns, are the shared fixture's", () => {
    assert.deepEqual(
      {
        ...limits.PAYLOAD_BOUNDS,
        progressBytesMax: limits.PROGRESS_BYTES_MAX,
        logLinesPerEventMax: limits.LOG_LINES_PER_EVENT_MAX,
        logBytesPerEventMax: limits.LOG_BYTES_PER_EVENT_MAX,
        logLineChars: limits.LOG_LINE_CHARS,
      },
      fixture.payloadBounds,
    );
    assert.deepEqual([...DEFAULT_REDACT_KEYS], fixture.jobPayload.redactKeys);
    assert.equal(REDACTED, fixture.jobPayload.redacted);
  });
});

describe('the bounding rule', () => {
  for (const each of cases.cases) {
    test(`shared case: ${each.name}`, () => {
      assert.deepEqual(boundJson(each.input, { ...cases.bounds, ...(each.bounds ?? {}) }), each.expected);
    });
  }

  for (const each of cases.payloadCases) {
    test(`shared case, a job's value: ${each.name}`, () => {
      assert.deepEqual(boundPayload(each.input, { ...cases.payloadBounds, ...(each.bounds ?? {}) }, new Redactor()), each.expected);
    });
  }

  test('strings cut by cutMarked: the shared cases', () => {
    for (const each of cases.cutMarked) assert.equal(limits.cutMarked(each.text, each.limit), each.expected, JSON.stringify(each));
  });
});
