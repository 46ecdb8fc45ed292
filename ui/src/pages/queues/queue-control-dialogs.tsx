/**
 * The confirm steps of a queue's controls, each naming what will happen to the queue
 * before anything is sent (the clean's is clean-dialog.tsx). `onConfirm` gets the label of
 * the command as its toast will say it, the endpoint's last segment and the body.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, queryString } from '../../api/client.ts';
import type { JobListPage, QueueView } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';

export interface DialogProps {
  queue: QueueView;
  onConfirm: (label: string, action: string, body?: unknown) => void;
  onCancel: () => void;
}

export function PauseDialog({ queue, onConfirm, onCancel }: DialogProps) {
  return (
    <ConfirmDialog title={`Pause ${queue.name}?`} confirmLabel="Pause" onConfirm={() => onConfirm(`Pause ${queue.name}`, 'pause')} onCancel={onCancel}>
      <p>
        Its workers take no new jobs of <code>{queue.name}</code> until it is resumed; the jobs running now finish. Jobs added meanwhile wait.
      </p>
    </ConfirmDialog>
  );
}

export function ResumeDialog({ queue, onConfirm, onCancel }: DialogProps) {
  return (
    <ConfirmDialog title={`Resume ${queue.name}?`} confirmLabel="Resume" onConfirm={() => onConfirm(`Resume ${queue.name}`, 'resume')} onCancel={onCancel}>
      <p>
        Its workers take the jobs of <code>{queue.name}</code> again, starting with the {queue.depth.toLocaleString()} waiting.
      </p>
    </ConfirmDialog>
  );
}

/** Says how many failed jobs jobwatch knows of in the queue (one cheap count of the job list). */
export function RetryFailedDialog({ queue, onConfirm, onCancel }: DialogProps) {
  const failed = useSignal<number | null>(null);
  useEffect(() => {
    const query = queryString({ queue: queue.name, connectionId: queue.connectionId, state: 'failed', limit: 1 });
    void api<JobListPage>('GET', `/api/jobs${query}`).then((page) => (failed.value = page.pagination.total), () => undefined);
  }, [queue.id]);
  const count = failed.value;
  return (
    <ConfirmDialog title={`Retry the failed jobs of ${queue.name}?`} confirmLabel="Retry all" onConfirm={() => onConfirm(`Retry all failed of ${queue.name}`, 'retry-failed')} onCancel={onCancel}>
      <p>
        Run {count === null ? 'every' : `the ${count.toLocaleString()}`} failed job{count === 1 ? '' : 's'} of <code>{queue.name}</code> again
        {count === null ? '' : ' (as far as jobwatch knows; the job system retries the failed jobs it still holds)'}.
      </p>
    </ConfirmDialog>
  );
}

export function ConcurrencyDialog({ queue, onConfirm, onCancel }: DialogProps) {
  const typed = useSignal('');
  const value = typed.value.trim() === '' ? null : Number(typed.value);
  const label = value === null ? `Clear the concurrency of ${queue.name}` : `Concurrency ${value} for ${queue.name}`;
  return (
    <ConfirmDialog title={`Concurrency of ${queue.name}`} confirmLabel="Set" onConfirm={() => onConfirm(label, 'concurrency', { concurrency: value })} onCancel={onCancel}>
      <label>
        <span>Jobs running at once across its workers (empty: no limit)</span>
        <input type="number" min={1} step={1} value={typed.value} onInput={(event) => (typed.value = event.currentTarget.value)} />
      </label>
      <p>
        {value === null ? (
          <>Remove the limit: <code>{queue.name}</code> runs as many jobs as its workers take.</>
        ) : (
          <>At most {value} jobs of <code>{queue.name}</code> run at once, whatever its workers' own concurrency.</>
        )}
      </p>
    </ConfirmDialog>
  );
}
