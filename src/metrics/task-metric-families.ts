/**
 * Task metrics on /metrics: per connection and task, the jobs that completed, failed, were
 * retried or cancelled (counters), and run and wait time histograms, read at scrape time
 * from each connection's day tier (everything the task metrics keep, two years by default).
 * A counter falls only when a day leaves the day tier or a series folds into `(other)`,
 * which Prometheus reads as a reset.
 *
 * Labels are bounded: at most `seriesMax` (connection, task) pairs are exported, the most
 * active (most jobs finished) first; each connection's others are summed into a
 * task="(other)" series, and `jobwatch_task_series_folded` says how many.
 *
 * Histogram buckets are edges of the task metrics' own bin layout (powers of 4 ms: 1 ms,
 * 4 ms ... 4,194 s), so every `le` count is exact; `_sum` is the bins' middles times their
 * counts (within 4.43% of the true sum), since the task metrics keep no sums.
 * The sealed day buckets never change once written, so their total is memoized per tier
 * and only the open days are added at each scrape.
 */
import type { Registry } from 'prom-client';
import { binLowerMs, binValueMs, BINS_PER_DOUBLING, BIN_COUNT } from '../../actors/metrics/duration-bins.ts';
import type { BucketTier } from '../../actors/metrics/bucket-tier.ts';
import { COUNT_KINDS, MeasureSum, PART, type DurationKind } from '../../actors/metrics/measure-sum.ts';
import type { TaskMetrics } from '../../actors/metrics/task-metrics.ts';
import { OTHER_SERIES } from '../../actors/metrics/task-metrics-query.ts';

export interface TaskMetricsSource {
  connectionId: string;
  taskMetrics: TaskMetrics;
}

/** Bins whose lower edge is a `le` bound: every second power of two ms (1 ms, 4 ms, 16 ms ... ~70 min). */
const LE_BINS: number[] = Array.from({ length: 12 }, (_, at) => 1 + 2 * at * BINS_PER_DOUBLING).filter((bin) => bin < BIN_COUNT);

interface ExportedSeries {
  connectionId: string;
  task: string;
  sum: MeasureSum;
}

interface MetricValue {
  labels: Record<string, string>;
  value: number;
  metricName?: string;
}

const memos = new WeakMap<BucketTier, { version: number; sum: MeasureSum }>();

/** Everything a series' day tier holds: the sealed days from the memo (recounted when they changed), the open ones added now. */
function dayTotals(tiers: readonly BucketTier[]): MeasureSum {
  const total = new MeasureSum();
  for (const tier of tiers) {
    let memo = memos.get(tier);
    if (memo === undefined || memo.version !== tier.sealedVersion) {
      const sum = new MeasureSum();
      tier.addAll(sum, PART.counts | PART.run | PART.wait, 'sealed');
      memos.set(tier, (memo = { version: tier.sealedVersion, sum }));
    }
    total.add(memo.sum);
    tier.addAll(total, PART.counts | PART.run | PART.wait, 'open');
  }
  return total;
}

/** The series to export: the `seriesMax` most active (connection, task) pairs, and per connection the rest as `(other)`. */
export function exportedSeries(sources: Iterable<TaskMetricsSource>, seriesMax: number): { series: ExportedSeries[]; folded: number } {
  const all: ExportedSeries[] = [];
  for (const { connectionId, taskMetrics } of sources) {
    for (const task of taskMetrics.taskNames()) all.push({ connectionId, task, sum: dayTotals(taskMetrics.seriesOfTask(task).map((series) => series.tiers.day)) });
    if (taskMetrics.otherTasks !== null) all.push({ connectionId, task: OTHER_SERIES, sum: dayTotals([taskMetrics.otherTasks.series.tiers.day]) });
  }
  if (seriesMax === 0) return { series: [], folded: all.length };
  all.sort((a, b) => b.sum.finished - a.sum.finished || (a.connectionId < b.connectionId ? -1 : a.connectionId > b.connectionId ? 1 : a.task < b.task ? -1 : 1));
  const kept = all.slice(0, seriesMax);
  const others = new Map<string, ExportedSeries>();
  for (const rest of all.slice(seriesMax)) {
    let other = others.get(rest.connectionId);
    if (other === undefined) others.set(rest.connectionId, (other = { connectionId: rest.connectionId, task: OTHER_SERIES, sum: new MeasureSum() }));
    other.sum.add(rest.sum);
  }
  // a connection's own (other) fold, when kept, takes in the series folded here
  for (const series of kept) {
    const other = others.get(series.connectionId);
    if (series.task === OTHER_SERIES && other !== undefined) {
      series.sum.add(other.sum);
      others.delete(series.connectionId);
    }
  }
  return { series: [...kept, ...others.values()], folded: Math.max(0, all.length - seriesMax) };
}

