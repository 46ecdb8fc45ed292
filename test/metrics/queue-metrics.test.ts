import { describe, expect, test } from 'bun:test';
import { QueueMetrics } from '../../actors/metrics/queue-metrics.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const NOW_MS = Date.parse('2025-03-10T12:34:56.789Z');

const at = (iso: string): number => Date.parse(iso);

describe('queue metrics values', () => {
  // given: in the last hour three jobs succeeded and one failed (one of them completed a
  // few seconds ahead of the clock, still in the current minute); two jobs started in the
  // last hour after waiting 100 and 300 ms, and one started 1.5 h ago after 10 s.
  function givenMixedActivity(): QueueMetrics {
    const metrics = new QueueMetrics();
    metrics.recordFinished(at('2025-03-10T11:50:00.000Z'), true);
    metrics.recordFinished(at('2025-03-10T12:00:00.000Z'), false);
    metrics.recordFinished(at('2025-03-10T12:10:30.000Z'), false);
    metrics.recordFinished(at('2025-03-10T12:34:59.999Z'), false);
    metrics.recordStarted(at('2025-03-10T12:01:00.000Z'), 100);
    metrics.recordStarted(at('2025-03-10T12:02:00.000Z'), 300);
    metrics.recordStarted(at('2025-03-10T11:00:00.000Z'), 10_000);
    return metrics;
  }

  test('when viewing 1h, then throughput is finished / 3600 s, failure rate failed / finished, latency the mean of starts in range', () => {
    const view = givenMixedActivity().view('1h', NOW_MS);

    expect(view.throughput).toBe(4 / 3600);
    expect(view.failureRate).toBe(0.25);
    expect(view.avgLatencyMs).toBe(200);
  });

  test('when viewing 1h, then each job is in the minute bucket of its completion time', () => {
    const buckets = givenMixedActivity().view('1h', NOW_MS).healthBar.buckets;

    // Oldest bucket is 11:35, so minute 11:50 is index 15, 12:00 index 25, 12:10 index 35, 12:34 index 59.
    expect(buckets[15]).toMatchObject({ start: '2025-03-10T11:50:00.000Z', succeeded: 0, failed: 1 });
    expect(buckets[25]).toMatchObject({ start: '2025-03-10T12:00:00.000Z', succeeded: 1, failed: 0 });
    expect(buckets[35]).toMatchObject({ start: '2025-03-10T12:10:00.000Z', succeeded: 1, failed: 0 });
    expect(buckets[59]).toMatchObject({ start: '2025-03-10T12:34:00.000Z', succeeded: 1, failed: 0 });
    const total = buckets.reduce((sum, bucket) => sum + bucket.succeeded + bucket.failed, 0);
    expect(total).toBe(4);
  });

  test('when summarizing any range (for sorting queue lists), then the figures equal the view\'s', () => {
    const metrics = givenMixedActivity();
    for (const range of ['1h', '6h', '24h', '7d'] as const) {
      const { healthBar: _bar, ...figures } = metrics.view(range, NOW_MS);
      expect(metrics.summary(range, NOW_MS)).toEqual(figures);
    }
    expect(new QueueMetrics().summary('1h', NOW_MS)).toEqual({ throughput: null, avgLatencyMs: null, failureRate: null });
  });

  test('when viewing 24h, then the older start counts and the divisor is 86,400 s', () => {
    const view = givenMixedActivity().view('24h', NOW_MS);

    expect(view.throughput).toBe(4 / 86_400);
    expect(view.failureRate).toBe(0.25);
    expect(view.avgLatencyMs).toBe((100 + 300 + 10_000) / 3);
  });

  test('when viewing 7d, then the divisor is 604,800 s', () => {
    expect(givenMixedActivity().view('7d', NOW_MS).throughput).toBe(4 / 604_800);
  });

  test('given a start reported before its creation (clock skew), when viewing, then its latency counts as 0 ms', () => {
    const metrics = new QueueMetrics();

    metrics.recordStarted(at('2025-03-10T12:00:00.000Z'), -500);
    metrics.recordStarted(at('2025-03-10T12:01:00.000Z'), 300);

    expect(metrics.view('1h', NOW_MS).avgLatencyMs).toBe(150);
  });
});

describe('queue metrics with nothing to measure', () => {
  test('given no events, when viewing any range, then every figure is null', () => {
    const view = new QueueMetrics().view('24h', NOW_MS);

    expect(view).toMatchObject({ throughput: null, avgLatencyMs: null, failureRate: null });
  });

  test('given only starts, when viewing, then throughput and failure rate are null but latency is measured', () => {
    const metrics = new QueueMetrics();

    metrics.recordStarted(at('2025-03-10T12:00:00.000Z'), 50);

    expect(metrics.view('1h', NOW_MS)).toMatchObject({ throughput: null, failureRate: null, avgLatencyMs: 50 });
  });

  test('given only finished jobs, when viewing, then latency is null', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-10T12:00:00.000Z'), false);

    expect(metrics.view('1h', NOW_MS)).toMatchObject({ throughput: 1 / 3600, failureRate: 0, avgLatencyMs: null });
  });

  test('given activity two hours ago only, when viewing 1h, then it is empty, and 6h still sees it', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-10T10:30:00.000Z'), false);
    metrics.recordStarted(at('2025-03-10T10:29:00.000Z'), 20);

    expect(metrics.view('1h', NOW_MS)).toMatchObject({ throughput: null, avgLatencyMs: null, failureRate: null });
    expect(metrics.view('6h', NOW_MS)).toMatchObject({ throughput: 1 / 21_600, avgLatencyMs: 20, failureRate: 0 });
  });

  test('given unusable times and latencies, when recording, then they are ignored without throwing', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(Number.NaN, false);
    metrics.recordFinished(Number.POSITIVE_INFINITY, true);
    metrics.recordFinished(1e20, false);
    metrics.recordStarted(Number.NaN, 10);
    metrics.recordStarted(at('2025-03-10T12:00:00.000Z'), Number.NaN);

    expect(metrics.view('7d', NOW_MS)).toMatchObject({ throughput: null, avgLatencyMs: null, failureRate: null });
  });
});

