/**
 * Giving memory back after a burst (src/service/memory-return.ts): when the idle collection
 * runs, on an injected clock and a stand-in collection; then the real one over a service's
 * /metrics and its debug log line.
 */
import { describe, expect, test } from 'bun:test';
import { activityOf, checkIntervalMs, describeReturn, fullCollection, IdleCollection, STOPPED_TO_FREE, WorkMeter, type MemoryReturned } from '../../src/service/memory-return.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../src/server.ts';
import { loadConfig } from '../../src/config.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, createConnection, ingest, login } from '../blackbox/service-process.ts';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';

const MB = 1024 * 1024;
const TOKEN = 'memory-return-metrics-token';

/** An IdleCollection over a clock and a work count the test moves by hand. */
function harness(options: { idleMs?: number; workBytesMin?: number; collectionMs?: number } = {}) {
  const state = { nowMs: 0, work: 0, moves: 0, waiting: 0, collections: [] as MemoryReturned[] };
  const collectionMs = options.collectionMs ?? 10;
  const collection = new IdleCollection({
    idleMs: options.idleMs ?? 5_000,
    workBytesMin: options.workBytesMin ?? 32 * MB,
    workBytes: () => state.work,
    activity: () => ({ moves: state.moves, waiting: state.waiting }),
    nowMs: () => state.nowMs,
    collect: () => {
      state.nowMs += collectionMs;
      return { residentBeforeBytes: 900 * MB, residentAfterBytes: 600 * MB };
    },
    collected: (returned) => state.collections.push(returned),
  });
  /** `bytes` taken in at this moment, then one timer turn */
  const takeIn = (bytes: number): boolean => {
    state.work += bytes;
    return collection.check();
  };
  /** the clock forward, then one timer turn */
  const wait = (ms: number): boolean => {
    state.nowMs += ms;
    return collection.check();
  };
  return { state, collection, takeIn, wait };
}

describe('the idle collection', () => {
  test('collects once a burst of at least the threshold has been followed by the quiet time, and says what it gave back', () => {
    const { state, takeIn, wait } = harness();
    expect(takeIn(20 * MB)).toBe(false);
    expect(wait(1_000)).toBe(false);
    expect(takeIn(20 * MB)).toBe(false); // 40 MB, the last at 1 s
    expect(wait(4_999)).toBe(false); // 4,999 ms quiet
    expect(wait(1)).toBe(true); // 5,000 ms quiet
    expect(state.collections).toEqual([{ durationMs: 10, workBytes: 40 * MB, residentBeforeBytes: 900 * MB, residentAfterBytes: 600 * MB }]);
  });

  test('never while work goes on, however long the burst', () => {
    const { state, takeIn } = harness();
    for (let second = 0; second < 600; second++) {
      state.nowMs += 1_000;
      expect(takeIn(10 * MB)).toBe(false);
    }
    expect(state.collections).toHaveLength(0);
  });

  test('never while a commit waits for the log (a stalled publish is not quiet), however long', () => {
    const { state, takeIn, wait } = harness();
    takeIn(100 * MB);
    state.waiting = 1;
    expect(wait(5_000)).toBe(false);
    expect(wait(600_000)).toBe(false);
    state.waiting = 0;
    expect(wait(4_999)).toBe(false); // the quiet time counts from when the wait ended
    expect(wait(1)).toBe(true);
  });

  test('a record committed or applied is work even before its bytes are counted', () => {
    const { state, takeIn, wait } = harness();
    takeIn(100 * MB);
    expect(wait(4_000)).toBe(false);
    state.moves += 1;
    expect(wait(1_000)).toBe(false); // 5 s after the bytes, but a record just now
    expect(wait(4_999)).toBe(false);
    expect(wait(1)).toBe(true);
  });

  test('not after less than the threshold taken in, however long the quiet', () => {
    const { takeIn, wait } = harness({ workBytesMin: 32 * MB });
    takeIn(32 * MB - 1);
    expect(wait(3_600_000)).toBe(false);
    takeIn(1);
    expect(wait(4_999)).toBe(false);
    expect(wait(1)).toBe(true);
  });

  test('once per burst: the next needs the threshold taken in again after it', () => {
    const { state, takeIn, wait } = harness();
    takeIn(100 * MB);
    expect(wait(5_000)).toBe(true);
    expect(wait(3_600_000)).toBe(false);
    takeIn(31 * MB);
    expect(wait(5_000)).toBe(false);
    takeIn(1 * MB);
    expect(wait(5_000)).toBe(true);
    expect(state.collections.map((returned) => returned.workBytes)).toEqual([100 * MB, 32 * MB]);
  });

  test('the next waits STOPPED_TO_FREE times as long as the last stopped the thread', () => {
    const { takeIn, wait } = harness({ collectionMs: 1_000 });
    takeIn(100 * MB);
    expect(wait(5_000)).toBe(true); // stopped 1 s: the next not within 100 s of its end
    takeIn(100 * MB);
    expect(wait(STOPPED_TO_FREE * 1_000 - 5_001)).toBe(false); // quiet long enough, too soon after the last
    expect(wait(5_000)).toBe(false); // 99,999 ms after the last one ended
    expect(wait(1)).toBe(true);
  });

  test('off with an idle time of 0', () => {
    const { takeIn, wait } = harness({ idleMs: 0 });
    takeIn(1_000 * MB);
    expect(wait(3_600_000)).toBe(false);
  });

  test('what was taken in before it started (a recovery) is a burst like any other', () => {
    const meter = new WorkMeter();
    meter.batchWritten(3, 20 * MB);
    meter.note(12 * MB);
    let nowMs = 0;
    const collection = new IdleCollection({
      idleMs: 5_000,
      workBytesMin: 32 * MB,
      workBytes: () => meter.bytes,
      activity: () => ({ moves: 0, waiting: 0 }),
      nowMs: () => nowMs,
      collect: () => ({ residentBeforeBytes: 0, residentAfterBytes: 0 }),
      collected: () => {},
    });
    nowMs = 4_999;
    expect(collection.check()).toBe(false);
    nowMs = 5_000;
    expect(collection.check()).toBe(true);
  });

  test("an engine's activity: records committed or applied, and the commits waiting for the log", () => {
    const engine = { recordsTaken: 3, commitsWaiting: 1 };
    const activity = activityOf(engine);
    expect(activity()).toEqual({ moves: 3, waiting: 1 });
    engine.recordsTaken = 4;
    engine.commitsWaiting = 0;
    expect(activity()).toEqual({ moves: 4, waiting: 0 });
  });

  test('the timer looks every tenth of the quiet time, between 100 ms and 1 s', () => {
    expect(checkIntervalMs(5_000)).toBe(500);
    expect(checkIntervalMs(200)).toBe(100);
    expect(checkIntervalMs(60_000)).toBe(1_000);
  });

  test('the log line names the quiet time, the burst, the stop and the resident memory before and after', () => {
    expect(describeReturn({ durationMs: 612.4, workBytes: 812 * MB, residentBeforeBytes: 1_430 * MB, residentAfterBytes: 980 * MB }, 5_000)).toBe(
      'memory returned after 5 s quiet (812 MB taken in since the last collection): full collection in 612 ms, resident 1430 MB -> 980 MB',
    );
  });
});

