/**
 * A queue's controls: pause or resume, clean, retry every failed job, limit its
 * concurrency. Each names what will happen in a confirm step before anything is sent;
 * one the job system cannot do (the agent's report), or that cannot work now (one of its
 * kind is pending, the queue is paused already), is disabled with the reason. What the
 * agent reports shows as a toast and in the queue's commands.
 */
import { useSignal } from '@preact/signals';
import type { QueueCommandType } from '../../../../actors/connection/command-types.ts';
import { api, queryString } from '../../api/client.ts';
import { askControl, type CleanBody } from '../../api/controls.ts';
import type { JobListPage, QueueView } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { verbOf } from '../../lib/command-tracker.ts';
import { CleanDialog } from './clean-dialog.tsx';

type Asking = { kind: 'pause' | 'resume' | 'retry' | 'concurrency' } | { kind: 'clean' } | null;

const BUTTONS: Array<{ type: QueueCommandType; kind: Exclude<Asking, null>['kind']; label: string; danger?: boolean }> = [
  { type: 'queue.pause', kind: 'pause', label: 'Pause' },
  { type: 'queue.resume', kind: 'resume', label: 'Resume' },
  { type: 'queue.clean', kind: 'clean', label: 'Clean…', danger: true },
  { type: 'queue.retry_failed', kind: 'retry', label: 'Retry all failed' },
  { type: 'queue.concurrency', kind: 'concurrency', label: 'Concurrency…' },
];

export function QueueControls({ queue, onAsked }: { queue: QueueView; onAsked: () => void }) {
  const asking = useSignal<Asking>(null);
  const error = useSignal<unknown>(null);
  const failedCount = useSignal<number | null>(null);
  const concurrency = useSignal('');
  const path = (action: string) => `/api/queues/${encodeURIComponent(queue.id)}/${action}`;
  const send = async (label: string, action: string, body: unknown = {}) => {
    asking.value = null;
    error.value = null;
    try {
      await askControl(label, path(action), body);
    } catch (failure) {
      error.value = failure;
    }
    onAsked();
  };
  const open = (kind: Exclude<Asking, null>['kind']) => {
    error.value = null;
    asking.value = { kind };
    if (kind === 'retry') {
      failedCount.value = null;
      const query = queryString({ queue: queue.name, connectionId: queue.connectionId, state: 'failed', limit: 1 });
      void api<JobListPage>('GET', `/api/jobs${query}`).then((page) => (failedCount.value = page.pagination.total), () => undefined);
    }
  };
  // a queue whose paused state is known shows the one of pause and resume that applies
  const shown = BUTTONS.filter(({ kind }) => !((kind === 'pause' && queue.paused === true) || (kind === 'resume' && queue.paused === false)));
  const name = <code>{queue.name}</code>;
  return (
    <div class="actions queue-controls" role="group" aria-label={`Controls of ${queue.name}`}>
      {shown.map(({ type, kind, label, danger }) => {
        const { available, reason } = queue.controls[type];
        return (
          <button key={type} type="button" class={danger ? 'danger' : ''} disabled={!available} title={reason ?? undefined} onClick={() => open(kind)}>
            {label}
          </button>
        );
      })}
      {shown.map(({ type }) => {
        const reason = queue.controls[type].reason;
        return reason && <small key={type} class="hint why">{verbOf(type)}: {reason}</small>;
      })}
      <ErrorText error={error.value} />
      {asking.value?.kind === 'pause' && (
        <ConfirmDialog title={`Pause ${queue.name}?`} confirmLabel="Pause" onConfirm={() => void send(`Pause ${queue.name}`, 'pause')} onCancel={() => (asking.value = null)}>
          <p>Its workers take no new jobs of {name} until it is resumed; the jobs running now finish. Jobs added meanwhile wait.</p>
        </ConfirmDialog>
      )}
      {asking.value?.kind === 'resume' && (
        <ConfirmDialog title={`Resume ${queue.name}?`} confirmLabel="Resume" onConfirm={() => void send(`Resume ${queue.name}`, 'resume')} onCancel={() => (asking.value = null)}>
          <p>Its workers take the jobs of {name} again, starting with the {queue.depth.toLocaleString()} waiting.</p>
        </ConfirmDialog>
      )}
      {asking.value?.kind === 'retry' && (
        <ConfirmDialog title={`Retry the failed jobs of ${queue.name}?`} confirmLabel="Retry all" onConfirm={() => void send(`Retry all failed of ${queue.name}`, 'retry-failed')} onCancel={() => (asking.value = null)}>
          <p>
            Run {failedCount.value === null ? 'every' : `the ${failedCount.value.toLocaleString()}`} failed job{failedCount.value === 1 ? '' : 's'} of {name} again
            {failedCount.value === null ? '' : ' (as far as jobwatch knows; the job system retries the failed jobs it still holds)'}.
          </p>
        </ConfirmDialog>
      )}
      {asking.value?.kind === 'concurrency' && (
        <ConfirmDialog
          title={`Concurrency of ${queue.name}`}
          confirmLabel="Set"
          onConfirm={() => {
            const value = concurrency.value.trim() === '' ? null : Number(concurrency.value);
            void send(value === null ? `Clear the concurrency of ${queue.name}` : `Concurrency ${value} for ${queue.name}`, 'concurrency', { concurrency: value });
          }}
          onCancel={() => (asking.value = null)}
        >
          <label>
            <span>Jobs running at once across its workers (empty: no limit)</span>
            <input type="number" min={1} step={1} value={concurrency.value} onInput={(event) => (concurrency.value = event.currentTarget.value)} />
          </label>
          <p>{concurrency.value.trim() === '' ? <>Remove the limit: {name} runs as many jobs as its workers take.</> : <>At most {concurrency.value} jobs of {name} run at once, whatever its workers' own concurrency.</>}</p>
        </ConfirmDialog>
      )}
      {asking.value?.kind === 'clean' && (
        <CleanDialog
          queue={queue}
          onConfirm={(body: CleanBody, summary: string) => void send(`Remove ${summary} from ${queue.name}`, 'clean', body)}
          onCancel={() => (asking.value = null)}
        />
      )}
    </div>
  );
}
