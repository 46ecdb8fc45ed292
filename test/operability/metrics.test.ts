/**
 * GET /metrics of the running service (src/server.ts wiring, in this process, on a free
 * loopback port with a temporary data directory): the scrape parses strictly as the
 * Prometheus text format, every family docs/operations.md lists is there with its type, the
 * counters move with the traffic that should move them, and access needs METRICS_TOKEN.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startService, type RunningService } from '../../src/server.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, ingest, jobEvent, login, testWorkers } from '../blackbox/service-process.ts';
import { parsePrometheusText, sampleValue, type Family, type MetricType } from '../support/prometheus-text.ts';

const TOKEN = 'scrape-token-0123456789';
const HOUR_MS = 3_600_000;
const running: Array<{ service: RunningService; dir: string }> = [];

afterEach(async () => {
  for (const { service, dir } of running.splice(0)) {
    await service.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

async function start(env: Record<string, string> = {}, dir = mkdtempSync(join(tmpdir(), 'jobwatch-metrics-'))) {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, WORKERS: testWorkers(), ADMIN_EMAIL, ADMIN_PASSWORD, FSYNC: 'always', METRICS_TOKEN: TOKEN, ...env });
  const service = await startService(config, () => {}, { snapshotCheckIntervalMs: HOUR_MS, retentionIntervalMs: HOUR_MS });
  running.push({ service, dir });
  return { service, dir, baseUrl: `http://127.0.0.1:${service.port}` };
}

async function scrape(baseUrl: string): Promise<Map<string, Family>> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(await response.text());
}

/** The families docs/operations.md ("Health, metrics, logs and upgrades") promises. */
const FAMILIES: Record<string, MetricType> = {
  jobwatch_ingest_events_total: 'counter',
  jobwatch_ingest_requests_refused_total: 'counter',
  jobwatch_ingest_request_duration_seconds: 'histogram',
  jobwatch_log_append_duration_seconds: 'histogram',
  jobwatch_log_fsync_duration_seconds: 'histogram',
  jobwatch_log_group_commit_records: 'histogram',
  jobwatch_log_written_bytes_total: 'counter',
  jobwatch_log_bytes_since_snapshot: 'gauge',
  jobwatch_snapshot_duration_seconds: 'histogram',
  jobwatch_snapshot_bytes: 'gauge',
  jobwatch_recovery_duration_seconds: 'gauge',
  jobwatch_recovery_records_replayed: 'gauge',
  jobwatch_connections: 'gauge',
  jobwatch_jobs_retained: 'gauge',
  jobwatch_workers_retained: 'gauge',
  jobwatch_queues_retained: 'gauge',
  jobwatch_sse_subscribers: 'gauge',
  jobwatch_sse_streams_ended_total: 'counter',
  jobwatch_sse_slow_clients_dropped_total: 'counter',
  jobwatch_login_failures_total: 'counter',
  jobwatch_login_limiter_refusals_total: 'counter',
  jobwatch_memory_returns_total: 'counter',
  jobwatch_memory_return_seconds_total: 'counter',
  jobwatch_memory_returned_bytes_total: 'counter',
  process_resident_memory_bytes: 'gauge',
  nodejs_heap_size_used_bytes: 'gauge',
  nodejs_eventloop_lag_p99_seconds: 'gauge',
  nodejs_eventloop_lag_max_seconds: 'gauge',
  jobwatch_task_jobs_total: 'counter',
  jobwatch_task_run_seconds: 'histogram',
  jobwatch_task_wait_seconds: 'histogram',
  jobwatch_task_series_folded: 'gauge',
};

/** Families with no sample until there is something to count (task series appear with the first job). */
const SAMPLED_LATER = new Set(['jobwatch_ingest_requests_refused_total', 'jobwatch_sse_streams_ended_total', 'jobwatch_task_jobs_total', 'jobwatch_task_run_seconds', 'jobwatch_task_wait_seconds']);

const events = (families: Map<string, Family>, outcome: string) => sampleValue(families, 'jobwatch_ingest_events_total', { outcome });
const count = (families: Map<string, Family>, histogram: string) => sampleValue(families, `${histogram}_count`);

