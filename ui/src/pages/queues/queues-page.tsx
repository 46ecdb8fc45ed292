/** Queues: depth, consumers and the range's throughput, latency, failure rate, health bar and chart. */
import { api, queryString } from '../../api/client.ts';
import type { QueuePage, QueueView } from '../../api/types.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { FilterBar } from '../../components/filter-bar.tsx';
import { HealthBar } from '../../components/health-bar.tsx';
import { Link } from '../../components/link.tsx';
import { PagePager } from '../../components/page-pager.tsx';
import { QueueChart } from '../../components/queue-chart.tsx';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { shortDuration } from '../../lib/time.ts';
import { route, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';

const RANGES = ['1h', '6h', '24h', '7d'] as const;

const perMinute = (perSecond: number | null) => (perSecond === null ? '–' : `${(perSecond * 60).toFixed(perSecond * 60 < 10 ? 2 : 0)}/min`);
const percent = (ratio: number | null) => (ratio === null ? '–' : `${(ratio * 100).toFixed(1)} %`);

export function QueuesPage() {
  const query = route.value.query;
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '') ? query.get('range')! : '24h';
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const params = queryString({ timeRange: range, page, limit: 50, connectionId: query.get('connectionId') });
  const { data, error } = useLiveReload(() => api<QueuePage>('GET', `/api/queues${params}`), (batch) => batch.queues.length > 0 || batch.jobs.length > 0, params);
  const queues = data.value;
  return (
    <>
      <div class="page-head">
        <h1>Queues</h1>
        <nav class="tabs" aria-label="Time range">
          {RANGES.map((each) => (
            <Link key={each} class="tab" href={withQuery({ range: each === '24h' ? undefined : each, page: undefined })} aria-current={each === range ? 'page' : undefined}>
              {each}
            </Link>
          ))}
        </nav>
      </div>
      {connections.value.length > 1 && <FilterBar fields={[{ key: 'connectionId', label: 'Connection', options: connections.value.map((c) => [c.id, c.name]) }]} />}
      <ErrorText error={error.value} />
      {queues === null ? (
        <p class="muted">Loading…</p>
      ) : queues.data.length === 0 ? (
        <EmptyState title="No queues yet">Queues appear when the agent reports queue depth or a job names its queue.</EmptyState>
      ) : (
        <>
          {queues.data.map((queue) => (
            <QueueCard key={queue.id} queue={queue} range={range} />
          ))}
          <PagePager {...queues.pagination} />
        </>
      )}
    </>
  );
}

function QueueCard({ queue, range }: { queue: QueueView; range: string }) {
  const connectionName = connections.value.find((c) => c.id === queue.connectionId)?.name;
  const metrics: Array<[string, string]> = [
    ['depth', queue.depth.toLocaleString()],
    ['consumers', String(queue.consumers)],
    [`throughput (${range})`, perMinute(queue.throughput)],
    ['avg latency', queue.avgLatencyMs === null ? '–' : shortDuration(queue.avgLatencyMs)],
    ['failure rate', percent(queue.failureRate)],
  ];
  return (
    <section class="card queue-card" aria-label={`Queue ${queue.name}`}>
      <div class="row">
        <h2 class="mono">
          <Link href={`/jobs?queue=${encodeURIComponent(queue.name)}&connectionId=${queue.connectionId}`}>{queue.name}</Link>
        </h2>
        {connectionName && connections.value.length > 1 && <span class="muted">{connectionName}</span>}
      </div>
      <div class="metrics">
        {metrics.map(([label, value]) => (
          <div class="metric" key={label}>
            <strong>{value}</strong>
            <span>{label}</span>
          </div>
        ))}
      </div>
      {queue.healthBar && (
        <>
          <HealthBar buckets={queue.healthBar.buckets} label={`Health of ${queue.name} over ${range}`} />
          <QueueChart buckets={queue.healthBar.buckets} title={`Finished jobs per bucket, ${range}`} />
        </>
      )}
    </section>
  );
}
