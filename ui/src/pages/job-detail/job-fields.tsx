/** Every scalar field of a job as a definition list. */
import type { ComponentChildren } from 'preact';
import type { JobDetail } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { JsonView } from '../../components/json-view.tsx';
import { Link } from '../../components/link.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { attemptText, retryLimitText } from '../../lib/attempts.ts';
import { percentText } from '../../lib/progress.ts';
import { shortDuration } from '../../lib/time.ts';

const none = <span class="muted">–</span>;
const text = (value: string | number | null) => (value === null ? none : String(value));

export function JobFields({ job, connectionName }: { job: JobDetail; connectionName: string }) {
  const fields: Array<[string, ComponentChildren]> = [
    ['Job id', <><span class="mono">{job.id}</span> <CopyButton text={job.id} /></>],
    ['External id', <><span class="mono">{job.externalId}</span> <CopyButton text={job.externalId} /></>],
    ['Connection', connectionName],
    ['Framework', job.framework],
    ['Queue', job.queue === null ? none : <Link href={`/jobs?queue=${encodeURIComponent(job.queue)}`}>{job.queue}</Link>],
    ['Worker', job.workerId === null ? none : <Link href={`/jobs?worker=${encodeURIComponent(job.workerId)}`}>{job.workerId}</Link>],
    ['Previous state', text(job.previousState)],
    ['Attempt', attemptText(job)],
    ['Retry limit', text(retryLimitText(job.maxRetries))],
    ['Progress', text(percentText(job.progress))],
    ['Created', <TimeText iso={job.createdAt} />],
    ['State changed', <TimeText iso={job.stateChangedAt} />],
    ['Scheduled for', <TimeText iso={job.scheduledFor} />],
    ['Started', <TimeText iso={job.startedAt} />],
    ['Completed', <TimeText iso={job.completedAt} />],
    ['Duration', job.durationMs === null ? none : shortDuration(job.durationMs)],
    ['Parent', job.parentId === null ? none : <Link href={`/jobs/${job.parentId}`} class="mono">{job.parentId}</Link>],
    ['Root', job.rootId === null ? none : job.rootId === job.id ? 'this job' : <Link href={`/jobs/${job.rootId}`} class="mono">{job.rootId}</Link>],
    ['Tags', <JsonView value={job.tags} />],
  ];
  return (
    <dl class="fields">
      {fields.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
