/** The columns of the job list. */
import type { JobListItem } from '../../api/types.ts';
import type { Column } from '../../components/data-table.tsx';
import { JobState } from '../../components/job-state.tsx';
import { Link } from '../../components/link.tsx';
import { ProgressBar } from '../../components/progress-bar.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { shortDuration } from '../../lib/time.ts';
import type { JobCommandType } from '../../../../actors/connection/command-types.ts';
import { ROW_COMMANDS, RowActions } from './row-actions.tsx';

const orDash = (value: string | null) => (value === null ? <span class="muted">–</span> : value);

const JOB_COLUMNS: Column<JobListItem>[] = [
  {
    id: 'name',
    label: 'Task',
    sortKey: 'name',
    class: 'col-task',
    cell: (job) => (
      <>
        <Link href={`/jobs/${job.id}`}>{job.name}</Link>
        <small class="muted mono ellipsis">{job.externalId}</small>
        {job.rootId !== null && (
          <small>
            <Link href={`/jobs?rootId=${encodeURIComponent(job.rootId)}`} class="workflow-link">
              its workflow
            </Link>
          </small>
        )}
      </>
    ),
  },
  {
    id: 'state',
    label: 'State',
    sortKey: 'state',
    class: 'col-state',
    cell: (job) => (
      <>
        <JobState job={job} />
        {job.state === 'active' && job.progress !== null && <ProgressBar fraction={job.progress} />}
      </>
    ),
  },
  { id: 'queue', label: 'Queue', sortKey: 'queue', class: 'col-queue hide-narrow', cell: (job) => orDash(job.queue) },
  { id: 'worker', label: 'Worker', sortKey: 'worker', class: 'col-worker hide-narrow', cell: (job) => <span class="ellipsis">{orDash(job.workerId)}</span> },
  { id: 'createdAt', label: 'Created', sortKey: 'createdAt', class: 'col-time', cell: (job) => <TimeText iso={job.createdAt} /> },
  { id: 'startedAt', label: 'Started', sortKey: 'startedAt', class: 'col-time hide-narrow', cell: (job) => <TimeText iso={job.startedAt} /> },
  {
    id: 'durationMs',
    label: 'Duration',
    sortKey: 'durationMs',
    class: 'col-duration num hide-narrow',
    cell: (job) => (job.durationMs === null ? <span class="muted">–</span> : shortDuration(job.durationMs)),
  },
  { id: 'error', label: 'Error', class: 'col-error hide-narrow', cell: (job) => <span class="ellipsis error-inline" title={job.error ?? ''}>{job.error ?? ''}</span> },
];

const RUNS_AT: Column<JobListItem> = { id: 'scheduledFor', label: 'Runs at', class: 'col-time', cell: (job) => <TimeText iso={job.scheduledFor} /> };

/**
 * The list's columns for a state tab: scheduled and retrying jobs also show when they run
 * (in place of when they were created, on a phone); the tabs with row commands end with
 * them (row-actions.tsx). `onAsked` hears of a command asked from a row.
 */
export function jobColumnsFor(state: string | undefined, onAsked: (job: JobListItem, type: JobCommandType) => void = () => undefined): Column<JobListItem>[] {
  const commands = state === undefined ? undefined : ROW_COMMANDS[state];
  const actions: Column<JobListItem>[] =
    commands === undefined ? [] : [{ id: 'actions', label: 'Actions', class: 'col-actions', cell: (job) => <RowActions job={job} types={commands} onAsked={(type) => onAsked(job, type)} /> }];
  if (state !== 'scheduled' && state !== 'retrying') return [...JOB_COLUMNS, ...actions];
  const [task, jobState, ...rest] = JOB_COLUMNS.map((column) => (column.id === 'createdAt' ? { ...column, class: 'col-time hide-narrow' } : column));
  return [task!, jobState!, RUNS_AT, ...rest, ...actions];
}

/** Times and durations read best largest or newest first; names and states A to Z. */
export function firstOrderOf(sortKey: string): 'asc' | 'desc' {
  return sortKey === 'createdAt' || sortKey === 'startedAt' || sortKey === 'durationMs' ? 'desc' : 'asc';
}
