/**
 * What the job was called with and gave back: its progress, arguments, result and log, each
 * as the agent sent it (secret-looking values masked by the service); a value kept cut says
 * so, with the size of the whole.
 */
import type { JobDetail } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { JsonView } from '../../components/json-view.tsx';
import { ProgressBar } from '../../components/progress-bar.tsx';
import { progressNote } from '../../lib/progress.ts';

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`;

function PayloadValue({ job, field }: { job: JobDetail; field: 'args' | 'result' }) {
  const cut = job.truncated.find((each) => each.field === field);
  if (cut === undefined) return <JsonView value={job[field]} />;
  const head = String(job[field]);
  return (
    <>
      <p class="notice">Kept cut: the first {kib(new TextEncoder().encode(head).length)} of {kib(cut.bytes)} (the service's limit).</p>
      <div class="code-block">
        <CopyButton text={head} />
        <pre>{head}…</pre>
      </div>
    </>
  );
}

export function JobPayload({ job }: { job: JobDetail }) {
  const note = progressNote(job.progressData);
  const hasProgress = job.progress !== null || job.progressData !== null;
  return (
    <>
      {hasProgress && (
        <>
          <h2>Progress</h2>
          <section class="card">
            {job.state !== 'active' && <p class="hint">As last reported while it ran.</p>}
            <ProgressBar fraction={job.progress} note={note} />
            {job.progressData !== null && note === null && job.progress === null && <JsonView value={job.progressData} />}
            {job.progressData !== null && (note !== null || job.progress !== null) && (
              <details>
                <summary>As reported</summary>
                <JsonView value={job.progressData} />
              </details>
            )}
          </section>
        </>
      )}
      <h2>Arguments</h2>
      <PayloadValue job={job} field="args" />
      <h2>Result</h2>
      <PayloadValue job={job} field="result" />
      <h2>Log{job.logs.length > 0 ? ` (${job.logs.length} ${job.logs.length === 1 ? 'line' : 'lines'}, newest last)` : ''}</h2>
      {job.logs.length === 0 ? (
        <span class="muted">none</span>
      ) : (
        <div class="code-block">
          <CopyButton text={job.logs.join('\n')} />
          <pre class="log" aria-label="Log">{job.logs.join('\n')}</pre>
        </div>
      )}
    </>
  );
}