describe('queue metrics retention window', () => {
  test('given jobs at the start of the oldest 7d bucket and a millisecond before, when viewing 7d, then only the first counts', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-03T13:00:00.000Z'), false);
    metrics.recordFinished(at('2025-03-03T12:59:59.999Z'), true);
    const view = metrics.view('7d', NOW_MS);

    expect(view.healthBar.buckets[0]).toMatchObject({ start: '2025-03-03T13:00:00.000Z', succeeded: 1, failed: 0 });
    expect(view.failureRate).toBe(0);
  });

  test('given events older than 7 days, when viewing any range, then they are ignored', () => {
    const metrics = new QueueMetrics();
    const eightDaysAgoMs = NOW_MS - 8 * 24 * HOUR_MS;

    metrics.recordFinished(eightDaysAgoMs, true);
    metrics.recordStarted(eightDaysAgoMs, 1_000);

    for (const range of ['1h', '6h', '24h', '7d'] as const) {
      expect(metrics.view(range, NOW_MS)).toMatchObject({ throughput: null, avgLatencyMs: null, failureRate: null });
    }
  });

  test('given a job completed ahead of the clock in the next minute, when viewing 1h, then it counts only once now reaches its bucket', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-10T12:35:00.000Z'), false);

    expect(metrics.view('1h', NOW_MS).throughput).toBeNull();
    const later = metrics.view('1h', at('2025-03-10T12:35:10.000Z'));
    expect(later.healthBar.buckets.at(-1)).toMatchObject({ start: '2025-03-10T12:35:00.000Z', succeeded: 1 });
  });

  test('given a job stamped ahead of the clock exactly 24 h after the oldest minute in range, when viewing 24h, then that minute keeps its job', () => {
    const metrics = new QueueMetrics();
    const nowMs = at('2025-03-10T12:44:59.999Z'); // last instant of the current bucket: the range starts 1,439 minutes back

    metrics.recordFinished(at('2025-03-09T12:45:00.000Z'), false); // oldest minute in range
    metrics.recordFinished(at('2025-03-10T12:45:00.000Z'), true); // next bucket, one ms ahead of the clock
    const view = metrics.view('24h', nowMs);

    expect(view.healthBar.buckets[0]).toMatchObject({ start: '2025-03-09T12:45:00.000Z', succeeded: 1 });
    expect(metrics.view('24h', at('2025-03-10T12:45:00.000Z')).failureRate).toBe(1);
  });
});

describe('queue metrics rings wrapping', () => {
  test('given one success a minute for 30 hours, when viewing, then 24h holds only the last 1,440 and 7d all 1,800', () => {
    const firstMs = at('2025-03-10T00:00:00.000Z');
    const metrics = new QueueMetrics();

    for (let minute = 0; minute < 30 * 60; minute++) metrics.recordFinished(firstMs + minute * MINUTE_MS, false);
    const nowMs = at('2025-03-11T05:59:30.000Z');

    // 24h bar: 2025-03-10T06:00 .. 2025-03-11T06:00, fifteen jobs in every bucket.
    const day = metrics.view('24h', nowMs);
    expect(day.healthBar.buckets[0]?.start).toBe('2025-03-10T06:00:00.000Z');
    expect(day.healthBar.buckets.every((bucket) => bucket.succeeded === 15)).toBe(true);
    expect(day.throughput).toBe(1440 / 86_400);
    // 1h bar: one job in every minute.
    expect(metrics.view('1h', nowMs).healthBar.buckets.every((bucket) => bucket.succeeded === 1)).toBe(true);
    // 7d bar: all 30 hours, sixty jobs in each of the last 30 buckets.
    const week = metrics.view('7d', nowMs);
    expect(week.throughput).toBe(1800 / 604_800);
    expect(week.healthBar.buckets.slice(-30).every((bucket) => bucket.succeeded === 60)).toBe(true);
    expect(week.healthBar.buckets.slice(0, -30).every((bucket) => bucket.succeeded === 0)).toBe(true);
  });

  test('given one success an hour for 9 days, when viewing 7d, then only the last 168 hours count', () => {
    const firstMs = at('2025-03-01T00:30:00.000Z');
    const metrics = new QueueMetrics();

    for (let hour = 0; hour < 9 * 24; hour++) metrics.recordFinished(firstMs + hour * HOUR_MS, false);
    const view = metrics.view('7d', at('2025-03-09T23:30:00.000Z'));

    expect(view.healthBar.buckets[0]?.start).toBe('2025-03-03T00:00:00.000Z');
    expect(view.healthBar.buckets.every((bucket) => bucket.succeeded === 1)).toBe(true);
    expect(view.throughput).toBe(168 / 604_800);
  });

  test('given two jobs exactly 24 h apart (same minute slot), when viewing at the later one, then 24h shows one and 7d both', () => {
    const metrics = new QueueMetrics();
    const laterMs = at('2025-03-10T12:34:00.000Z');

    metrics.recordFinished(laterMs - 24 * HOUR_MS, true);
    metrics.recordFinished(laterMs, false);

    expect(metrics.view('24h', NOW_MS)).toMatchObject({ throughput: 1 / 86_400, failureRate: 0 });
    expect(metrics.view('7d', NOW_MS)).toMatchObject({ throughput: 2 / 604_800, failureRate: 0.5 });
  });
});