describe('GET /metrics', () => {
  test('every documented family is there with its type, and each has a sample from the first scrape', async () => {
    const { baseUrl } = await start();

    const families = await scrape(baseUrl);

    for (const [name, type] of Object.entries(FAMILIES)) {
      expect({ name, type: families.get(name)?.type }).toEqual({ name, type });
      if (!SAMPLED_LATER.has(name)) {
        expect({ name, samples: families.get(name)!.samples.length > 0 }).toEqual({ name, samples: true });
      }
    }
    expect(events(families, 'accepted')).toBe(0);
    expect(sampleValue(families, 'jobwatch_recovery_duration_seconds')).toBeGreaterThan(0);
  }, 30_000);

  test('ingest moves the event counters by outcome, the request histogram and the log families; retained gauges count on scrape', async () => {
    const { baseUrl } = await start({ DAILY_EVENT_LIMIT: '4' });
    const cookie = await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const connection = await createConnection(baseUrl, cookie, 'metrics');
    const before = await scrape(baseUrl);
    // one timestamp for all: the same event sent twice must be the same event, even across a millisecond tick
    const atMs = Date.now();
    const event = (id: string) => jobEvent(connection.id, id, atMs);

    // 2 accepted, 1 skipped (the same event twice), 1 rejected
    expect((await ingest(baseUrl, connection.apiKey, [event('a'), event('a'), event('b'), { type: 'nonsense' }])).body).toMatchObject({ accepted: 2, skipped: 1, rejected: 1 });
    // the daily limit of 4 leaves 2: 2 accepted, 1 truncated
    expect((await ingest(baseUrl, connection.apiKey, [event('c'), event('d'), event('e')])).body).toMatchObject({ accepted: 2, truncated: 1 });
    // nothing left: 429, its 2 events truncated
    expect((await ingest(baseUrl, connection.apiKey, [event('f'), event('g')])).status).toBe(429);
    expect((await ingest(baseUrl, 'sk_not-a-key', [event('h')])).status).toBe(401);
    const after = await scrape(baseUrl);

    expect(events(after, 'accepted') - events(before, 'accepted')).toBe(4);
    expect(events(after, 'skipped') - events(before, 'skipped')).toBe(1);
    expect(events(after, 'rejected') - events(before, 'rejected')).toBe(1);
    expect(events(after, 'truncated') - events(before, 'truncated')).toBe(3);
    expect(sampleValue(after, 'jobwatch_ingest_requests_refused_total', { code: 'DAILY_LIMIT_EXCEEDED' })).toBe(1);
    expect(sampleValue(after, 'jobwatch_ingest_requests_refused_total', { code: 'UNAUTHORIZED' })).toBe(1);
    expect(count(after, 'jobwatch_ingest_request_duration_seconds') - count(before, 'jobwatch_ingest_request_duration_seconds')).toBe(4);
    // two ingest records reached the log, each in a group commit of its own (they were sent one after the other)
    expect(count(after, 'jobwatch_log_group_commit_records') - count(before, 'jobwatch_log_group_commit_records')).toBeGreaterThanOrEqual(2);
    expect(count(after, 'jobwatch_log_append_duration_seconds')).toBe(count(after, 'jobwatch_log_group_commit_records'));
    expect(count(after, 'jobwatch_log_fsync_duration_seconds') - count(before, 'jobwatch_log_fsync_duration_seconds')).toBeGreaterThanOrEqual(2); // FSYNC=always
    expect(sampleValue(after, 'jobwatch_log_written_bytes_total')).toBeGreaterThan(sampleValue(before, 'jobwatch_log_written_bytes_total'));
    expect(sampleValue(after, 'jobwatch_connections')).toBe(1);
    expect(sampleValue(after, 'jobwatch_jobs_retained')).toBe(4);
    expect(sampleValue(after, 'jobwatch_queues_retained')).toBe(1);
  }, 30_000);

  test('a snapshot moves its histogram and size; a restart reports its recovery', async () => {
    const { service, baseUrl, dir } = await start();
    const cookie = await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    await createConnection(baseUrl, cookie, 'snapshots');

    await service.snapshotNow();
    const families = await scrape(baseUrl);

    expect(count(families, 'jobwatch_snapshot_duration_seconds')).toBe(1);
    expect(sampleValue(families, 'jobwatch_snapshot_bytes')).toBeGreaterThan(0);
    expect(sampleValue(families, 'jobwatch_log_bytes_since_snapshot')).toBe(0);
    await service.stop();
    running.splice(0);
    const again = await start({}, dir);
    const restarted = await scrape(again.baseUrl);
    expect(sampleValue(restarted, 'jobwatch_recovery_records_replayed')).toBe(again.service.opened.recovery.recordsReplayed);
    expect(sampleValue(restarted, 'jobwatch_recovery_duration_seconds')).toBeCloseTo(again.service.opened.recovery.durationMs / 1000, 6);
    expect(sampleValue(restarted, 'jobwatch_connections')).toBe(1);
  }, 30_000);

  test('wrong passwords count as login failures, and the limiter\'s 429s as refusals', async () => {
    const { baseUrl } = await start();
    const attempt = () =>
      fetch(`${baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN_EMAIL, password: 'not the password at all' }),
      }).then((response) => response.status);

    const statuses: number[] = [];
    for (let index = 0; index < 7; index++) statuses.push(await attempt());
    const families = await scrape(baseUrl);

    expect(sampleValue(families, 'jobwatch_login_failures_total')).toBe(statuses.filter((status) => status === 401).length);
    expect(sampleValue(families, 'jobwatch_login_limiter_refusals_total')).toBe(statuses.filter((status) => status === 429).length);
    expect(statuses).toContain(429);
  }, 30_000);

  test('an open live stream is a subscriber; when the client leaves, the stream is counted as ended', async () => {
    const { baseUrl } = await start();
    const cookie = await login(baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const client = new AbortController();
    const stream = await fetch(`${baseUrl}/api/events/stream`, { headers: { cookie }, signal: client.signal });
    expect(stream.status).toBe(200);
    await stream.body!.getReader().read(); // the first message: the stream is open

    expect(sampleValue(await scrape(baseUrl), 'jobwatch_sse_subscribers')).toBe(1);
    client.abort();
    const deadline = Date.now() + 10_000;
    let families = await scrape(baseUrl);
    while (sampleValue(families, 'jobwatch_sse_subscribers') !== 0 && Date.now() < deadline) {
      await Bun.sleep(50);
      families = await scrape(baseUrl);
    }

    expect(sampleValue(families, 'jobwatch_sse_subscribers')).toBe(0);
    const ended = families.get('jobwatch_sse_streams_ended_total')!.samples.reduce((sum, sample) => sum + sample.value, 0);
    expect(ended).toBe(1);
    expect(sampleValue(families, 'jobwatch_sse_slow_clients_dropped_total')).toBe(0);
  }, 30_000);
});

describe('access to GET /metrics', () => {
  test('with METRICS_TOKEN set, a missing or wrong bearer token gets 401 in the error envelope', async () => {
    const { baseUrl } = await start();
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer scrape-token-0123456788' }, { authorization: 'Bearer short' }, { authorization: TOKEN }];
    for (const headers of attempts) {
      const response = await fetch(`${baseUrl}/metrics`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = (await response.json()) as { error: { code: string; message: string; docs_url: string } };
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(body.error.message).toContain('METRICS_TOKEN');
    }
  }, 30_000);

  test('without METRICS_TOKEN, metrics are off: 404 in the envelope saying how to turn them on', async () => {
    const { baseUrl } = await start({ METRICS_TOKEN: '' });
    const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('set METRICS_TOKEN') });
  }, 30_000);

  test('a METRICS_TOKEN shorter than 16 characters or with spaces stops start-up, naming the variable', () => {
    for (const METRICS_TOKEN of ['fifteen-chars15', 'sixteen chars ok']) {
      expect(() => loadConfig({ METRICS_TOKEN })).toThrow(ConfigError);
      expect(() => loadConfig({ METRICS_TOKEN })).toThrow(/METRICS_TOKEN/);
    }
    expect(loadConfig({ METRICS_TOKEN: 'sixteen-chars-ok' }).metricsToken).toBe('sixteen-chars-ok');
  });
});
