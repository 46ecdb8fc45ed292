/**
 * The runtime_percentile rule: the p95 run time of a task over the window, read from its
 * task metrics (so it holds after retention removed the jobs), against a threshold in ms or
 * against the same window a week before; at least 5 runs in each window compared.
 */
import { describe, expect, test } from 'bun:test';
import { binOfMs, binValueMs } from '../../actors/metrics/duration-bins.ts';
import { conditionText, valueText } from '../../actors/alerts/alert-text.ts';
import { dashboardLink, jsonPayload, noticeText } from '../../src/alerts/webhook-payload.ts';
import { iso, jobEvent } from '../support/events.ts';
import { alertFixture } from './alert-fixture.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** `count` runs of `name` of `runMs` each, ending at `endMs`. */
function runs(connectionId: string, endMs: number, count: number, runMs: number, prefix: string, name = 'reports.build') {
  return Array.from({ length: count }, (_, index) =>
    jobEvent(connectionId, endMs, { externalId: `${prefix}-${index}`, name, queue: 'reports', state: 'completed', startedAt: iso(endMs - runMs), completedAt: iso(endMs) }),
  );
}

describe('runtime_percentile alerts', () => {
  test('over a threshold: fires when p95 run time passes it over at least 5 runs, resolves when the slow runs leave the window', async () => {
    const f = await alertFixture();
    const { channel } = await f.createChannel();
    const rule = await f.createRule({ kind: 'runtime_percentile', task: 'reports.build', threshold: 2_000, windowSeconds: 600, channelIds: [channel.id] });
    const now = () => f.t.clock.nowMs();
    await f.ingest(runs(f.connection.id, now() - MINUTE_MS, 4, 5_000, 'few'));
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('ok'); // four slow runs are not enough to page anyone
    await f.ingest([...runs(f.connection.id, now() - MINUTE_MS, 16, 5_000, 'slow'), ...runs(f.connection.id, now() - MINUTE_MS, 20, 300, 'fast')]);
    await f.evaluate();
    expect(f.stateOf(rule.id)).toMatchObject({ status: 'firing', firedValue: binValueMs(binOfMs(5_000)) });
    expect(f.pending()[0]!.notice).toMatchObject({ kind: 'runtime_percentile', task: 'reports.build', threshold: 2_000 });
    expect(noticeText(f.pending()[0]!.notice)).toBe('p95 run time > 2.0 s over 10 min, task reports.build (was 5.1 s)');

    f.t.clock.advance(11 * MINUTE_MS);
    await f.ingest(runs(f.connection.id, now() - MINUTE_MS, 10, 300, 'later'));
    await f.evaluate();
    expect(f.stateOf(rule.id).status).toBe('resolved');
  }, 30_000);

  test('against the week before: fires when p95 is more than `threshold` times the same window 7 days earlier, and stays measured after retention removed the jobs', async () => {
    const f = await alertFixture();
    const rule = await f.createRule({ kind: 'runtime_percentile', task: 'reports.build', queue: 'reports', relativeTo: 'week_before', threshold: 2, windowSeconds: 2 * 3_600 });
    const now = () => f.t.clock.nowMs();
    await f.ingest(runs(f.connection.id, now() - 7 * DAY_MS - 30 * MINUTE_MS, 10, 1_000, 'last-week'));
    await f.ingest(runs(f.connection.id, now() - 30 * MINUTE_MS, 10, 1_500, 'now'));
    await f.evaluate();
    const ratio = binValueMs(binOfMs(1_500)) / binValueMs(binOfMs(1_000));
    expect(f.stateOf(rule.id).status).toBe('ok');
    expect(f.t.engine.connection(f.connection.id)!.alerts.rules.get(rule.id)?.relativeTo).toBe('week_before');

    await f.ingest(runs(f.connection.id, now() - 20 * MINUTE_MS, 30, 4_000, 'slower'));
    // a day later the jobs are gone, the figures are not
    f.t.clock.advance(MINUTE_MS);
    await f.t.engine.commit({ t: 'retention', atMs: now() + 2 * DAY_MS });
    expect(f.t.engine.connection(f.connection.id)!.jobs.size).toBe(0);
    await f.evaluate();
    const state = f.stateOf(rule.id);
    expect(state.status).toBe('firing');
    expect(state.firedValue).toBeCloseTo(binValueMs(binOfMs(4_000)) / binValueMs(binOfMs(1_000)), 10);
    expect(ratio).toBeLessThan(2);
    const listed = await f.t.request('GET', '/api/alert-rules', { headers: { cookie: await f.t.login() } });
    const shown = listed.json.data.find((each: { id: string }) => each.id === rule.id);
    expect(shown).toMatchObject({ relativeTo: 'week_before', condition: 'p95 run time > 2x the same 2 h a week before, queue reports, task reports.build' });
    expect(shown.current.text).toMatch(/^4(\.\d+)?x the week before$/);
  }, 30_000);

  test('a rule the kind cannot take is refused naming the field', async () => {
    const f = await alertFixture();
    const cookie = await f.t.login();
    const post = (body: Record<string, unknown>) =>
      f.t.request('POST', '/api/alert-rules', { headers: { cookie }, body: { connectionId: f.connection.id, name: 'slow', kind: 'runtime_percentile', task: 'reports.build', threshold: 2_000, windowSeconds: 600, channelIds: [], ...body } });
    expect((await post({ task: null })).json.error.details).toHaveProperty('task');
    expect((await post({ threshold: 1.5 })).json.error.details).toHaveProperty('threshold');
    expect((await post({ relativeTo: 'week_before', threshold: 1 })).json.error.details).toHaveProperty('threshold');
    expect((await post({ windowSeconds: 30 })).json.error.details).toHaveProperty('windowSeconds');
    expect((await post({ kind: 'failure_rate', task: null, threshold: 0.2, relativeTo: 'week_before' })).json.error.details).toHaveProperty('relativeTo');
    expect((await post({ relativeTo: 'yesterday' })).status).toBe(400);
    expect((await post({})).status).toBe(201);
  }, 30_000);

  test('its words and its webhook: ms or a ratio, and a link to the task\'s metrics', () => {
    expect(conditionText({ kind: 'runtime_percentile', threshold: 850, windowSeconds: 300, queue: null, task: 'mail.send', relativeTo: null })).toBe('p95 run time > 850 ms over 5 min, task mail.send');
    expect(valueText('runtime_percentile', 95_000)).toBe('95 s');
    expect(valueText('runtime_percentile', 1.256, 'week_before')).toBe('1.26x the week before');
    const notice = {
      status: 'firing' as const, ruleId: 'r', ruleName: 'slow mail', kind: 'runtime_percentile' as const, queue: 'emails', task: 'mail.send', value: 3.2, threshold: 2,
      windowSeconds: 3_600, relativeTo: 'week_before' as const, firingSinceMs: 0, resolvedAtMs: null, atMs: 0,
    };
    const delivery = { id: 'd', connectionId: 'c', channelId: 'ch', notice, createdAtMs: 0, attempts: 0, nextAttemptAtMs: 0 };
    expect(jsonPayload(delivery, null).unit).toBe('ratio');
    expect(dashboardLink(delivery, null)).toBe('/task-metrics?connectionId=c&task=mail.send&queue=emails&range=7d');
  });
});
