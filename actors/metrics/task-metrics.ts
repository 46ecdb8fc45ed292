/**
 * A connection's task metrics: one series per (task, queue) pair and one per queue, each
 * in minute, hour and day tiers (metric-series.ts), written from the records' contents
 * alone (the connection actor calls in when the newest event moves a job into a new state,
 * and retention's run samples the queues), kept for far longer than the jobs, and in the
 * snapshot. A task's figures across its queues are the merge of its pairs' series.
 *
 * Series are capped per connection (`seriesMax` pairs, and as many queues): a new one past
 * the cap folds the least recently active one into the `(other)` series, whose figures
 * the reads report under that name, with how many series it holds.
 */
import { binOfMs } from './duration-bins.ts';
import { COUNT_INDEX, type CountKind } from './measure-sum.ts';
import { MetricSeries, type SeriesSnapshot } from './metric-series.ts';
import type { TaskMetricsSettings } from './metric-tiers.ts';

export interface TaskMetricsSnapshot {
  tasks: Array<{ task: string; queue: string | null; series: SeriesSnapshot }>;
  queues: Array<{ queue: string; series: SeriesSnapshot }>;
  otherTasks: { folded: number; series: SeriesSnapshot } | null;
  otherQueues: { folded: number; series: SeriesSnapshot } | null;
}

/** A fold of capped series: what it holds and how many series went into it. */
export interface FoldedSeries {
  series: MetricSeries;
  folded: number;
}

export class TaskMetrics {
  /** task name -> queue (null: the job named none) -> series */
  private readonly tasks = new Map<string, Map<string | null, MetricSeries>>();
  private taskSeriesCount = 0;
  private readonly queues = new Map<string, MetricSeries>();
  otherTasks: FoldedSeries | null = null;
  otherQueues: FoldedSeries | null = null;

  constructor(readonly settings: TaskMetricsSettings) {}

  /** A job started at `startedAtMs` after waiting `waitMs` since it was enqueued. */
  recordStarted(task: string, queue: string | null, startedAtMs: number, waitMs: number, recordAtMs: number): void {
    if (!Number.isFinite(waitMs)) return;
    const bin = binOfMs(waitMs);
    this.write(task, queue, startedAtMs, recordAtMs, (bucket) => bucket.addBin('wait', bin, 1));
  }

  /** A job completed or failed at `finishedAtMs`, having run `runMs` (null: its start is unknown). */
  recordFinished(task: string, queue: string | null, outcome: 'completed' | 'failed', finishedAtMs: number, runMs: number | null, recordAtMs: number): void {
    const index = COUNT_INDEX[outcome];
    const bin = runMs === null || !Number.isFinite(runMs) ? null : binOfMs(runMs);
    this.write(task, queue, finishedAtMs, recordAtMs, (bucket) => {
      bucket.addCount(index, 1);
      if (bin !== null) bucket.addBin('run', bin, 1);
    });
  }

  /** A job entered `retrying` or `cancelled` at `atMs`. */
  recordTransition(task: string, queue: string | null, kind: Extract<CountKind, 'retried' | 'cancelled'>, atMs: number, recordAtMs: number): void {
    const index = COUNT_INDEX[kind];
    this.write(task, queue, atMs, recordAtMs, (bucket) => bucket.addCount(index, 1));
  }

  /**
   * One sample of a queue's depth and the age of its oldest waiting job (0 when none waits).
   * A queue without a series gets one only once something waits in it.
   */
  sampleQueue(queue: string, atMs: number, depth: number, oldestAgeMs: number): void {
    const depthValue = Math.max(0, Math.round(depth));
    const ageMs = Math.max(0, Math.round(oldestAgeMs));
    if (!this.queues.has(queue) && depthValue === 0 && ageMs === 0) return;
    this.queueSeries(queue).record(atMs, atMs, this.settings, (bucket) => bucket.addGauges(1, depthValue, depthValue, ageMs, ageMs));
  }

