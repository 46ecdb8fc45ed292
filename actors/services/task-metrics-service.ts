/**
 * Task metrics for the routes: the per-task table and the series of one measure over the
 * connections a user may read (their teams' connections: ConnectionService.readableActors),
 * and markers: read with the viewer role, added and deleted with the operator role (a
 * deploy or a configuration change is an operator's to mark, docs/security.md), or added
 * with the connection's API key for that connection only. Answers carry times as ISO strings.
 */
import type { Access } from '../accounts/access.ts';
import type { Role } from '../accounts/roles.ts';
import type { ConnectionActor } from '../connection/connection-actor.ts';
import { DomainError, validationError } from '../domain-error.ts';
import type { Engine } from '../engine.ts';
import { readWindow } from '../metrics/metric-reads.ts';
import { TASK_METRICS_DEFAULTS, TIER_WIDTH_MS, type TierName } from '../metrics/metric-tiers.ts';
import type { Marker } from '../metrics/markers.ts';
import { seriesPoints, stepWindow, taskTable, type Figures, type SeriesMeasure, type SeriesPoint, type SparkMeasure, type TaskRow } from '../metrics/task-metrics-query.ts';
import type { ConnectionService } from './connection-service.ts';

const iso = (ms: number): string => new Date(ms).toISOString();

/** The points one series read may answer with: 90 days by the hour (2,160) fit. */
export const SERIES_POINTS_MAX = 2_500;
/** Steps a series read picks from when none is asked for: the finest giving at most AUTO_POINTS points. */
const AUTO_STEPS_MS = [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000];
const AUTO_POINTS = 300;

/** Who adds and deletes markers from the dashboard; src/http/access-rules.ts gives the routes the same role. */
export const MARKER_WRITE_ROLE: Role = 'operator';

export const TASK_SORT_KEYS = ['task', 'completed', 'failed', 'retried', 'cancelled', 'throughput', 'failureRate', 'runP50', 'runP95', 'runP99', 'waitP50', 'waitP95', 'waitP99'] as const;
export type TaskSortKey = (typeof TASK_SORT_KEYS)[number];

export interface TasksQuery {
  connectionId?: string;
  queue?: string;
  fromMs: number;
  toMs: number;
  spark: SparkMeasure;
  sortBy: TaskSortKey;
  sortOrder: 'asc' | 'desc';
}

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

export interface SeriesQuery {
  connectionId?: string;
  task?: string;
  queue?: string;
  measure: SeriesMeasure;
  fromMs: number;
  toMs: number;
  stepMs?: number;
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

export class TaskMetricsService {
  constructor(
    private readonly engine: Engine,
    private readonly connections: ConnectionService,
  ) {}

