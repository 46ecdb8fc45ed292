/** Other runs of the same task, newest first, each linking to its own detail. */
import type { JobDetail } from '../../api/types.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { Link } from '../../components/link.tsx';
import { StateBadge } from '../../components/state-badge.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { shortDuration } from '../../lib/time.ts';

type Run = JobDetail['recentExecutions'][number];

const COLUMNS: Column<Run>[] = [
  { id: 'externalId', label: 'Run', class: 'col-task', cell: (run) => <Link href={`/jobs/${run.id}`}>{run.externalId}</Link> },
  { id: 'state', label: 'State', class: 'col-state', cell: (run) => <StateBadge state={run.state} /> },
  { id: 'createdAt', label: 'Created', class: 'col-time', cell: (run) => <TimeText iso={run.createdAt} /> },
  { id: 'durationMs', label: 'Duration', class: 'col-duration num', cell: (run) => (run.durationMs === null ? '–' : shortDuration(run.durationMs)) },
  { id: 'error', label: 'Error', class: 'hide-narrow', cell: (run) => <span class="ellipsis error-inline">{run.error ?? ''}</span> },
];

export function RecentExecutions({ runs }: { runs: Run[] }) {
  if (runs.length === 0) return <EmptyState title="No other runs of this task in the retention window." />;
  return <DataTable label="Recent executions" rows={runs} columns={COLUMNS} />;
}
