/**
 * Revoke and retry for one job, offered where they can work (the detail's `actions`, from
 * action-availability.ts) and disabled with the reason elsewhere. The service decides; a
 * 409 is explained with its message (the job's state moved on).
 */
import { useSignal } from '@preact/signals';
import { requestNote } from '../../../../actors/connection/job-actions.ts';
import { ApiError } from '../../api/client.ts';
import { ACTION_LABEL, ACTION_RULE, actOnJob, type JobAction } from '../../api/job-actions.ts';
import type { JobDetail } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';

export function JobActionButtons({ job, onChanged }: { job: JobDetail; onChanged: () => void }) {
  const asking = useSignal<JobAction | null>(null);
  const outcome = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);
  const run = async (action: JobAction) => {
    asking.value = null;
    error.value = null;
    outcome.value = null;
    try {
      const result = await actOnJob(action, job.id);
      outcome.value = result.success ? `${requestNote(action)}, waiting for the agent.` : result.error;
      onChanged();
    } catch (failure) {
      error.value =
        failure instanceof ApiError && failure.status === 409
          ? new Error(`Not possible now: ${failure.message}. ${ACTION_RULE[action]}`)
          : failure;
      onChanged();
    }
  };
  const actions = (['revoke', 'retry'] as const).map((action) => ({ action, ...job.actions[action] }));
  return (
    <div class="actions">
      {actions.map(({ action, available, reason }) => (
        <button
          key={action}
          type="button"
          class={action === 'revoke' ? 'danger' : ''}
          disabled={!available}
          onClick={() => (asking.value = action)}
          title={reason ?? ACTION_RULE[action]}
        >
          {ACTION_LABEL[action]}
        </button>
      ))}
      {actions.map(({ action, reason }) => reason && <small key={action} class="hint why">{ACTION_LABEL[action]}: {reason}</small>)}
      {outcome.value && (
        <span role="status" class="muted">
          {outcome.value}
        </span>
      )}
      <ErrorText error={error.value} />
      {asking.value && (
        <ConfirmDialog
          title={`${ACTION_LABEL[asking.value]} ${job.name}?`}
          confirmLabel={ACTION_LABEL[asking.value]}
          danger={asking.value === 'revoke'}
          onConfirm={() => void run(asking.value!)}
          onCancel={() => (asking.value = null)}
        >
          <p>{ACTION_RULE[asking.value]}</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
