/**
 * The task metrics on /metrics: per connection and task, counters of completed, failed,
 * retried and cancelled jobs and run and wait histograms whose `le` counts are exact, read
 * from the task metrics (the same ServiceMetrics the service serves, over real connection
 * actors); past METRICS_PROMETHEUS_TASKS_MAX the least active are summed as `(other)`.
 */
import { describe, expect, test } from 'bun:test';
import { ConnectionActor } from '../../actors/connection/connection-actor.ts';
import { ServiceMetrics } from '../../src/metrics/service-metrics.ts';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';
import { T0 } from '../support/test-app.ts';

const LIMITS = { dailyEventLimit: 0, dedupKeysMax: 1_000, maxJobsPerConnection: 10_000, retentionMs: 86_400_000 };

function connection(id: string): ConnectionActor {
  return new ConnectionActor(id, LIMITS);
}

async function scrape(actors: ConnectionActor[], seriesMax: number) {
  const metrics = new ServiceMetrics({ taskSeriesMax: seriesMax });
  metrics.watch({ connections: () => actors, openStreams: () => 0, logBytesSinceSnapshot: () => 0 });
  const { body } = await metrics.scrape();
  return parsePrometheusText(body);
}

describe('task metrics on /metrics', () => {
  test('given runs of a task, then its counters and its run time buckets are exact at every le', async () => {
    const prod = connection('c-prod');
    const runsMs = [0.5, 3, 3, 15, 200, 5_000, 5_000, 70_000];
    runsMs.forEach((runMs, at) => prod.taskMetrics.recordFinished('mail.send', 'emails', at === 0 ? 'failed' : 'completed', T0 + at, runMs, T0 + at));
    prod.taskMetrics.recordStarted('mail.send', 'emails', T0, 250, T0);
    prod.taskMetrics.recordTransition('mail.send', 'emails', 'retried', T0, T0);

    const families = await scrape([prod], 100);

    const labels = { connection_id: 'c-prod', task: 'mail.send' };
    expect(families.get('jobwatch_task_jobs_total')?.type).toBe('counter');
    expect(families.get('jobwatch_task_run_seconds')?.type).toBe('histogram');
    expect(sampleValue(families, 'jobwatch_task_jobs_total', { ...labels, outcome: 'completed' })).toBe(7);
    expect(sampleValue(families, 'jobwatch_task_jobs_total', { ...labels, outcome: 'failed' })).toBe(1);
    expect(sampleValue(families, 'jobwatch_task_jobs_total', { ...labels, outcome: 'retried' })).toBe(1);
    for (const [le, below] of [['0.001', 1], ['0.004', 3], ['0.016', 4], ['0.256', 5], ['4.096', 5], ['16.384', 7], ['65.536', 7], ['+Inf', 8]] as const) {
      expect({ le, count: sampleValue(families, 'jobwatch_task_run_seconds_bucket', { ...labels, le }) }).toEqual({ le, count: below });
    }
    expect(sampleValue(families, 'jobwatch_task_run_seconds_count', labels)).toBe(8);
    // the sum from the bins' middles: within 4.43% of the true 80.2215 s
    expect(Math.abs(sampleValue(families, 'jobwatch_task_run_seconds_sum', labels) - 80.2215) / 80.2215).toBeLessThan(0.045);
    expect(sampleValue(families, 'jobwatch_task_wait_seconds_count', labels)).toBe(1);
    expect(sampleValue(families, 'jobwatch_task_series_folded')).toBe(0);
  });

  test('given more tasks than the cap, then the most active are exported and each connection sums the rest as (other)', async () => {
    const prod = connection('c-prod');
    const staging = connection('c-staging');
    const finish = (actor: ConnectionActor, task: string, jobs: number) => {
      for (let at = 0; at < jobs; at++) actor.taskMetrics.recordFinished(task, null, 'completed', T0 + at, 10, T0 + at);
    };
    finish(prod, 'busy', 50);
    finish(prod, 'quiet', 2);
    finish(prod, 'rare', 1);
    finish(staging, 'middling', 10);

    const families = await scrape([prod, staging], 2);

    const completed = (connection_id: string, task: string) => sampleValue(families, 'jobwatch_task_jobs_total', { connection_id, task, outcome: 'completed' });
    expect(completed('c-prod', 'busy')).toBe(50);
    expect(completed('c-staging', 'middling')).toBe(10);
    expect(completed('c-prod', '(other)')).toBe(3);
    expect(() => completed('c-prod', 'quiet')).toThrow();
    expect(sampleValue(families, 'jobwatch_task_series_folded')).toBe(2);
    expect((await scrape([prod, staging], 0)).get('jobwatch_task_jobs_total')?.samples).toEqual([]);
  });

  test('given a day sealed after a scrape, then the next scrape counts it (the memo of sealed days follows them)', async () => {
    const prod = connection('c-prod');
    const metrics = new ServiceMetrics({ taskSeriesMax: 10 });
    metrics.watch({ connections: () => [prod], openStreams: () => 0, logBytesSinceSnapshot: () => 0 });
    const completed = async () => sampleValue(parsePrometheusText((await metrics.scrape()).body), 'jobwatch_task_jobs_total', { task: 'mail.send', outcome: 'completed' });
    prod.taskMetrics.recordFinished('mail.send', null, 'completed', T0, 10, T0);
    expect(await completed()).toBe(1);
    prod.taskMetrics.maintain(T0 + 2 * 86_400_000); // the day is sealed
    await Bun.sleep(1_100); // past the scrape's one-second reuse
    prod.taskMetrics.recordFinished('mail.send', null, 'completed', T0 + 1, 10, T0 + 2 * 86_400_000); // a late event reopens it
    expect(await completed()).toBe(2);
    prod.taskMetrics.maintain(T0 + 3 * 86_400_000);
    await Bun.sleep(1_100);
    expect(await completed()).toBe(2);
  });
});