describe('the full collection', () => {
  test('gives back what a burst left: resident memory falls', () => {
    let burst: unknown[] | null = [];
    for (let index = 0; index < 100; index++) burst.push(JSON.parse(JSON.stringify(Array.from({ length: 5_000 }, (_, n) => ({ n, text: `job ${n}` })))));
    burst = null;
    const { residentBeforeBytes, residentAfterBytes } = fullCollection();
    expect(burst).toBeNull();
    expect(residentAfterBytes).toBeLessThan(residentBeforeBytes);
  });
});

describe('a service after a burst', () => {
  // WORKERS=2: the connection's shard takes the burst in and collects its own thread's heap; the front adds its count to the scrape
  test.each(['1', '2'])('WORKERS=%s: collects once quiet after taking in past the threshold, counted in /metrics, logged at debug', async (workers) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'jobwatch-memory-return-'));
    const lines: Array<{ line: string; severity: unknown }> = [];
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      WORKERS: workers,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      FSYNC: 'no',
      METRICS_TOKEN: TOKEN,
      MEMORY_RETURN_IDLE_MS: '300',
      MEMORY_RETURN_AFTER_MB: '1',
      DAILY_INGEST_MB: '0',
      DAILY_EVENT_LIMIT: '0',
    });
    const service = await startService(config, (line, fields) => lines.push({ line, severity: fields?.severity }));
    const baseUrl = `http://127.0.0.1:${service.port}`;
    try {
      const connection = await createConnection(baseUrl, await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD), 'burst');
      await Bun.sleep(1_000);
      // a login and a connection are records far below 1 MiB: no collection; 40 x 500 jobs are about 2 MB of log
      expect(await returns(baseUrl)).toBe(0);
      for (let body = 0; body < 40; body++) {
        const { status } = await ingest(baseUrl, connection.apiKey, batchOfJobs(connection.id, `burst-${body}`, 500));
        expect(status).toBe(200);
      }
      const deadline = performance.now() + 10_000;
      while ((await returns(baseUrl)) === 0 && performance.now() < deadline) await Bun.sleep(100);
      expect(await returns(baseUrl)).toBe(1);
      const logged = lines.filter(({ line }) => /^(shard \d+: )?memory returned after 0.3 s quiet/.test(line));
      expect(logged).toHaveLength(1);
      expect(logged[0]!.severity).toBe('debug');
      // quiet on: no second collection without another burst
      await Bun.sleep(1_000);
      expect(await returns(baseUrl)).toBe(1);
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});

async function returns(baseUrl: string): Promise<number> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return sampleValue(parsePrometheusText(await response.text()), 'jobwatch_memory_returns_total') ?? Number.NaN;
}