  tasks(access: Access, query: TasksQuery): TasksAnswer {
    const nowMs = this.engine.clock.nowMs();
    const actors = this.connections.readableActors(access, query.connectionId);
    const table = taskTable(
      actors.map((actor) => actor.taskMetrics),
      { fromMs: query.fromMs, toMs: query.toMs, nowMs, queue: query.queue, spark: query.spark },
    );
    const window = table?.window ?? readWindow(this.engine.limits.taskMetrics ?? TASK_METRICS_DEFAULTS, query.fromMs, query.toMs, nowMs);
    const previous = table?.previous ?? window;
    const rows = table?.rows ?? [];
    rows.sort(compareRows(query.sortBy, query.sortOrder));
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

  series(access: Access, query: SeriesQuery): SeriesAnswer {
    if ((query.measure === 'depth' || query.measure === 'age') && (query.queue === undefined || query.task !== undefined)) {
      throw validationError('queue', `the ${query.measure} measure is a queue's: name a queue and no task`);
    }
    const nowMs = this.engine.clock.nowMs();
    const actors = this.connections.readableActors(access, query.connectionId);
    const settings = actors[0]?.taskMetrics.settings ?? this.engine.limits.taskMetrics ?? TASK_METRICS_DEFAULTS;
    const read = readWindow(settings, query.fromMs, query.toMs, nowMs);
    const widthMs = TIER_WIDTH_MS[read.tier];
    const stepMs = query.stepMs ?? autoStep(read.toMs - read.fromMs, widthMs);
    if (stepMs % widthMs !== 0) {
      throw validationError('step', `from ${iso(read.fromMs)} on, metrics are kept in ${read.tier} buckets: the step must be a whole number of ${read.tier}s`);
    }
    const window = stepWindow(read, stepMs);
    const steps = Math.ceil((window.toMs - window.fromMs) / stepMs);
    if (steps > SERIES_POINTS_MAX) throw validationError('step', `the range holds ${steps} steps of this size; at most ${SERIES_POINTS_MAX}: choose a longer step`);
    const points = seriesPoints(actors.map((actor) => actor.taskMetrics), { task: query.task, queue: query.queue }, query.measure, window, stepMs);
    return {
      measure: query.measure,
      from: iso(window.fromMs),
      to: iso(window.toMs),
      tier: window.tier,
      stepMs,
      points,
      markers: markersOf(actors, window.fromMs, window.toMs),
    };
  }

  listMarkers(access: Access, query: { connectionId?: string; fromMs: number; toMs: number }): PublicMarker[] {
    return markersOf(this.connections.readableActors(access, query.connectionId), query.fromMs, query.toMs);
  }

  /** A marker added by a signed-in user: an operator of the connection's team (another team's connection is not found). */
  async addMarkerAsUser(access: Access, connectionId: string, name: string, atMs: number): Promise<PublicMarker> {
    access.requireConnection(connectionId, MARKER_WRITE_ROLE, 'add markers');
    const actor = this.engine.connection(connectionId);
    if (actor === undefined) throw new DomainError('NOT_FOUND', 'connection not found');
    return this.addMarker(actor, name, atMs, access.user.email);
  }

  /** A marker added with the connection's API key (an agent or a CI step): it may name only that connection. */
  async addMarkerWithKey(actor: ConnectionActor, connectionId: string, name: string, atMs: number): Promise<PublicMarker> {
    if (connectionId !== actor.connectionId) throw new DomainError('FORBIDDEN', "the API key's connection is not the one named");
    return this.addMarker(actor, name, atMs, 'api key');
  }

  /** Any marker of the connection, whoever added it (a key's too): the operators of its team keep its charts. */
  async deleteMarker(access: Access, markerId: string): Promise<void> {
    const actor = this.connections.readableActors(access, undefined).find((candidate) => candidate.markers.has(markerId));
    if (actor === undefined) throw new DomainError('NOT_FOUND', 'marker not found');
    access.requireConnection(actor.connectionId, MARKER_WRITE_ROLE, 'delete markers');
    await this.engine.commit(actor.markers.decideDelete(actor.connectionId, markerId));
  }

  private async addMarker(actor: ConnectionActor, name: string, atMs: number, addedBy: string): Promise<PublicMarker> {
    const record = actor.decideAddMarker(name, atMs, addedBy, this.engine.clock.nowMs());
    await this.engine.commit(record);
    return publicMarker(actor.connectionId, record.marker);
  }
}

function markersOf(actors: readonly ConnectionActor[], fromMs: number, toMs: number): PublicMarker[] {
  return actors
    .flatMap((actor) => actor.markers.within(fromMs, toMs).map((marker) => publicMarker(actor.connectionId, marker)))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

function publicMarker(connectionId: string, marker: Marker): PublicMarker {
  return { id: marker.id, connectionId, name: marker.name, at: iso(marker.atMs), createdAt: iso(marker.createdAtMs), addedBy: marker.addedBy };
}

function autoStep(rangeMs: number, widthMs: number): number {
  return AUTO_STEPS_MS.find((stepMs) => stepMs >= widthMs && stepMs % widthMs === 0 && rangeMs / stepMs <= AUTO_POINTS) ?? AUTO_STEPS_MS[AUTO_STEPS_MS.length - 1]!;
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