function histogramValues(series: readonly ExportedSeries[], kind: DurationKind, name: string): MetricValue[] {
  const values: MetricValue[] = [];
  for (const { connectionId, task, sum } of series) {
    const labels = { connection_id: connectionId, task };
    const count = kind === 'run' ? sum.runCount : sum.waitCount;
    const bins = count === 0 ? null : sum.bins(kind);
    let below = 0;
    let next = 0;
    let seconds = 0;
    for (let bin = 0; bin < BIN_COUNT; bin++) {
      while (next < LE_BINS.length && bin === LE_BINS[next]) {
        values.push({ labels: { ...labels, le: String(binLowerMs(bin) / 1000) }, value: below, metricName: `${name}_bucket` });
        next++;
      }
      const inBin = bins?.[bin] ?? 0;
      below += inBin;
      seconds += (inBin * binValueMs(bin)) / 1000;
    }
    values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${name}_bucket` });
    values.push({ labels, value: seconds, metricName: `${name}_sum` });
    values.push({ labels, value: count, metricName: `${name}_count` });
  }
  return values;
}

/** Registers the families on `registry`; each scrape reads `sources()` afresh. */
export function registerTaskMetricFamilies(registry: Registry, sources: () => Iterable<TaskMetricsSource>, seriesMax: number): void {
  // one read serves the four families of a scrape: prom-client asks them one after another
  let cached: { atMs: number; read: ReturnType<typeof exportedSeries> } | null = null;
  const read = () => {
    const nowMs = performance.now();
    if (cached === null || nowMs - cached.atMs > 1_000) cached = { atMs: nowMs, read: exportedSeries(sources(), seriesMax) };
    return cached.read;
  };
  const family = (name: string, help: string, type: 'counter' | 'histogram' | 'gauge', values: () => MetricValue[]) =>
    registry.registerMetric({ name, help, type, get: () => ({ name, help, type, values: values(), aggregator: 'sum' }) } as unknown as Parameters<Registry['registerMetric']>[0]);
  family('jobwatch_task_jobs_total', 'Jobs of a task that completed, failed, were retried or cancelled, as the task metrics keep them (up to METRICS_DAY_RETENTION_DAYS)', 'counter', () =>
    read().series.flatMap(({ connectionId, task, sum }) => COUNT_KINDS.map((outcome) => ({ labels: { connection_id: connectionId, task, outcome }, value: sum.count(outcome) }))),
  );
  family('jobwatch_task_run_seconds', "A task's run times (started to finished); buckets are exact, the sum is estimated from the bins", 'histogram', () => histogramValues(read().series, 'run', 'jobwatch_task_run_seconds'));
  family('jobwatch_task_wait_seconds', "A task's wait times (enqueued to started); buckets are exact, the sum is estimated from the bins", 'histogram', () => histogramValues(read().series, 'wait', 'jobwatch_task_wait_seconds'));
  family('jobwatch_task_series_folded', `Task series summed into task="${OTHER_SERIES}" because more than METRICS_PROMETHEUS_TASKS_MAX are kept`, 'gauge', () => [{ labels: {}, value: read().folded }]);
}
