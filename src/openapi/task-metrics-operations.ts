/** What the OpenAPI document says about the task metrics and marker routes (docs/api.md#task-metrics is the guide). */
import { Type } from '@sinclair/typebox';
import { CreateMarkerBody, MarkerListParams, SeriesParams, TaskMetricsParams } from '../routes/task-metrics.ts';
import type { OperationDoc } from './operations.ts';
import * as Reply from './task-metrics-models.ts';

const RANGE_TEXT =
  'A range is read at the finest tier that still keeps its start (minutes for 48 hours, hours for 90 days, days for 2 years by default), ' +
  "its edges rounded outwards to that tier's buckets (the answer's `from` and `to`), and no later than the current bucket.";

export const TASK_METRICS_OPERATIONS: Record<string, OperationDoc> = {
  'GET /api/metrics/tasks': {
    tag: 'Metrics',
    summary: 'One row per task over a range: counts, failure rate, run and wait time percentiles, beside the period just before',
    description:
      `${RANGE_TEXT} Tasks of several connections with the same name are merged (counts added, histograms merged). ` +
      '`queue` keeps the jobs of that queue only. Past the per-connection series cap the least recently active tasks are folded into an `(other)` row ' +
      '(`folded` says how many; `foldedSeries` in total). Nulls sort last.',
    auth: 'session',
    query: Type.Partial(TaskMetricsParams.schema),
    success: { 200: { description: 'The rows', json: Reply.TaskMetricsReply } },
    errors: [],
  },
  'GET /api/metrics/series': {
    tag: 'Metrics',
    summary: 'One measure of a task, a task in a queue, a queue or every task, step by step over a range, with the markers in it',
    description:
      `${RANGE_TEXT} Steps start on multiples of the step since the epoch (UTC); a step must be a whole number of the tier's buckets, ` +
      'and a range at most 2,500 steps (90 days by the hour fit) (else 400 naming `step`). Measures: `counts` (completed, failed, retried, cancelled), `runtime` and `wait` ' +
      '(p50, p95, p99 in ms), and for a queue `depth` and `age` (of its oldest queued job, ms), sampled once a minute.',
    auth: 'session',
    query: Type.Partial(SeriesParams.schema),
    success: { 200: { description: 'The points, oldest first', json: Reply.SeriesReply } },
    errors: [],
  },
  'GET /api/markers': {
    tag: 'Metrics',
    summary: "Markers of the user's connections within a range",
    auth: 'session',
    query: Type.Partial(MarkerListParams.schema),
    success: { 200: { description: 'The markers, oldest first', json: Reply.MarkerList } },
    errors: [],
  },
  'POST /api/markers': {
    tag: 'Metrics',
    summary: 'Mark a moment (a deploy, a configuration change) on every chart of a connection',
    description:
      "With a session, or with the connection's API key (`Authorization: Bearer sk_...`, e.g. from a CI step), which may name only its own connection (403). " +
      '`at` defaults to now; it may lie as far back as the day tier keeps. At most 1,000 markers per connection: past it the oldest goes.',
    auth: 'sessionOrApiKey',
    body: CreateMarkerBody.schema,
    success: { 201: { description: 'Added', json: Reply.Marker } },
    errors: ['NOT_FOUND', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'],
  },
  'DELETE /api/markers/:id': {
    tag: 'Metrics',
    summary: 'Delete a marker',
    auth: 'session',
    success: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
};
