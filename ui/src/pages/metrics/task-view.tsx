/**
 * One task over the range: its run time percentiles, throughput and failure rate step by
 * step, with the connection's markers on every chart, and a form to add one (a deploy).
 */
import { useSignal } from '@preact/signals';
import { api, messageOf, queryString } from '../../api/client.ts';
import type { SeriesAnswer, SeriesPoint } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';
import { Link } from '../../components/link.tsx';
import { roleSomewhere, whyNotOnConnection } from '../../lib/roles.ts';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { navigate, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';
import { amount, duration, percent, rate } from './format.ts';
import { MetricChart, type ChartLine } from './metric-chart.tsx';
import { rangeOf, stepOf, stepsFor } from './metric-range.ts';
import { RangeTabs } from './metrics-page.tsx';

type Counts = Extract<SeriesPoint, { completed: number }>;
type Durations = Extract<SeriesPoint, { p50: number | null }>;

export function TaskView({ task, query }: { task: string; query: URLSearchParams }) {
  const range = rangeOf(query);
  const step = stepOf(query, range.ms);
  const connectionId = query.get('connectionId');
  const base = { task, queue: query.get('queue'), connectionId, step };
  const key = queryString({ ...base, range: range.name });
  const { data, error } = useLiveReload(
    async () => {
      const from = new Date(Date.now() - range.ms).toISOString();
      const [runtime, counts] = await Promise.all([
        api<SeriesAnswer>('GET', `/api/metrics/series${queryString({ ...base, from, measure: 'runtime' })}`),
        api<SeriesAnswer>('GET', `/api/metrics/series${queryString({ ...base, from, measure: 'counts' })}`),
      ]);
      return { runtime, counts };
    },
    () => false,
    key,
  );
  const series = data.value;
  const times = series?.counts.points.map((point) => Date.parse(point.at)) ?? [];
  const stepMs = series?.counts.stepMs ?? 60_000;
  const counts = (series?.counts.points ?? []) as Counts[];
  const runtime = (series?.runtime.points ?? []) as Durations[];
  const stepMinutes = stepMs / 60_000;
  const markers = series?.runtime.markers ?? [];
  const runLines: ChartLine[] = (['p50', 'p95', 'p99'] as const).map((key, at) => ({ label: key, tone: ['accent', 'warn', 'failed'][at]!, values: runtime.map((point) => point[key]) }));
  const throughputLines: ChartLine[] = [
    { label: 'completed', tone: 'succeeded', values: counts.map((point) => point.completed / stepMinutes) },
    { label: 'failed', tone: 'failed', values: counts.map((point) => point.failed / stepMinutes) },
  ];
  const failureLines: ChartLine[] = [{ label: 'failure rate', tone: 'failed', values: counts.map((point) => (point.completed + point.failed === 0 ? null : point.failed / (point.completed + point.failed))) }];
  return (
    <>
      <p>
        <Link href={withQuery({ task: undefined, step: undefined })}>← All tasks</Link>
      </p>
      <div class="page-head">
        <h1>{task}</h1>
        <RangeTabs current={range.name} />
        <label class="inline">
          <span>Step</span>
          <select value={step} onChange={(event) => navigate(withQuery({ step: event.currentTarget.value }), { replace: true })}>
            {stepsFor(range.ms).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorText error={error.value} />
      {series === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <Totals counts={counts} rangeMs={range.ms} />
          <MetricChart title={`Run time per ${step}`} times={times} stepMs={stepMs} lines={runLines} markers={markers} format={duration} />
          <MetricChart title={`Finished per minute, by ${step}`} times={times} stepMs={stepMs} lines={throughputLines} markers={markers} format={amount} stepped />
          <MetricChart title={`Failure rate per ${step}`} times={times} stepMs={stepMs} lines={failureLines} markers={markers} format={percent} />
          <AddMarker connectionId={connectionId ?? (connections.value.length === 1 ? connections.value[0]!.id : null)} />
        </>
      )}
    </>
  );
}

/** Completed, failed, failure rate and throughput over the whole range. */
function Totals({ counts, rangeMs }: { counts: Counts[]; rangeMs: number }) {
  const completed = counts.reduce((sum, point) => sum + point.completed, 0);
  const failed = counts.reduce((sum, point) => sum + point.failed, 0);
  const figures: Array<[string, string]> = [
    ['completed', completed.toLocaleString()],
    ['failed', failed.toLocaleString()],
    ['failure rate', percent(completed + failed === 0 ? null : failed / (completed + failed))],
    ['throughput', rate((completed + failed) / (rangeMs / 60_000))],
  ];
  return (
    <div class="metrics">
      {figures.map(([label, value]) => (
        <div class="metric" key={label}>
          <strong>{value}</strong>
          <span>{label}</span>
        </div>
      ))}
    </div>
  );
}

/** Who adds markers (the service checks it too: src/http/access-rules.ts). */
const MARKER_ROLE = 'operator';
const ADDING = 'add markers';

/**
 * A marker (a deploy, a change) on this connection's charts; with several connections, one
 * must be chosen first. An operator of the connection's team adds one; anyone else sees the
 * form disabled, with the reason.
 */
function AddMarker({ connectionId }: { connectionId: string | null }) {
  const name = useSignal('');
  const message = useSignal<string | null>(null);
  if (connectionId === null) {
    if (connections.value.length === 0) return null;
    return roleSomewhere(MARKER_ROLE) ? (
      <p class="muted">Choose one connection (in the address, or from the table's filter) to add a marker.</p>
    ) : (
      <p class="hint why">To {ADDING} you need the {MARKER_ROLE} role in a connection's team; you are a viewer in all your teams.</p>
    );
  }
  const whyNot = whyNotOnConnection(connectionId, MARKER_ROLE, ADDING);
  const add = async (event: Event) => {
    event.preventDefault();
    try {
      await api('POST', '/api/markers', { connectionId, name: name.value });
      name.value = '';
      message.value = 'Marker added; it shows on the charts at their next reload.';
    } catch (failure) {
      message.value = messageOf(failure);
    }
  };
  return (
    <form class="row marker-form" onSubmit={add}>
      <label>
        <span>Marker at now</span>
        <input value={name.value} maxLength={200} required placeholder="deploy v1.2.3" disabled={whyNot !== null} title={whyNot ?? undefined} onInput={(event) => (name.value = event.currentTarget.value)} />
      </label>
      <button type="submit" disabled={whyNot !== null} title={whyNot ?? undefined}>
        Add marker
      </button>
      {whyNot !== null && <small class="hint why">{whyNot}</small>}
      {message.value !== null && <span class="muted" role="status">{message.value}</span>}
    </form>
  );
}
