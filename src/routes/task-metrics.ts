/**
 * Task metrics: the per-task table and one measure's series over time (a viewer of the
 * connections' teams), and markers, which an operator of the connection's team or the
 * connection's API key (an agent, a CI step after a deploy) may add (src/http/access-rules.ts).
 * Times are ISO 8601; a step is a whole number of minutes, hours or days.
 */
import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import { validationError } from '../../actors/domain-error.ts';
import { MARKER_NAME_LENGTH_MAX } from '../../actors/metrics/markers.ts';
import { SERIES_MEASURES, SPARK_MEASURES } from '../../actors/metrics/task-metrics-query.ts';
import { connectionActorForKey } from '../../actors/services/ingest-service.ts';
import { TASK_SORT_KEYS } from '../../actors/services/task-metrics-service.ts';
import type { AppDeps } from '../app-deps.ts';
import { bearerToken } from '../http/api-key.ts';
import { accessOf } from '../http/access-guard.ts';
import { noteAuditApiKey, noteAuditTarget } from '../http/audit-trail.ts';
import { bodyReader, FORM_BODY_BYTES_MAX } from '../http/read-body.ts';
import { model, validBody, validQuery } from '../http/validate.ts';
import { connectionIdParam, literals, sortOrderParam } from './list-params.ts';

const DAY_MS = 86_400_000;
/** the longest range a read may ask for: ten years (the longest the day tier can be configured to keep) */
const RANGE_MS_MAX = 3_660 * DAY_MS;
const STEP_UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: DAY_MS };

const instant = (description: string) => Type.String({ minLength: 1, maxLength: 40, description });
const taskParam = () => Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'task name; `(other)` names the series folded past the cap' }));
const queueParam = () => Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));
const RANGE_PARAMS = {
  connectionId: connectionIdParam(),
  from: Type.Optional(instant('start of the range (ISO 8601); default 24 hours before `to`')),
  to: Type.Optional(instant('end of the range (ISO 8601); default now')),
};

export const TaskMetricsParams = model(
  Type.Object({
    ...RANGE_PARAMS,
    queue: queueParam(),
    spark: literals(SPARK_MEASURES, { default: 'throughput', description: "the measure of each row's `spark` line" }),
    sortBy: literals(TASK_SORT_KEYS, { default: 'task' }),
    sortOrder: sortOrderParam('asc'),
  }),
);

export const SeriesParams = model(
  Type.Object({
    ...RANGE_PARAMS,
    task: taskParam(),
    queue: queueParam(),
    measure: literals(SERIES_MEASURES, { default: 'counts' }),
    step: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}[mhd]$', description: 'step between points: `5m`, `1h`, `1d`...; default the finest that gives at most 300 points' })),
  }),
);

export const MarkerListParams = model(Type.Object({ ...RANGE_PARAMS }));

export const CreateMarkerBody = model(
  Type.Object(
    {
      connectionId: Type.String({ minLength: 1, maxLength: 64 }),
      name: Type.String({ minLength: 1, maxLength: MARKER_NAME_LENGTH_MAX }),
      at: Type.Optional(instant('the moment it marks (ISO 8601); default now')),
    },
    { additionalProperties: false },
  ),
);

function instantMs(field: string, text: string | undefined, fallbackMs: number): number {
  if (text === undefined) return fallbackMs;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw validationError(field, 'must be an ISO 8601 date-time');
  return ms;
}

/** [from, to) of a query: `to` defaults to now, `from` to a day before it. */
function rangeOf(query: { from?: string; to?: string }, nowMs: number): { fromMs: number; toMs: number } {
  const toMs = instantMs('to', query.to, nowMs);
  const fromMs = instantMs('from', query.from, toMs - DAY_MS);
  if (fromMs >= toMs) throw validationError('from', 'must be before `to`');
  if (toMs - fromMs > RANGE_MS_MAX) throw validationError('from', 'the range may be at most ten years');
  return { fromMs, toMs };
}

function stepMsOf(step: string | undefined): number | undefined {
  if (step === undefined) return undefined;
  return Number(step.slice(0, -1)) * STEP_UNIT_MS[step.slice(-1)]!;
}

export function taskMetricsRoutes(deps: AppDeps) {
  const { engine, taskMetrics } = deps;
  const body = bodyReader(deps);
  return new Elysia({ name: 'task-metrics' })
    .get('/api/metrics/tasks', (context) => {
      const query = validQuery(TaskMetricsParams, context.query);
      const range = rangeOf(query, engine.clock.nowMs());
      return taskMetrics.tasks(accessOf(context), { ...range, connectionId: query.connectionId, queue: query.queue, spark: query.spark, sortBy: query.sortBy, sortOrder: query.sortOrder });
    })
    .get('/api/metrics/series', (context) => {
      const query = validQuery(SeriesParams, context.query);
      const range = rangeOf(query, engine.clock.nowMs());
      return taskMetrics.series(accessOf(context), { ...range, connectionId: query.connectionId, task: query.task, queue: query.queue, measure: query.measure, stepMs: stepMsOf(query.step) });
    })
    .get('/api/markers', (context) => {
      const query = validQuery(MarkerListParams, context.query);
      return { data: taskMetrics.listMarkers(accessOf(context), { ...rangeOf(query, engine.clock.nowMs()), connectionId: query.connectionId }) };
    })
    .post(
      '/api/markers',
      async (context) => {
        // with a bearer token, the API key (checked here); else the session the access guard checked; either before the body is read
        const token = bearerToken(context.request);
        const keyed = token === null ? null : connectionActorForKey(engine, token);
        if (keyed !== null) noteAuditApiKey(context.request, engine.accounts.connections.get(keyed.connectionId)?.teamId ?? null, keyed.connectionId);
        const input = validBody(CreateMarkerBody, await body.json(context.request, FORM_BODY_BYTES_MAX));
        const atMs = instantMs('at', input.at, engine.clock.nowMs());
        const created =
          keyed === null
            ? await taskMetrics.addMarkerAsUser(accessOf(context), input.connectionId, input.name, atMs)
            : await taskMetrics.addMarkerWithKey(keyed, input.connectionId, input.name, atMs);
        noteAuditTarget(context.request, created.id);
        context.set.status = 201;
        return created;
      },
      { parse: 'none' },
    )
    .delete('/api/markers/:id', async (context) => {
      await taskMetrics.deleteMarker(accessOf(context), context.params.id);
      context.set.status = 204;
    });
}
