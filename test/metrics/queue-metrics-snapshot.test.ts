import { describe, expect, test } from 'bun:test';
import { pack, unpack } from 'msgpackr';
import { InvalidMetricsSnapshotError } from '../../actors/metrics/invalid-metrics-snapshot-error.ts';
import { QueueMetrics, TIME_RANGES } from '../../actors/metrics/queue-metrics.ts';

const MINUTE_MS = 60_000;
const NOW_MS = Date.parse('2025-03-10T12:34:56.789Z');

/** Through msgpack and back, as the snapshot file will do it. */
const roundTrip = (metrics: QueueMetrics): QueueMetrics => QueueMetrics.fromSnapshot(unpack(pack(metrics.toSnapshot())));

// given: eight days of activity, every 37 minutes, so both rings have wrapped and hold
// overwritten slots; latencies with fractions.
function givenEightDaysOfActivity(): QueueMetrics {
  const metrics = new QueueMetrics();
  for (let eventMs = NOW_MS - 8 * 24 * 60 * MINUTE_MS; eventMs <= NOW_MS; eventMs += 37 * MINUTE_MS) {
    const index = Math.round(eventMs / MINUTE_MS);
    metrics.recordStarted(eventMs - 2_000, (index % 1_000) + 0.25);
    metrics.recordFinished(eventMs, index % 5 === 0);
  }
  return metrics;
}

describe('queue metrics snapshot', () => {
  test('given wrapped rings, when round-tripped through msgpack, then every view and the snapshot itself are equal', () => {
    const original = givenEightDaysOfActivity();

    const restored = roundTrip(original);

    for (const range of TIME_RANGES) expect(restored.view(range, NOW_MS)).toEqual(original.view(range, NOW_MS));
    expect(restored.toSnapshot()).toEqual(original.toSnapshot());
  });

  test('given a restored copy, when both record the same later events, then they stay equal', () => {
    const original = givenEightDaysOfActivity();
    const restored = roundTrip(original);
    const laterMs = NOW_MS + 90 * MINUTE_MS;

    for (const metrics of [original, restored]) {
      metrics.recordFinished(laterMs, true);
      metrics.recordStarted(laterMs, 42);
    }

    for (const range of TIME_RANGES) expect(restored.view(range, laterMs)).toEqual(original.view(range, laterMs));
  });

  test('given no events, when round-tripped, then it is still empty', () => {
    const restored = roundTrip(new QueueMetrics());

    expect(restored.view('7d', NOW_MS)).toEqual(new QueueMetrics().view('7d', NOW_MS));
    expect(restored.toSnapshot()).toEqual(new QueueMetrics().toSnapshot());
  });

  test('when the snapshot is not one this code wrote, then fromSnapshot throws InvalidMetricsSnapshotError', () => {
    const valid = givenEightDaysOfActivity().toSnapshot() as { minutes: { buckets: number[]; values: Record<string, number[]> } };
    const negativeCount = structuredClone(valid);
    negativeCount.minutes.values.succeeded![0] = -1;
    const missingValue = structuredClone(valid);
    missingValue.minutes.values.failed!.pop();

    for (const corrupt of [null, 'text', {}, { minutes: [], hours: [] }, negativeCount, missingValue]) {
      expect(() => QueueMetrics.fromSnapshot(corrupt)).toThrow(InvalidMetricsSnapshotError);
    }
  });
});
