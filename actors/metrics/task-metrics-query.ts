/**
 * The answers of GET /api/metrics/tasks and GET /api/metrics/series over the task metrics
 * of the connections a caller may read: each connection is read on its own
 * (metric-reads.ts), their sums merged, and only then turned into rates and percentiles.
 */
import { COUNT_KINDS, GAUGE, MeasureSum, PART, type CountKind, type DurationSummary } from './measure-sum.ts';
import type { MetricSeries } from './metric-series.ts';
import { TIER_NAMES, TIER_WIDTH_MS } from './metric-tiers.ts';
import { ceilTo, floorTo, forEachStep, mergeSums, readWindow, sumRange, type ReadWindow } from './metric-reads.ts';
import type { TaskMetrics } from './task-metrics.ts';

/** The name the reads give the series folded past the cap. */
export const OTHER_SERIES = '(other)';

export interface Figures {
  completed: number;
  failed: number;
  retried: number;
  cancelled: number;
  /** finished (completed + failed) per minute over the range */
  throughputPerMinute: number;
  /** failed / finished; null when nothing finished */
  failureRate: number | null;
  runTime: DurationSummary;
  waitTime: DurationSummary;
}

export const SPARK_MEASURES = ['throughput', 'failureRate', 'runP50', 'runP95', 'runP99', 'waitP95'] as const;
export type SparkMeasure = (typeof SPARK_MEASURES)[number];

export interface TaskRow {
  task: string;
  /** the `(other)` row: how many series were folded into it; null for a task of its own */
  folded: number | null;
  current: Figures;
  previous: Figures;
  /** the chosen measure over the range in about SPARK_POINTS steps of whole buckets (null: nothing to measure in a step) */
  spark: Array<number | null>;
}

export const SPARK_POINTS = 24;

export interface TaskTable {
  window: ReadWindow;
  previous: ReadWindow;
  rows: TaskRow[];
  /** series folded into `(other)` in the connections read */
  foldedSeries: number;
}

/** A task's series in one connection, narrowed to one queue when `queue` is given (the fold for `(other)`). */
export function seriesOfTask(metrics: TaskMetrics, task: string, queue: string | undefined): MetricSeries[] {
  const own = metrics.seriesOfTask(task, queue);
  if (own.length > 0 || task !== OTHER_SERIES) return own;
  return queue === undefined && metrics.otherTasks !== null ? [metrics.otherTasks.series] : [];
}

/**
 * One row per task name across `connections` over [fromMs, toMs), with the period of the
 * same length before it. `queue` keeps a task's jobs of that queue only.
 */
export function taskTable(connections: readonly TaskMetrics[], query: { fromMs: number; toMs: number; nowMs: number; queue?: string; spark: SparkMeasure }): TaskTable | null {
  const settings = connections[0]?.settings;
  if (settings === undefined) return null;
  const window = readWindow(settings, query.fromMs, query.toMs, query.nowMs);
  const lengthMs = window.toMs - window.fromMs;
  const previous = readWindow(settings, window.fromMs - lengthMs, window.fromMs, query.nowMs);
  const names = new Set<string>();
  let foldedSeries = 0;
  for (const metrics of connections) {
    for (const name of metrics.taskNames()) if (query.queue === undefined || metrics.seriesOfTask(name, query.queue).length > 0) names.add(name);
    if (metrics.otherTasks !== null && query.queue === undefined) {
      names.add(OTHER_SERIES);
      foldedSeries += metrics.otherTasks.folded;
    }
  }
  const sparkStepMs = sparkStep(lengthMs);
  const sparkWindow = stepWindow(window, sparkStepMs);
  const sparkParts = query.spark === 'throughput' || query.spark === 'failureRate' ? PART.counts : query.spark === 'waitP95' ? PART.wait : PART.run;
  const rows: TaskRow[] = [];
  for (const task of names) {
    const seriesByConnection = connections.map((metrics) => seriesOfTask(metrics, task, query.queue));
    const current = mergeSums(seriesByConnection.map((series) => sumRange(series, window, PART.counts | PART.run | PART.wait)));
    const before = mergeSums(seriesByConnection.map((series) => sumRange(series, previous, PART.counts | PART.run | PART.wait)));
    const spark: Array<number | null> = [];
    forEachStep(seriesByConnection, sparkWindow, sparkStepMs, sparkParts, (sum) => spark.push(sparkValue(sum, query.spark, sparkStepMs)));
    rows.push({
      task,
      folded: task === OTHER_SERIES && !connections.some((metrics) => metrics.seriesOfTask(task).length > 0) ? foldedSeries : null,
      current: figuresOf(current, window),
      previous: figuresOf(before, previous),
      spark,
    });
  }
  rows.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  return { window, previous, rows, foldedSeries };
}

