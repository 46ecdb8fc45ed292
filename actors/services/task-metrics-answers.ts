/**
 * The answers of the task metrics reads, finished from their parts: the per-task table
 * sorted, and a series' points with its markers. One engine finishes the parts of its own
 * read; with shards, the front finishes the parts every shard read for its connections
 * (src/shards/shard-merge.ts), with the same code, so the two answers are the same.
 */
import type { SumPart } from '../metrics/measure-sum.ts';
import type { ReadWindow } from '../metrics/metric-reads.ts';
import type { TierName } from '../metrics/metric-tiers.ts';
import { finishSeries, finishTaskTable, type Figures, type SeriesMeasure, type SeriesPoint, type SparkMeasure, type TaskRow, type TaskTableParts } from '../metrics/task-metrics-query.ts';

const iso = (ms: number): string => new Date(ms).toISOString();

export const TASK_SORT_KEYS = ['task', 'completed', 'failed', 'retried', 'cancelled', 'throughput', 'failureRate', 'runP50', 'runP95', 'runP99', 'waitP50', 'waitP95', 'waitP99'] as const;
export type TaskSortKey = (typeof TASK_SORT_KEYS)[number];

export interface TasksAnswer {
  from: string;
  to: string;
  previousFrom: string;
  previousTo: string;
  tier: TierName;
  /** series folded into the `(other)` row in the connections read */
  foldedSeries: number;
  data: TaskRow[];
}

/** A read of the task table before it is finished: its parts and how the rows are asked for. */
export interface TasksParts {
  spark: SparkMeasure;
  sortBy: TaskSortKey;
  sortOrder: 'asc' | 'desc';
  /** the windows read when no connection was (the table's own otherwise) */
  window: ReadWindow;
  previous: ReadWindow;
  table: TaskTableParts | null;
}

export interface PublicMarker {
  id: string;
  connectionId: string;
  name: string;
  at: string;
  createdAt: string;
  addedBy: string;
}

export interface SeriesAnswer {
  measure: SeriesMeasure;
  from: string;
  to: string;
  tier: TierName;
  stepMs: number;
  points: SeriesPoint[];
  markers: PublicMarker[];
}

/** A series read before it is finished: each step's sum as a part, and the markers in range. */
export interface SeriesParts {
  measure: SeriesMeasure;
  window: ReadWindow;
  stepMs: number;
  steps: SumPart[];
  markers: PublicMarker[];
}

/** The table of one or more reads of the same query (one per shard): parts added, rows sorted as asked. */
export function finishTasks(reads: readonly TasksParts[]): TasksAnswer {
  const asked = reads[0]!;
  const table = finishTaskTable(
    reads.flatMap((read) => read.table ?? []),
    asked.spark,
  );
  const window = table?.window ?? asked.window;
  const previous = table?.previous ?? asked.previous;
  const rows = table?.rows ?? [];
  rows.sort(compareRows(asked.sortBy, asked.sortOrder));
  return {
    from: iso(window.fromMs),
    to: iso(window.toMs),
    previousFrom: iso(previous.fromMs),
    previousTo: iso(previous.toMs),
    tier: window.tier,
    foldedSeries: table?.foldedSeries ?? 0,
    data: rows,
  };
}

/** The series of one or more reads of the same query; `markers` already in the order one read lists them. */
export function finishSeriesAnswer(reads: readonly SeriesParts[], markers: PublicMarker[]): SeriesAnswer {
  const { measure, window, stepMs } = reads[0]!;
  return {
    measure,
    from: iso(window.fromMs),
    to: iso(window.toMs),
    tier: window.tier,
    stepMs,
    points: finishSeries(
      reads.map((read) => read.steps),
      measure,
      window,
      stepMs,
    ),
    markers,
  };
}

/** Markers listed connection by connection, by time (stable: at the same time, in the connections' order). */
export function markersByTime(markers: PublicMarker[]): PublicMarker[] {
  return markers.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

function sortValue(row: TaskRow, key: TaskSortKey): string | number | null {
  const figures: Figures = row.current;
  switch (key) {
    case 'task':
      return row.task;
    case 'throughput':
      return figures.throughputPerMinute;
    case 'failureRate':
      return figures.failureRate;
    case 'runP50':
      return figures.runTime.p50;
    case 'runP95':
      return figures.runTime.p95;
    case 'runP99':
      return figures.runTime.p99;
    case 'waitP50':
      return figures.waitTime.p50;
    case 'waitP95':
      return figures.waitTime.p95;
    case 'waitP99':
      return figures.waitTime.p99;
    default:
      return figures[key];
  }
}

/** Nulls (nothing measured) last in either order; ties by task name. */
function compareRows(key: TaskSortKey, order: 'asc' | 'desc'): (a: TaskRow, b: TaskRow) => number {
  const sign = order === 'asc' ? 1 : -1;
  return (a, b) => {
    const x = sortValue(a, key);
    const y = sortValue(b, key);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * sign;
    }
    return a.task < b.task ? -1 : a.task > b.task ? 1 : 0;
  };
}
