/**
 * Metrics: one row per task over the range (counts, failure rate, run and wait time
 * percentiles against the period before, and a sparkline of the chosen measure), sortable
 * by any column; a task's name opens its charts. Range, sort, measure and task are in the
 * address, so a view can be bookmarked and shared.
 */
import { api, queryString } from '../../api/client.ts';
import type { SparkMeasure, TaskRow, TasksAnswer } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { FilterBar } from '../../components/filter-bar.tsx';
import { Link } from '../../components/link.tsx';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { navigate, route, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';
import { change, duration, percent, rate } from './format.ts';
import { RANGES, rangeOf } from './metric-range.ts';
import { Sparkline } from './sparkline.tsx';
import { TaskView } from './task-view.tsx';

type Row = TaskRow & { id: string };

const SPARKS: Array<[SparkMeasure, string]> = [
  ['throughput', 'Throughput'],
  ['failureRate', 'Failure rate'],
  ['runP50', 'Run time p50'],
  ['runP95', 'Run time p95'],
  ['runP99', 'Run time p99'],
  ['waitP95', 'Wait p95'],
];

/** A figure with its change against the period before; `worse` says which way is bad. */
function compared(text: string, delta: string | null, worse: 'up' | 'down') {
  const bad = delta !== null && (delta.startsWith('+') ? worse === 'up' : worse === 'down');
  return (
    <>
      {text}
      {delta !== null && <small class={bad ? 'delta worse' : 'delta'}>{delta}</small>}
    </>
  );
}

const percentile = (kind: 'runTime' | 'waitTime', key: 'p50' | 'p95' | 'p99') => (row: Row) =>
  compared(duration(row.current[kind][key]), change(row.current[kind][key], row.previous[kind][key]), 'up');

function columns(address: (task: string) => string, spark: string): Column<Row>[] {
  return [
    { id: 'task', label: 'Task', sortKey: 'task', class: 'col-task', cell: (row) => (row.folded === null ? <Link href={address(row.task)}>{row.task}</Link> : <span title={`${row.folded} series folded past the cap`}>{row.task} <small class="muted">({row.folded})</small></span>) },
    { id: 'completed', label: 'Completed', sortKey: 'completed', class: 'num hide-narrow', cell: (row) => row.current.completed.toLocaleString() },
    { id: 'failed', label: 'Failed', sortKey: 'failed', class: 'num hide-narrow', cell: (row) => row.current.failed.toLocaleString() },
    { id: 'failureRate', label: 'Failure rate', sortKey: 'failureRate', class: 'num', cell: (row) => compared(percent(row.current.failureRate), change(row.current.failureRate, row.previous.failureRate), 'up') },
    { id: 'throughput', label: 'Throughput', sortKey: 'throughput', class: 'num hide-narrow', cell: (row) => rate(row.current.throughputPerMinute) },
    { id: 'runP50', label: 'p50', sortKey: 'runP50', class: 'num hide-narrow', cell: percentile('runTime', 'p50') },
    { id: 'runP95', label: 'p95', sortKey: 'runP95', class: 'num', cell: percentile('runTime', 'p95') },
    { id: 'runP99', label: 'p99', sortKey: 'runP99', class: 'num hide-narrow', cell: percentile('runTime', 'p99') },
    { id: 'waitP95', label: 'Wait p95', sortKey: 'waitP95', class: 'num hide-narrow', cell: percentile('waitTime', 'p95') },
    { id: 'retried', label: 'Retried', sortKey: 'retried', class: 'num hide-narrow', cell: (row) => row.current.retried.toLocaleString() },
    { id: 'spark', label: spark, class: 'col-spark', cell: (row) => <Sparkline values={row.spark} label={`${spark} of ${row.task}`} /> },
  ];
}

export function MetricsPage() {
  const query = route.value.query;
  const task = query.get('task');
  return task === null ? <TaskTable query={query} /> : <TaskView task={task} query={query} />;
}

function TaskTable({ query }: { query: URLSearchParams }) {
  const range = rangeOf(query);
  const sortBy = query.get('sort') ?? 'task';
  const order = query.get('order') === 'desc' ? 'desc' : 'asc';
  const spark = (SPARKS.find(([key]) => key === query.get('spark')) ?? SPARKS[0]!)[0];
  const params = { connectionId: query.get('connectionId'), queue: query.get('queue'), sortBy, sortOrder: order, spark };
  const key = queryString({ ...params, range: range.name });
  const { data, error } = useLiveReload(
    () => api<TasksAnswer>('GET', `/api/metrics/tasks${queryString({ ...params, from: new Date(Date.now() - range.ms).toISOString() })}`),
    () => false,
    key,
  );
  const answer = data.value;
  const rows: Row[] = (answer?.data ?? []).map((row) => ({ ...row, id: row.task }));
  const onSort = (column: string) => navigate(withQuery({ sort: column, order: column === sortBy && order === 'desc' ? 'asc' : 'desc' }), { replace: true });
  const sparkLabel = SPARKS.find(([each]) => each === spark)![1];
  return (
    <>
      <div class="page-head">
        <h1>Metrics</h1>
        <RangeTabs current={range.name} />
      </div>
      <div class="row">
        <FilterBar
          fields={[
            ...(connections.value.length > 1 ? [{ key: 'connectionId', label: 'Connection', options: connections.value.map((c): [string, string] => [c.id, c.name]) }] : []),
            { key: 'queue', label: 'Queue', placeholder: 'any queue' },
          ]}
        />
        <div class="filters">
          <label>
            <span>Sparkline</span>
            <select value={spark} onChange={(event) => navigate(withQuery({ spark: event.currentTarget.value === 'throughput' ? undefined : event.currentTarget.value }), { replace: true })}>
              {SPARKS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      <ErrorText error={error.value} />
      {answer === null ? (
        <p class="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <EmptyState title="No task metrics in this range">Figures appear as jobs start and finish; they are kept for months after the jobs themselves.</EmptyState>
      ) : (
        <>
          <div class="task-table">
            <DataTable label="Tasks" rows={rows} columns={columns((name) => withQuery({ task: name, sort: undefined, order: undefined, spark: undefined }), sparkLabel)} sort={{ by: sortBy, order, onSort }} />
          </div>
          <p class="muted small">
            {answer.tier === 'minute' ? 'By the minute' : answer.tier === 'hour' ? 'By the hour' : 'By the day'}, {new Date(answer.from).toLocaleString()} to {new Date(answer.to).toLocaleString()}; changes against the {range.name} before.
            {answer.foldedSeries > 0 && ` ${answer.foldedSeries} less active series are folded into (other): the connection keeps a limited number of series.`}
          </p>
        </>
      )}
    </>
  );
}

export function RangeTabs({ current }: { current: string }) {
  return (
    <nav class="tabs" aria-label="Time range">
      {RANGES.map(([name]) => (
        <Link key={name} class="tab" href={withQuery({ range: name, step: undefined })} aria-current={name === current ? 'page' : undefined}>
          {name}
        </Link>
      ))}
    </nav>
  );
}