/**
 * About SPARK_POINTS steps of whole buckets of the coarsest tier that fits (4 days for 90
 * days, 7 hours for 7 days): each step is then read from few buckets, and a table of 200
 * tasks stays quick. The steps are aligned to their size, so the line may begin a little
 * before the range.
 */
function sparkStep(lengthMs: number): number {
  const exact = lengthMs / SPARK_POINTS;
  const widthMs = [...TIER_NAMES].reverse().map((tier) => TIER_WIDTH_MS[tier]).find((width) => width <= exact) ?? TIER_WIDTH_MS.minute;
  return ceilTo(exact, widthMs);
}

export function figuresOf(sum: MeasureSum, window: ReadWindow): Figures {
  const counts = Object.fromEntries(COUNT_KINDS.map((kind) => [kind, sum.count(kind)])) as Record<CountKind, number>;
  return {
    ...counts,
    throughputPerMinute: sum.finished / ((window.toMs - window.fromMs) / 60_000),
    failureRate: sum.failureRate,
    runTime: sum.summary('run'),
    waitTime: sum.summary('wait'),
  };
}

function sparkValue(sum: MeasureSum, measure: SparkMeasure, stepMs: number): number | null {
  switch (measure) {
    case 'throughput':
      return sum.finished / (stepMs / 60_000);
    case 'failureRate':
      return sum.failureRate;
    case 'runP50':
      return sum.percentile('run', 500);
    case 'runP95':
      return sum.percentile('run', 950);
    case 'runP99':
      return sum.percentile('run', 990);
    case 'waitP95':
      return sum.percentile('wait', 950);
  }
}

export const SERIES_MEASURES = ['counts', 'runtime', 'wait', 'depth', 'age'] as const;
export type SeriesMeasure = (typeof SERIES_MEASURES)[number];

export type SeriesPoint =
  | { at: string; completed: number; failed: number; retried: number; cancelled: number }
  | { at: string; count: number; p50: number | null; p95: number | null; p99: number | null }
  | { at: string; samples: number; mean: number | null; max: number | null };

export interface SeriesSelector {
  task?: string;
  queue?: string;
}

/** The series a selector names in one connection: a task (in a queue), a queue, or (neither) every task. */
export function selectedSeries(metrics: TaskMetrics, selector: SeriesSelector): MetricSeries[] {
  if (selector.task !== undefined) return seriesOfTask(metrics, selector.task, selector.queue);
  if (selector.queue !== undefined) {
    const queue = metrics.seriesOfQueue(selector.queue);
    return queue === undefined ? [] : [queue];
  }
  const all: MetricSeries[] = [];
  for (const name of metrics.taskNames()) all.push(...metrics.seriesOfTask(name));
  if (metrics.otherTasks !== null) all.push(metrics.otherTasks.series);
  return all;
}

/**
 * A window aligned to `stepMs` (steps start on multiples of it since the epoch, so the
 * points of a range stay put as it moves); `stepMs` must be a multiple of the window's
 * tier width (the route checks it).
 */
export function stepWindow(window: ReadWindow, stepMs: number): ReadWindow {
  return { tier: window.tier, fromMs: floorTo(window.fromMs, stepMs), toMs: ceilTo(window.toMs, stepMs) };
}

export function seriesPoints(connections: readonly TaskMetrics[], selector: SeriesSelector, measure: SeriesMeasure, window: ReadWindow, stepMs: number): SeriesPoint[] {
  const parts = measure === 'counts' ? PART.counts : measure === 'runtime' ? PART.run : measure === 'wait' ? PART.wait : PART.gauges;
  const points: SeriesPoint[] = [];
  forEachStep(connections.map((metrics) => selectedSeries(metrics, selector)), window, stepMs, parts, (sum, at) => points.push(pointOf(sum, measure, new Date(window.fromMs + at * stepMs).toISOString())));
  return points;
}

function pointOf(sum: MeasureSum, measure: SeriesMeasure, at: string): SeriesPoint {
  switch (measure) {
    case 'counts':
      return { at, completed: sum.count('completed'), failed: sum.count('failed'), retried: sum.count('retried'), cancelled: sum.count('cancelled') };
    case 'runtime':
    case 'wait': {
      const { count, p50, p95, p99 } = sum.summary(measure === 'runtime' ? 'run' : 'wait');
      return { at, count, p50, p95, p99 };
    }
    case 'depth':
    case 'age': {
      const gauges = sum.gauges;
      const samples = gauges[GAUGE.samples]!;
      const total = gauges[measure === 'depth' ? GAUGE.depthSum : GAUGE.ageSumMs]!;
      const max = gauges[measure === 'depth' ? GAUGE.depthMax : GAUGE.ageMaxMs]!;
      return { at, samples, mean: samples === 0 ? null : total / samples, max: samples === 0 ? null : max };
    }
  }
}
