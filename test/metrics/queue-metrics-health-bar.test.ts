import { describe, expect, test } from 'bun:test';
import { QueueMetrics, TIME_RANGES, type HealthBucket, type TimeRange } from '../../actors/metrics/queue-metrics.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const NOW_MS = Date.parse('2025-03-10T12:34:56.789Z');

const at = (iso: string): number => Date.parse(iso);
const durationMs = (bucket: HealthBucket): number => Date.parse(bucket.end) - Date.parse(bucket.start);

function barOf(metrics: QueueMetrics, range: TimeRange, nowMs = NOW_MS): HealthBucket[] {
  return metrics.view(range, nowMs).healthBar.buckets;
}

function bucketStarting(buckets: HealthBucket[], startIso: string): HealthBucket {
  const bucket = buckets.find(({ start }) => start === startIso);
  if (bucket === undefined) throw new Error(`no bucket starts at ${startIso}`);
  return bucket;
}

describe('health bar layout', () => {
  // Hand-computed from NOW = 2025-03-10T12:34:56.789Z: the last bucket contains now, the
  // first lies (count - 1) widths before it.
  interface ExpectedLayout {
    count: number;
    widthMs: number;
    firstStart: string;
    lastStart: string;
    lastEnd: string;
  }
  const expected: Record<TimeRange, ExpectedLayout> = {
    '1h': {
      count: 60,
      widthMs: MINUTE_MS,
      firstStart: '2025-03-10T11:35:00.000Z',
      lastStart: '2025-03-10T12:34:00.000Z',
      lastEnd: '2025-03-10T12:35:00.000Z',
    },
    '6h': {
      count: 72,
      widthMs: 5 * MINUTE_MS,
      firstStart: '2025-03-10T06:35:00.000Z',
      lastStart: '2025-03-10T12:30:00.000Z',
      lastEnd: '2025-03-10T12:35:00.000Z',
    },
    '24h': {
      count: 96,
      widthMs: 15 * MINUTE_MS,
      firstStart: '2025-03-09T12:45:00.000Z',
      lastStart: '2025-03-10T12:30:00.000Z',
      lastEnd: '2025-03-10T12:45:00.000Z',
    },
    '7d': {
      count: 168,
      widthMs: HOUR_MS,
      firstStart: '2025-03-03T13:00:00.000Z',
      lastStart: '2025-03-10T12:00:00.000Z',
      lastEnd: '2025-03-10T13:00:00.000Z',
    },
  };

  for (const range of TIME_RANGES) {
    test(`given no events, when viewing ${range}, then it has ${expected[range].count} UTC-aligned buckets of equal width ending with the one containing now`, () => {
      const { count, widthMs, firstStart, lastStart, lastEnd } = expected[range];

      const view = new QueueMetrics().view(range, NOW_MS);
      const buckets = view.healthBar.buckets;

      expect(view.healthBar.timeRange).toBe(range);
      expect(buckets).toHaveLength(count);
      expect(buckets[0]?.start).toBe(firstStart);
      expect(buckets.at(-1)?.start).toBe(lastStart);
      expect(buckets.at(-1)?.end).toBe(lastEnd);
      buckets.forEach((bucket, index) => {
        expect(durationMs(bucket)).toBe(widthMs);
        expect(Date.parse(bucket.start) % widthMs).toBe(0);
        expect(bucket.succeeded).toBe(0);
        expect(bucket.failed).toBe(0);
        const next = buckets[index + 1];
        if (next !== undefined) expect(next.start).toBe(bucket.end);
      });
    });
  }

  test('given now exactly on a bucket boundary, when viewing, then the bucket starting at now is the last one', () => {
    const buckets = barOf(new QueueMetrics(), '24h', at('2025-03-10T12:30:00.000Z'));

    expect(buckets.at(-1)?.start).toBe('2025-03-10T12:30:00.000Z');
    expect(buckets[0]?.start).toBe('2025-03-09T12:45:00.000Z');
  });

  test('given a clock one millisecond before a boundary, when viewing, then the bar has not moved on yet', () => {
    const buckets = barOf(new QueueMetrics(), '24h', at('2025-03-10T12:29:59.999Z'));

    expect(buckets.at(-1)?.start).toBe('2025-03-10T12:15:00.000Z');
  });
});

describe('health bar bucket boundaries', () => {
  test('given one job finished exactly at a 15-minute boundary and one a millisecond before, when viewing 24h, then each lands on its own side', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-10T12:30:00.000Z'), false);
    metrics.recordFinished(at('2025-03-10T12:29:59.999Z'), true);
    const buckets = barOf(metrics, '24h');

    expect(bucketStarting(buckets, '2025-03-10T12:30:00.000Z')).toMatchObject({ succeeded: 1, failed: 0 });
    expect(bucketStarting(buckets, '2025-03-10T12:15:00.000Z')).toMatchObject({ succeeded: 0, failed: 1 });
  });

  test('given one job finished exactly on the hour and one a millisecond before, when viewing 7d, then each lands in its own hour', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-10T12:00:00.000Z'), false);
    metrics.recordFinished(at('2025-03-10T11:59:59.999Z'), false);
    const buckets = barOf(metrics, '7d');

    expect(bucketStarting(buckets, '2025-03-10T12:00:00.000Z').succeeded).toBe(1);
    expect(bucketStarting(buckets, '2025-03-10T11:00:00.000Z').succeeded).toBe(1);
  });

  test('given jobs at the start of the oldest 1h bucket and a millisecond before it, when viewing 1h, then only the first is in range', () => {
    const metrics = new QueueMetrics();

    metrics.recordFinished(at('2025-03-10T11:35:00.000Z'), false);
    metrics.recordFinished(at('2025-03-10T11:34:59.999Z'), false);
    const view = metrics.view('1h', NOW_MS);

    expect(view.healthBar.buckets[0]).toMatchObject({ start: '2025-03-10T11:35:00.000Z', succeeded: 1 });
    expect(view.throughput).toBe(1 / 3600);
  });

  test('given jobs finished across 5-minute buckets, when viewing 6h, then each bucket sums its five minutes', () => {
    const metrics = new QueueMetrics();

    for (const iso of ['2025-03-10T12:25:00.000Z', '2025-03-10T12:27:30.000Z', '2025-03-10T12:29:59.999Z']) {
      metrics.recordFinished(at(iso), false);
    }
    metrics.recordFinished(at('2025-03-10T12:30:00.000Z'), true);
    const buckets = barOf(metrics, '6h');

    expect(bucketStarting(buckets, '2025-03-10T12:25:00.000Z')).toMatchObject({ succeeded: 3, failed: 0 });
    expect(bucketStarting(buckets, '2025-03-10T12:30:00.000Z')).toMatchObject({ succeeded: 0, failed: 1 });
  });
});