  /** Seals buckets whose period has passed and drops what no tier keeps any more (retention's run). */
  maintain(nowMs: number): void {
    for (const [task, byQueue] of this.tasks) {
      for (const [queue, series] of byQueue) {
        if (!series.maintain(nowMs, this.settings)) continue;
        byQueue.delete(queue);
        this.taskSeriesCount--;
      }
      if (byQueue.size === 0) this.tasks.delete(task);
    }
    for (const [queue, series] of this.queues) if (series.maintain(nowMs, this.settings)) this.queues.delete(queue);
    if (this.otherTasks?.series.maintain(nowMs, this.settings)) this.otherTasks = null;
    if (this.otherQueues?.series.maintain(nowMs, this.settings)) this.otherQueues = null;
  }

  /** The task names with a series of their own. */
  taskNames(): IterableIterator<string> {
    return this.tasks.keys();
  }

  /** A task's series: the one of `queue`, or every queue's (`queue` undefined). */
  seriesOfTask(task: string, queue?: string | null): MetricSeries[] {
    const byQueue = this.tasks.get(task);
    if (byQueue === undefined) return [];
    if (queue === undefined) return [...byQueue.values()];
    const one = byQueue.get(queue);
    return one === undefined ? [] : [one];
  }

  /** The queues a task's jobs named. */
  queuesOfTask(task: string): Array<string | null> {
    return [...(this.tasks.get(task)?.keys() ?? [])];
  }

  seriesOfQueue(queue: string): MetricSeries | undefined {
    return this.queues.get(queue);
  }

  queueNames(): IterableIterator<string> {
    return this.queues.keys();
  }

  get seriesCount(): { tasks: number; queues: number } {
    return { tasks: this.taskSeriesCount, queues: this.queues.size };
  }

  /** Heap held by every series (an estimate from the sizes of their arrays; the bench measures the real heap beside it). */
  get byteSize(): number {
    let bytes = 0;
    for (const byQueue of this.tasks.values()) for (const series of byQueue.values()) bytes += series.byteSize;
    for (const series of this.queues.values()) bytes += series.byteSize;
    return bytes + (this.otherTasks?.series.byteSize ?? 0) + (this.otherQueues?.series.byteSize ?? 0);
  }

  toSnapshot(): TaskMetricsSnapshot {
    const tasks: TaskMetricsSnapshot['tasks'] = [];
    for (const [task, byQueue] of this.tasks) for (const [queue, series] of byQueue) tasks.push({ task, queue, series: series.toSnapshot() });
    const fold = (other: FoldedSeries | null) => (other === null ? null : { folded: other.folded, series: other.series.toSnapshot() });
    return {
      tasks,
      queues: [...this.queues].map(([queue, series]) => ({ queue, series: series.toSnapshot() })),
      otherTasks: fold(this.otherTasks),
      otherQueues: fold(this.otherQueues),
    };
  }

  /**
   * Adds one part of a snapshot (`taskMetricsParts` splits one into parts): a restore loads
   * them one after another into empty metrics.
   */
  loadSnapshotPart(part: TaskMetricsSnapshot): void {
    if (!Array.isArray(part?.tasks) || !Array.isArray(part.queues)) throw new RangeError('task metrics in the snapshot are not series lists');
    for (const { task, queue, series } of part.tasks) {
      let byQueue = this.tasks.get(task);
      if (byQueue === undefined) this.tasks.set(task, (byQueue = new Map()));
      if (!byQueue.has(queue)) this.taskSeriesCount++;
      byQueue.set(queue, MetricSeries.fromSnapshot(series));
    }
    for (const { queue, series } of part.queues) this.queues.set(queue, MetricSeries.fromSnapshot(series));
    const fold = (other: TaskMetricsSnapshot['otherTasks']) => (other === null ? null : { folded: other.folded, series: MetricSeries.fromSnapshot(other.series) });
    if (part.otherTasks != null) this.otherTasks = fold(part.otherTasks);
    if (part.otherQueues != null) this.otherQueues = fold(part.otherQueues);
  }

  private write(task: string, queue: string | null, atMs: number, recordAtMs: number, apply: Parameters<MetricSeries['record']>[3]): void {
    this.taskSeries(task, queue).record(atMs, recordAtMs, this.settings, apply);
    if (queue !== null) this.queueSeries(queue).record(atMs, recordAtMs, this.settings, apply);
  }

