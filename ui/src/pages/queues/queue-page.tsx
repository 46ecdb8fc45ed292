/** One queue: whether it is paused, its controls and their latest outcomes, its metrics over a range, and a way to its jobs. */
import { api, queryString } from '../../api/client.ts';
import type { QueueView } from '../../api/types.ts';
import { CommandList } from '../../components/command-list.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { Link } from '../../components/link.tsx';
import { useLiveReload } from '../../lib/use-live-reload.ts';
import { route } from '../../router.ts';
import { connections } from '../../session.ts';
import { QueueControls } from './queue-controls.tsx';
import { PausedBadge, QueueCard, RANGES } from './queues-page.tsx';

export function QueuePage({ id }: { id: string }) {
  const query = route.value.query;
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '') ? query.get('range')! : '24h';
  const path = `/api/queues/${encodeURIComponent(id)}${queryString({ timeRange: range })}`;
  // its own changes (a snapshot, a command's outcome) reload it at once
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
      <QueueCard queue={queue} range={range} />
    </>
  );
}
