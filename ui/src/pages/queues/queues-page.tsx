/**
 * Queues: one compact row each (depth, consumers, the range's throughput, wait, failure
 * rate and health bar, whether paused, and what the job system itself counts), and the
 * charts of the queues asked for under the table. The range, the open charts and the paused
 * filter are in the address; each queue's name leads to its page, with its controls.
 */
import { api, queryString } from '../../api/client.ts';
import type { QueuePage, QueueView } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { FilterBar } from '../../components/filter-bar.tsx';
import { HealthBar } from '../../components/health-bar.tsx';
import { Link } from '../../components/link.tsx';
import { PagePager } from '../../components/page-pager.tsx';
import { QueueChart } from '../../components/queue-chart.tsx';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { shortDuration } from '../../lib/time.ts';
import { navigate, route, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';
import { jobSystemFacts, rate } from './queue-figures.ts';
import { PausedBadge } from './paused-badge.tsx';

const PAUSED_FILTER = { key: 'paused', label: 'Paused', options: [['true', 'paused'], ['false', 'not paused']] as Array<[string, string]> };

export const RANGES = ['1h', '6h', '24h', '7d'] as const;
/** An hour: a busy queue's throughput reads in jobs per minute, and the health bar's minutes show what just happened. */
export const DEFAULT_RANGE = '1h';

const percent = (ratio: number | null) => (ratio === null ? '–' : `${(ratio * 100).toFixed(1)} %`);

export function QueuesPage() {
  const query = route.value.query;
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '') ? query.get('range')! : DEFAULT_RANGE;
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const params = queryString({ timeRange: range, page, limit: 50, connectionId: query.get('connectionId'), paused: query.get('paused') });
  const { data, error } = useLiveReload(() => api<QueuePage>('GET', `/api/queues${params}`), (batch) => batch.queues.length > 0 || batch.jobs.length > 0, params);
  const charted = (query.get('charts') ?? '').split(',').filter((id) => id !== '');
  const toggleChart = (id: string) => {
    const next = charted.includes(id) ? charted.filter((other) => other !== id) : [...charted, id];
    navigate(withQuery({ charts: next.join(',') }), { replace: true });
  };
  const several = connections.value.length > 1;
  const columns: Column<QueueView>[] = [
    {
      id: 'name',
      label: 'Queue',
      class: 'col-task',
      cell: (q) => (
        <>
          <Link href={`/queues/${encodeURIComponent(q.id)}`}>{q.name}</Link> <PausedBadge paused={q.paused} />{' '}
          <button type="button" class="small" aria-pressed={charted.includes(q.id)} aria-label={`Chart of ${q.name}`} onClick={() => toggleChart(q.id)}>
            Chart
          </button>
          {several && <span class="muted"> · {connections.value.find((c) => c.id === q.connectionId)?.name}</span>}
          <small class="muted">{jobSystemFacts(q.extensions)}</small>
        </>
      ),
    },
    { id: 'depth', label: 'Depth', class: 'col-count num', cell: (q) => q.depth.toLocaleString() },
    { id: 'consumers', label: 'Consumers', class: 'col-duration num hide-narrow', cell: (q) => q.consumers },
    { id: 'throughput', label: 'Throughput', class: 'col-rate num', cell: (q) => rate(q.throughput) },
    { id: 'latency', label: 'Avg wait', class: 'col-duration num hide-narrow', cell: (q) => (q.avgLatencyMs === null ? '–' : shortDuration(q.avgLatencyMs)) },
    { id: 'failures', label: 'Failed', class: 'col-count num', cell: (q) => percent(q.failureRate) },
    { id: 'health', label: `Health, ${range}`, class: 'hide-narrow', cell: (q) => q.healthBar && <HealthBar buckets={q.healthBar.buckets} label={`Health of ${q.name} over ${range}`} /> },
  ];
  const queues = data.value;
  return (
    <>
      <div class="page-head">
        <h1>Queues</h1>
        <nav class="tabs" aria-label="Time range">
          {RANGES.map((each) => (
            <Link key={each} class="tab" href={withQuery({ range: each === DEFAULT_RANGE ? undefined : each, page: undefined })} aria-current={each === range ? 'page' : undefined}>
              {each}
            </Link>
          ))}
        </nav>
      </div>
      <FilterBar fields={[...(several ? [{ key: 'connectionId', label: 'Connection', options: connections.value.map((c): [string, string] => [c.id, c.name]) }] : []), PAUSED_FILTER]} />
      <ErrorText error={error.value} />
      {queues === null ? (
        <p class="muted">Loading…</p>
      ) : queues.data.length === 0 ? (
        <EmptyState title="No queues yet">Queues appear when the agent reports queue depth or a job names its queue.</EmptyState>
      ) : (
        <>
          <DataTable label="Queues" rows={queues.data} columns={columns} />
          <PagePager {...queues.pagination} />
          {queues.data.map(
            (q) =>
              charted.includes(q.id) &&
              q.healthBar && <QueueChart key={q.id} buckets={q.healthBar.buckets} title={`${q.name}: finished jobs per bucket, ${range}`} />,
          )}
        </>
      )}
    </>
  );
}
