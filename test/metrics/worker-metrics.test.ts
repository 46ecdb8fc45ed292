import { describe, expect, test } from 'bun:test';
import { pack, unpack } from 'msgpackr';
import { WorkerRate } from '../../actors/metrics/worker-metrics.ts';

const MINUTE_MS = 60_000;
const NOW_MS = Date.parse('2025-03-10T12:34:56.789Z');

const at = (iso: string): number => Date.parse(iso);

describe('worker task rate', () => {
  test('given no finished jobs, when asked, then the rate is 0', () => {
    expect(new WorkerRate().taskRatePerMinute(NOW_MS)).toBe(0);
  });

  test('given jobs around the edges of the 60-minute window, when asked, then only those in minutes 11:35 to 12:34 count', () => {
    const rate = new WorkerRate();

    rate.recordFinished(at('2025-03-10T11:34:59.999Z')); // just before the window
    rate.recordFinished(at('2025-03-10T11:35:00.000Z')); // first instant of the window
    rate.recordFinished(at('2025-03-10T12:00:00.000Z'));
    rate.recordFinished(at('2025-03-10T12:34:59.999Z')); // ahead of the clock, current minute
    rate.recordFinished(at('2025-03-10T12:35:00.000Z')); // ahead of the clock, next minute

    expect(rate.taskRatePerMinute(NOW_MS)).toBe(3 / 60);
  });

  test('given the clock moves into the next minute, when asked, then the oldest minute leaves and the next one joins', () => {
    const rate = new WorkerRate();

    rate.recordFinished(at('2025-03-10T11:35:00.000Z'));
    rate.recordFinished(at('2025-03-10T12:35:00.000Z'));
    rate.recordFinished(at('2025-03-10T12:35:30.000Z'));

    expect(rate.taskRatePerMinute(NOW_MS)).toBe(1 / 60);
    expect(rate.taskRatePerMinute(at('2025-03-10T12:35:00.000Z'))).toBe(2 / 60);
  });

  test('given two jobs a minute for three hours, when asked at the end, then the ring has wrapped and the rate is 2', () => {
    const rate = new WorkerRate();
    const firstMs = at('2025-03-10T09:35:00.000Z');

    for (let minute = 0; minute < 180; minute++) {
      rate.recordFinished(firstMs + minute * MINUTE_MS);
      rate.recordFinished(firstMs + minute * MINUTE_MS + 30_000);
    }

    expect(rate.taskRatePerMinute(NOW_MS)).toBe(2);
  });

  test('given an idle hour after activity, when asked, then the rate is back to 0', () => {
    const rate = new WorkerRate();

    rate.recordFinished(at('2025-03-10T11:00:00.000Z'));

    expect(rate.taskRatePerMinute(NOW_MS)).toBe(0);
  });

  test('given unusable times, when recording, then they are ignored without throwing', () => {
    const rate = new WorkerRate();

    rate.recordFinished(Number.NaN);
    rate.recordFinished(Number.NEGATIVE_INFINITY);

    expect(rate.taskRatePerMinute(NOW_MS)).toBe(0);
  });

  test('given a wrapped ring, when round-tripped through msgpack, then rate and snapshot are equal', () => {
    const rate = new WorkerRate();
    for (let minute = 0; minute < 150; minute += 7) rate.recordFinished(NOW_MS - minute * MINUTE_MS);

    const restored = WorkerRate.fromSnapshot(unpack(pack(rate.toSnapshot())));

    expect(restored.taskRatePerMinute(NOW_MS)).toBe(rate.taskRatePerMinute(NOW_MS));
    expect(restored.taskRatePerMinute(NOW_MS)).toBe(9 / 60);
    expect(restored.toSnapshot()).toEqual(rate.toSnapshot());
  });
});
