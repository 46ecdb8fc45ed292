/**
 * Revoke and retry for one job. The buttons are offered by the service's rules; the
 * service decides, and a 409 is explained with its message (the job's state moved on).
 */
import { useSignal } from '@preact/signals';
import { ApiError } from '../../api/client.ts';
import { ACTION_LABEL, ACTION_RULE, actOnJob, type JobAction } from '../../api/job-actions.ts';
import type { JobDetail } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { whyNotOnConnection } from '../../lib/roles.ts';

const ALLOWED_FROM: Record<JobAction, readonly string[]> = { revoke: ['queued', 'active'], retry: ['failed', 'cancelled'] };

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
      outcome.value = result.success ? `${ACTION_LABEL[action]} accepted: the job is now ${result.state}; the agent carries it out.` : result.error;
      onChanged();
    } catch (failure) {
      error.value =
        failure instanceof ApiError && failure.status === 409
          ? new Error(`Not possible now: ${failure.message}. ${ACTION_RULE[action]}`)
          : failure;
      onChanged();
    }
  };
  // the role first: an operator of the job's team revokes and retries, a viewer is told why not
  const roleWhyNot = whyNotOnConnection(job.connectionId, 'operator', 'revoke or retry jobs');
  return (
    <div class="actions">
      {(['revoke', 'retry'] as const).map((action) => (
        <button
          key={action}
          type="button"
          class={action === 'revoke' ? 'danger' : ''}
          disabled={roleWhyNot !== null}
          onClick={() => (asking.value = action)}
          title={roleWhyNot ?? (ALLOWED_FROM[action].includes(job.state) ? ACTION_RULE[action] : `Not available from ${job.state}. ${ACTION_RULE[action]}`)}
        >
          {ACTION_LABEL[action]}
        </button>
      ))}
      {roleWhyNot !== null && <span class="hint">{roleWhyNot}</span>}
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
