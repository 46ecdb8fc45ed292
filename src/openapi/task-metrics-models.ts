/** TypeBox models of the task metrics answers, for the OpenAPI document (see response-models.ts). */
import { Type, type Static } from '@sinclair/typebox';
import type { DurationSummary } from '../../actors/metrics/measure-sum.ts';
import { TIER_NAMES } from '../../actors/metrics/metric-tiers.ts';
import { SERIES_MEASURES, type Figures, type TaskRow } from '../../actors/metrics/task-metrics-query.ts';
import type { PublicMarker, SeriesAnswer, TasksAnswer } from '../../actors/services/task-metrics-service.ts';
import { literals } from '../routes/list-params.ts';
import { closed, nullable, same, time } from './response-models.ts';

const count = (description?: string) => Type.Number({ minimum: 0, ...(description === undefined ? {} : { description }) });
const ms = (description: string) => nullable(Type.Number({ minimum: 0, description }));

const Durations = closed(
  {
    count: count('jobs measured'),
    p50: ms('median, ms (nearest rank, read from the histogram: within 5% of the exact value)'),
    p95: ms('95th percentile, ms'),
    p99: ms('99th percentile, ms'),
  },
  'a duration histogram read as percentiles; null when nothing was measured',
);

const TaskFigures = closed({
  completed: count(),
  failed: count(),
  retried: count('jobs that entered `retrying`'),
  cancelled: count('jobs that entered `cancelled`'),
  throughputPerMinute: Type.Number({ minimum: 0, description: 'finished (completed + failed) jobs per minute over the range' }),
  failureRate: nullable(Type.Number({ minimum: 0, maximum: 1, description: 'failed / finished; null when none finished' })),
  runTime: Durations,
  waitTime: Durations,
});

const TaskRowModel = closed({
  task: Type.String({ description: 'the task name, or `(other)` for the series folded past the cap' }),
  folded: nullable(Type.Integer({ minimum: 0, description: 'the `(other)` row: how many series it holds; null for a task of its own' })),
  current: TaskFigures,
  previous: closed(TaskFigures.properties, 'the same over the period of the same length just before'),
  spark: Type.Array(nullable(Type.Number()), { description: 'the `spark` measure over the range in about 24 steps of whole minutes, hours or days, aligned to their size (null: nothing measured in a step)' }),
});

export const TaskMetricsReply = closed({
  from: time('start of the range read (rounded down to the tier\'s buckets)'),
  to: time('end of the range read (exclusive)'),
  previousFrom: time(),
  previousTo: time(),
  tier: literals(TIER_NAMES, { description: 'the finest tier that keeps `from`: `minute` (48 h by default), `hour` (90 days), `day` (2 years)' }),
  foldedSeries: Type.Integer({ minimum: 0, description: 'series folded into `(other)` because the per-connection cap was reached' }),
  data: Type.Array(TaskRowModel),
});

export const Marker = closed({
  id: Type.String(),
  connectionId: Type.String(),
  name: Type.String(),
  at: time('the moment it marks'),
  createdAt: time(),
  addedBy: Type.String({ description: "the dashboard user's email, or `api key`" }),
});
export const MarkerList = closed({ data: Type.Array(Marker) });

const CountsPoint = closed({ at: time('start of the step'), completed: count(), failed: count(), retried: count(), cancelled: count() }, 'measure `counts`');
const DurationPoint = closed({ at: time('start of the step'), count: count(), p50: ms('ms'), p95: ms('ms'), p99: ms('ms') }, 'measures `runtime` and `wait`');
const GaugePoint = closed(
  { at: time('start of the step'), samples: count('samples taken (one a minute)'), mean: nullable(Type.Number()), max: nullable(Type.Number()) },
  'measures `depth` (jobs) and `age` (ms of the oldest queued job); null without a sample',
);

export const SeriesReply = closed({
  measure: literals(SERIES_MEASURES),
  from: time(),
  to: time(),
  tier: literals(TIER_NAMES),
  stepMs: Type.Integer({ minimum: 60_000 }),
  points: Type.Array(Type.Union([CountsPoint, DurationPoint, GaugePoint])),
  markers: Type.Array(Marker, { description: 'markers of the connections read, within the range' }),
});

same<DurationSummary, Static<typeof Durations>>(true);
same<Figures, Static<typeof TaskFigures>>(true);
same<TaskRow, Static<typeof TaskRowModel>>(true);
same<TasksAnswer, Static<typeof TaskMetricsReply>>(true);
same<PublicMarker, Static<typeof Marker>>(true);
same<SeriesAnswer, Static<typeof SeriesReply>>(true);
