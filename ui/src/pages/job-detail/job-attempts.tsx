/** Every run of the job, oldest first: when it started and finished, its worker, what it came to, and its error and trace. */
import type { JobDetail } from '../../api/types.ts';
import { StateBadge } from '../../components/state-badge.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { shortDuration } from '../../lib/time.ts';

type Attempt = JobDetail['attempts'][number];

function tookText(run: Attempt): string | null {
  if (run.startedAt === null || run.finishedAt === null) return null;
  const ms = Date.parse(run.finishedAt) - Date.parse(run.startedAt);
  return ms >= 0 ? shortDuration(ms) : null;
}

export function JobAttempts({ job }: { job: JobDetail }) {
  const runs = job.attempts;
  return (
    <>
      <h2>Attempts ({runs.length})</h2>
      <ol class="attempts" aria-label="Attempts">
        {runs.map((run, index) => {
          const took = tookText(run);
          const current = index === runs.length - 1;
          return (
            <li key={index} class="card">
              <div class="attempt-head">
                <strong>Attempt {run.attempt}</strong>
                <StateBadge state={run.state} />
                {current && <span class="muted">current</span>}
                <span>
                  started <TimeText iso={run.startedAt} />
                </span>
                {run.finishedAt !== null && (
                  <span>
                    finished <TimeText iso={run.finishedAt} />
                    {took !== null && ` (${took})`}
                  </span>
                )}
                {run.workerId !== null && <span class="mono">{run.workerId}</span>}
              </div>
              {run.error !== null && <pre class="error-text">{run.error}</pre>}
              {run.stacktrace !== null && (
                <details>
                  <summary>Traceback</summary>
                  <pre>{run.stacktrace}</pre>
                </details>
              )}
            </li>
          );
        })}
      </ol>
    </>
  );
}
