/** One job in full: every field, the state history, error and traceback, extensions, recent runs, actions. */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { onLive } from '../../api/stream.ts';
import type { JobDetail } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { JsonView } from '../../components/json-view.tsx';
import { Link } from '../../components/link.tsx';
import { JobState } from '../../components/job-state.tsx';
import { lastJobsAddress } from '../../router.ts';
import { connections } from '../../session.ts';
import { JobActionButtons } from './job-action-buttons.tsx';
import { JobAttempts } from './job-attempts.tsx';
import { JobPayload } from './job-payload.tsx';
import { JobFields } from './job-fields.tsx';
import { LastCommandNotice } from './last-command.tsx';
import { RecentExecutions } from './recent-executions.tsx';
import { StateTimeline } from './state-timeline.tsx';
import { WorkflowSection } from './workflow-tree.tsx';

/** The job, loaded now and again whenever the stream reports a change to it. */
function useJobDetail(id: string) {
  const job = useSignal<JobDetail | null>(null);
  const error = useSignal<unknown>(null);
  const generation = useRef(0);
  const load = () => {
    const mine = generation.current;
    return api<JobDetail>('GET', `/api/jobs/${encodeURIComponent(id)}`).then(
      (detail) => {
        if (mine !== generation.current) return;
        job.value = detail;
        error.value = null;
      },
      (failure) => mine === generation.current && (error.value = failure),
    );
  };
  useEffect(() => {
    job.value = null;
    void load();
    const stop = onLive((batch) => {
      if (batch.reset || batch.jobs.some((changed) => changed.id === id)) void load();
    });
    return () => {
      generation.current++; // answers for a page left behind are dropped
      stop();
    };
  }, [id]);
  return { job, error, reload: () => void load() };
}

export function JobDetailPage({ id }: { id: string }) {
  const { job, error, reload } = useJobDetail(id);
  const detail = job.value;
  if (detail === null) {
    return (
      <>
        <p>
          <Link href={lastJobsAddress()}>← Jobs</Link>
        </p>
        {error.value ? <ErrorText error={error.value} /> : <p class="muted">Loading…</p>}
      </>
    );
  }
  const connectionName = connections.value.find((c) => c.id === detail.connectionId)?.name ?? detail.connectionId;
  return (
    <>
      <p>
        <Link href={lastJobsAddress()}>← Jobs</Link>
      </p>
      <div class="page-head">
        <h1 class="mono">{detail.name}</h1>
        <JobState job={detail} />
        <Link href={`/task-metrics?task=${encodeURIComponent(detail.name)}&connectionId=${detail.connectionId}&range=7d`}>Task metrics</Link>
        <JobActionButtons job={detail} onChanged={reload} />
      </div>
      <LastCommandNotice command={detail.lastCommand} />
      <ErrorText error={error.value} />
      <section class="card">
        <JobFields job={detail} connectionName={connectionName} />
      </section>
      <WorkflowSection jobId={detail.id} />
      <JobPayload job={detail} />
      <h2>State history</h2>
      <section class="card">
        <StateTimeline history={detail.stateHistory} />
      </section>
      {(detail.error !== null || detail.stacktrace !== null) && (
        <>
          <h2>Error</h2>
          {detail.error !== null && (
            <div class="code-block">
              <CopyButton text={detail.error} />
              <pre class="error-text">{detail.error}</pre>
            </div>
          )}
          {detail.stacktrace !== null && (
            <>
              <h2>Traceback</h2>
              <div class="code-block">
                <CopyButton text={detail.stacktrace} />
                <pre>{detail.stacktrace}</pre>
              </div>
            </>
          )}
        </>
      )}
      {detail.attempts.length > 1 && <JobAttempts job={detail} />}
      <h2>Extensions</h2>
      <JsonView value={detail.extensions} />
      <h2>Recent executions of {detail.name}</h2>
      <RecentExecutions runs={detail.recentExecutions} />
    </>
  );
}