  private taskSeries(task: string, queue: string | null): MetricSeries {
    const existing = this.tasks.get(task)?.get(queue);
    if (existing !== undefined) return existing;
    if (this.taskSeriesCount >= this.settings.seriesMax) this.foldLeastActiveTask();
    let byQueue = this.tasks.get(task);
    if (byQueue === undefined) this.tasks.set(task, (byQueue = new Map()));
    const series = new MetricSeries();
    byQueue.set(queue, series);
    this.taskSeriesCount++;
    return series;
  }

  private queueSeries(queue: string): MetricSeries {
    const existing = this.queues.get(queue);
    if (existing !== undefined) return existing;
    if (this.queues.size >= this.settings.seriesMax) this.foldLeastActiveQueue();
    const series = new MetricSeries();
    this.queues.set(queue, series);
    return series;
  }

  /** Ties go to the name that sorts first, so that every replay folds the same one. */
  private foldLeastActiveTask(): void {
    let victim: { task: string; queue: string | null; series: MetricSeries } | null = null;
    for (const [task, byQueue] of this.tasks) {
      for (const [queue, series] of byQueue) {
        if (victim === null || series.lastActiveMs < victim.series.lastActiveMs || (series.lastActiveMs === victim.series.lastActiveMs && compareKeys(task, queue, victim.task, victim.queue) < 0)) {
          victim = { task, queue, series };
        }
      }
    }
    if (victim === null) return;
    const byQueue = this.tasks.get(victim.task)!;
    byQueue.delete(victim.queue);
    if (byQueue.size === 0) this.tasks.delete(victim.task);
    this.taskSeriesCount--;
    this.otherTasks = foldInto(this.otherTasks, victim.series);
  }

  private foldLeastActiveQueue(): void {
    let victim: [string, MetricSeries] | null = null;
    for (const entry of this.queues) {
      if (victim === null || entry[1].lastActiveMs < victim[1].lastActiveMs || (entry[1].lastActiveMs === victim[1].lastActiveMs && entry[0] < victim[0])) victim = entry;
    }
    if (victim === null) return;
    this.queues.delete(victim[0]);
    this.otherQueues = foldInto(this.otherQueues, victim[1]);
  }
}

function foldInto(other: FoldedSeries | null, series: MetricSeries): FoldedSeries {
  const into = other ?? { series: new MetricSeries(), folded: 0 };
  into.series.absorb(series);
  into.folded++;
  return into;
}

function compareKeys(taskA: string, queueA: string | null, taskB: string, queueB: string | null): number {
  if (taskA !== taskB) return taskA < taskB ? -1 : 1;
  const a = queueA ?? '';
  const b = queueB ?? '';
  return a === b ? 0 : a < b ? -1 : 1;
}

/** A snapshot in parts of about `bytesPerPart` bytes of buckets each (the folds go with the first). */
export function* taskMetricsParts(snapshot: TaskMetricsSnapshot, bytesPerPart: number): Generator<TaskMetricsSnapshot> {
  let part: TaskMetricsSnapshot = { tasks: [], queues: [], otherTasks: snapshot.otherTasks, otherQueues: snapshot.otherQueues };
  let bytes = 0;
  const full = (): boolean => bytes >= bytesPerPart;
  const next = (): TaskMetricsSnapshot => {
    const done = part;
    part = { tasks: [], queues: [], otherTasks: null, otherQueues: null };
    bytes = 0;
    return done;
  };
  for (const entry of snapshot.tasks) {
    part.tasks.push(entry);
    bytes += seriesBytes(entry.series);
    if (full()) yield next();
  }
  for (const entry of snapshot.queues) {
    part.queues.push(entry);
    bytes += seriesBytes(entry.series);
    if (full()) yield next();
  }
  if (part.tasks.length > 0 || part.queues.length > 0 || part.otherTasks !== null || part.otherQueues !== null) yield part;
}

function seriesBytes(series: SeriesSnapshot): number {
  return series.tiers.minute.bytes.length + series.tiers.hour.bytes.length + series.tiers.day.bytes.length;
}
