/** Queues: depth, consumers, whether paused, and the range's throughput, latency, failure rate, health bar and chart; each links to its page with its controls. */
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

export const RANGES = ['1h', '6h', '24h', '7d'] as const;

const perMinute = (perSecond: number | null) => (perSecond === null ? '–' : `${(perSecond * 60).toFixed(perSecond * 60 < 10 ? 2 : 0)}/min`);
const percent = (ratio: number | null) => (ratio === null ? '–' : `${(ratio * 100).toFixed(1)} %`);

export function QueuesPage() {
  const query = route.value.query;
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '') ? query.get('range')! : '24h';
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const params = queryString({ timeRange: range, page, limit: 50, connectionId: query.get('connectionId'), paused: query.get('paused') });
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
      <FilterBar
        fields={[
          ...(connections.value.length > 1 ? [{ key: 'connectionId', label: 'Connection', options: connections.value.map((c): [string, string] => [c.id, c.name]) }] : []),
          { key: 'paused', label: 'Paused', options: [['true', 'paused'], ['false', 'not paused']] },
        ]}
      />
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

/** Whether the job system has the queue paused; nothing while it has not said. */
export function PausedBadge({ paused }: { paused: boolean | null }) {
  return paused === true ? <span class="badge state-paused">paused</span> : null;
}

export function QueueCard({ queue, range }: { queue: QueueView; range: string }) {
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
          <Link href={`/queues/${encodeURIComponent(queue.id)}`}>{queue.name}</Link>
        </h2>
        <PausedBadge paused={queue.paused} />
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
