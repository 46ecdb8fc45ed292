/**
 * One set of masking cases (agents/redaction-cases.json) for the three agents and the
 * service: here through the BullMQ agent's rule and the service's own, both its masking
 * component and a whole ingest read back in the job detail (the Celery and Sidekiq agents'
 * suites run the same cases), so the agents mask exactly what the service would, and can
 * never drift from it or from each other.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PAYLOAD_LIMIT_DEFAULTS, PayloadRules } from '../../actors/ingest/job-payload.ts';
import { KeyRedactor } from '../../actors/ingest/redaction.ts';
import { boundPayload } from '../../agents/bullmq/src/bound-json.js';
import { PAYLOAD_BOUNDS } from '../../agents/bullmq/src/limits.js';
import { Redactor } from '../../agents/bullmq/src/redaction.js';
import { jobEvent } from '../support/events.ts';
import { testApp, T0 } from '../support/test-app.ts';

const cases = JSON.parse(readFileSync(join(import.meta.dir, '..', '..', 'agents', 'redaction-cases.json'), 'utf8'));
const limits = JSON.parse(readFileSync(join(import.meta.dir, '..', '..', 'agents', 'ingest-limits.json'), 'utf8'));
/** Every value case, under the default patterns and under its own. */
const valueCases: Array<{ name: string; patterns: string[]; input: unknown; expected: unknown }> = [
  ...cases.values.map((each: any) => ({ ...each, patterns: cases.patterns })),
  ...cases.customPatterns,
];
const serviceMasked = (patterns: string[], value: unknown) => JSON.parse(new PayloadRules({ ...PAYLOAD_LIMIT_DEFAULTS, redactKeys: patterns }).text(value, 1 << 20));

test("the cases' patterns and mark are the default list every agent and the service start from", () => {
  expect(cases.patterns).toEqual(limits.jobPayload.redactKeys);
  expect(cases.redacted).toBe(limits.jobPayload.redacted);
});

describe('which keys are masked', () => {
  for (const { key, masked } of cases.keys) {
    test(`${JSON.stringify(key)}: ${masked ? 'masked' : 'kept'}, by the BullMQ agent and by the service`, () => {
      expect(new Redactor(cases.patterns).matches(key)).toBe(masked);
      expect(new KeyRedactor(cases.patterns).matches(key)).toBe(masked);
    });
  }
});

describe('what a value becomes', () => {
  for (const each of valueCases) {
    test(`${each.name}: the BullMQ agent and the service's ingest masking agree`, () => {
      expect(boundPayload(each.input, PAYLOAD_BOUNDS, new Redactor(each.patterns))).toEqual(each.expected);
      expect(serviceMasked(each.patterns, each.input)).toEqual(each.expected);
    });
  }

  test('through a whole ingest: each case sent as arguments, result and progress reads back masked in the job detail', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const connection = await t.createConnection(cookie, 'masking');
    const defaults = cases.values as Array<{ name: string; input: unknown; expected: unknown }>;
    const events = defaults.map((each, index) =>
      jobEvent(connection.id, T0 - 60_000 + index, {
        externalId: `case-${index}`,
        state: 'completed',
        args: each.input,
        result: each.input,
        ...(each.input !== null && typeof each.input === 'object' && !Array.isArray(each.input) ? { progress: each.input } : {}),
      }),
    );
    const answer = await t.ingest(connection.apiKey, events);
    expect(answer.json).toMatchObject({ accepted: defaults.length, rejected: 0 });
    const listed = (await t.request('GET', '/api/jobs?limit=100', { headers: { cookie } })).json.data as Array<{ id: string; externalId: string }>;
    for (const [index, each] of defaults.entries()) {
      const id = listed.find((job) => job.externalId === `case-${index}`)!.id;
      const detail = (await t.request('GET', `/api/jobs/${id}`, { headers: { cookie } })).json;
      expect({ case: each.name, args: detail.args, result: detail.result }).toEqual({ case: each.name, args: each.expected, result: each.expected });
      if (detail.progressData !== null) expect(detail.progressData).toEqual(each.expected);
    }
  }, 30_000);
});
