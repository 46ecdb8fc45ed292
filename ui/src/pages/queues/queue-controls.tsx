/**
 * A queue's controls: pause or resume, clean, retry every failed job, limit its
 * concurrency. Each names what will happen in a confirm step before anything is sent
 * (queue-control-dialogs.tsx, clean-dialog.tsx); one the job system cannot do (the agent's
 * report), or that cannot work now (one of its kind is pending, the queue is paused
 * already), is disabled with the reason. What the agent reports shows as a toast and in the
 * queue's commands.
 */
import { useSignal } from '@preact/signals';
import type { FunctionComponent } from 'preact';
import type { QueueCommandType } from '../../../../actors/connection/command-types.ts';
import { askControl } from '../../api/controls.ts';
import type { QueueView } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';
import { verbOf } from '../../lib/command-tracker.ts';
import { whyNotOnConnection } from '../../lib/roles.ts';
import { CleanDialog } from './clean-dialog.tsx';
import { ConcurrencyDialog, PauseDialog, ResumeDialog, RetryFailedDialog, type DialogProps } from './queue-control-dialogs.tsx';

/** The clean's dialog chooses its body and words its label itself. */
const Clean: FunctionComponent<DialogProps> = ({ queue, onConfirm, onCancel }) => (
  <CleanDialog queue={queue} onConfirm={(body, summary) => onConfirm(`Remove ${summary} from ${queue.name}`, 'clean', body)} onCancel={onCancel} />
);

const CONTROLS: Array<{ type: QueueCommandType; label: string; danger?: boolean; Dialog: FunctionComponent<DialogProps> }> = [
  { type: 'queue.pause', label: 'Pause', Dialog: PauseDialog },
  { type: 'queue.resume', label: 'Resume', Dialog: ResumeDialog },
  { type: 'queue.clean', label: 'Clean…', danger: true, Dialog: Clean },
  { type: 'queue.retry_failed', label: 'Retry all failed', Dialog: RetryFailedDialog },
  { type: 'queue.concurrency', label: 'Concurrency…', Dialog: ConcurrencyDialog },
];

export function QueueControls({ queue, onAsked }: { queue: QueueView; onAsked: () => void }) {
  const asking = useSignal<QueueCommandType | null>(null);
  const error = useSignal<unknown>(null);
  const send = async (label: string, action: string, body: unknown = {}) => {
    asking.value = null;
    error.value = null;
    try {
      await askControl(label, `/api/queues/${encodeURIComponent(queue.id)}/${action}`, body);
    } catch (failure) {
      error.value = failure;
    }
    onAsked();
  };
  // a queue whose paused state is known shows the one of pause and resume that applies
  const shown = CONTROLS.filter(({ type }) => !((type === 'queue.pause' && queue.paused === true) || (type === 'queue.resume' && queue.paused === false)));
  const open = shown.find(({ type }) => type === asking.value);
  // the role first: an operator of the queue's team controls it, a viewer is told why not (once)
  const roleWhyNot = whyNotOnConnection(queue.connectionId, 'operator', 'control queues');
  const controlOf = (type: QueueCommandType) => (roleWhyNot === null ? queue.controls[type] : { available: false, reason: null });
  return (
    <div class="actions queue-controls" role="group" aria-label={`Controls of ${queue.name}`}>
      {shown.map(({ type, label, danger }) => {
        const { available, reason } = controlOf(type);
        return (
          <button key={type} type="button" class={danger ? 'danger' : ''} disabled={!available} title={reason ?? roleWhyNot ?? undefined} onClick={() => ((error.value = null), (asking.value = type))}>
            {label}
          </button>
        );
      })}
      {roleWhyNot !== null ? (
        <small class="hint why">{roleWhyNot}</small>
      ) : (
        shown.map(({ type }) => {
          const reason = queue.controls[type].reason;
          return reason && <small key={type} class="hint why">{verbOf(type)}: {reason}</small>;
        })
      )}
      <ErrorText error={error.value} />
      {open && <open.Dialog queue={queue} onConfirm={(label, action, body) => void send(label, action, body)} onCancel={() => (asking.value = null)} />}
    </div>
  );
}
