/** One queue: whether it is paused, its controls and their latest outcomes, its figures over a range, and a way to its jobs. */
import { api, queryString } from '../../api/client.ts';
import type { QueueView } from '../../api/types.ts';
import { CommandList } from '../../components/command-list.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { HealthBar } from '../../components/health-bar.tsx';
import { Link } from '../../components/link.tsx';
import { QueueChart } from '../../components/queue-chart.tsx';
import { shortDuration } from '../../lib/time.ts';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { route, withQuery } from '../../router.ts';
import { connections } from '../../session.ts';
import { PausedBadge } from './paused-badge.tsx';
import { QueueControls } from './queue-controls.tsx';
import { jobSystemFacts, rate } from './queue-figures.ts';
import { DEFAULT_RANGE, RANGES } from './queues-page.tsx';

export function QueuePage({ id }: { id: string }) {
  const query = route.value.query;
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '') ? query.get('range')! : DEFAULT_RANGE;
  const path = `/api/queues/${encodeURIComponent(id)}${queryString({ timeRange: range })}`;
  // its own changes (a snapshot, a command's outcome) reload it
  const { data, error, reload } = useLiveReload(
    () => api<QueueView>('GET', path),
    (batch) => batch.queues.some((queue) => queue.id === id) || batch.commands.some((command) => command.target.kind === 'queue'),
    path,
  );
  const queue = data.value;
  const back = (
    <p>
      <Link href="/queues">← Queues</Link>
    </p>
  );
  if (queue === null) return <>{back}{error.value ? <ErrorText error={error.value} /> : <p class="muted">Loading…</p>}</>;
  const connectionName = connections.value.find((c) => c.id === queue.connectionId)?.name;
  return (
    <>
      {back}
      <div class="page-head">
        <h1 class="mono">{queue.name}</h1>
        <PausedBadge paused={queue.paused} />
        <span class="muted">
          {queue.framework}
          {connectionName && connections.value.length > 1 ? ` · ${connectionName}` : ''}
        </span>
        <Link href={`/jobs?queue=${encodeURIComponent(queue.name)}&connectionId=${queue.connectionId}`}>Its jobs →</Link>
      </div>
      <QueueControls queue={queue} onAsked={reload} />
      {queue.commands.length > 0 && (
        <section class="card">
          <h2>Commands</h2>
          <CommandList commands={queue.commands} />
        </section>
      )}
      <QueueFigures queue={queue} range={range} />
    </>
  );
}

/** Depth, consumers and the range's throughput, wait and failure rate, what the job system counts, the health bar and chart. */
function QueueFigures({ queue, range }: { queue: QueueView; range: string }) {
  const figures: Array<[string, string]> = [
    ['depth', queue.depth.toLocaleString()],
    ['consumers', String(queue.consumers)],
    [`throughput, ${range}`, rate(queue.throughput)],
    ['avg wait', queue.avgLatencyMs === null ? '–' : shortDuration(queue.avgLatencyMs)],
    ['failed', queue.failureRate === null ? '–' : `${(queue.failureRate * 100).toFixed(1)} %`],
  ];
  const facts = jobSystemFacts(queue.extensions);
  return (
    <section class="card queue-figures" aria-label={`Figures of ${queue.name}`}>
      <nav class="tabs" aria-label="Time range">
        {RANGES.map((each) => (
          <Link key={each} class="tab" href={withQuery({ range: each === DEFAULT_RANGE ? undefined : each })} aria-current={each === range ? 'page' : undefined}>
            {each}
          </Link>
        ))}
      </nav>
      <div class="metrics">
        {figures.map(([label, value]) => (
          <div class="metric" key={label}>
            <strong>{value}</strong>
            <span>{label}</span>
          </div>
        ))}
      </div>
      {facts && <p class="muted">{queue.framework}: {facts}</p>}
      {queue.healthBar && (
        <>
          <HealthBar buckets={queue.healthBar.buckets} label={`Health of ${queue.name} over ${range}`} />
          <QueueChart buckets={queue.healthBar.buckets} title={`Finished jobs per bucket, ${range}`} />
        </>
      )}
    </section>
  );
}
