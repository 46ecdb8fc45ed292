/**
 * The commands on one job: revoke and retry always shown, run now, delete and kill where
 * the job's state allows them; each offered where it can work (the detail's `actions`, from
 * action-availability.ts and what the agent reported) and disabled with the reason
 * elsewhere. The service decides; a 409 is explained with its message (the job's state
 * moved on). What the agent then reports shows as a toast and on the job.
 */
import { useSignal } from '@preact/signals';
import { ACTION_RULES, requestNote } from '../../../../actors/connection/job-actions.ts';
import type { JobCommandType } from '../../../../actors/connection/command-types.ts';
import { ApiError } from '../../api/client.ts';
import { ACTION_LABEL, ACTION_RULE, actOnJob, commandJob } from '../../api/job-actions.ts';
import type { JobDetail } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { whyNotOnConnection } from '../../lib/roles.ts';

const ALWAYS: JobCommandType[] = ['revoke', 'retry'];
const WHERE_THEY_APPLY: JobCommandType[] = ['promote', 'kill', 'delete'];
const DANGER: ReadonlySet<JobCommandType> = new Set(['revoke', 'delete', 'kill']);

export function JobActionButtons({ job, onChanged }: { job: JobDetail; onChanged: () => void }) {
  const asking = useSignal<JobCommandType | null>(null);
  /** what the service answered, said only while the job is still in the state it answered: the job system moves it on */
  const outcome = useSignal<{ text: string; state: string } | null>(null);
  const error = useSignal<unknown>(null);
  const run = async (action: JobCommandType) => {
    asking.value = null;
    error.value = null;
    outcome.value = null;
    try {
      // said only while the job is in the state the service answered: the job system moves it on
      // (the controls beside revoke and retry leave the state as it is until the job system acts)
      if (action === 'revoke' || action === 'retry') {
        const result = await actOnJob(action, job.id);
        outcome.value = result.success ? { text: `${requestNote(action)}, waiting for the agent.`, state: result.state } : { text: result.error, state: job.state };
      } else {
        await commandJob(action, job.id, `${ACTION_LABEL[action]} ${job.name} (${job.externalId})`);
        outcome.value = { text: `${requestNote(action)}, waiting for the agent.`, state: job.state };
      }
      onChanged();
    } catch (failure) {
      error.value = failure instanceof ApiError && failure.status === 409 ? new Error(`Not possible now: ${failure.message}. ${ACTION_RULE[action]}`) : failure;
      onChanged();
    }
  };
  // the role first: an operator of the job's team acts on its jobs, a viewer is told why not;
  // then what the job's state and its job system allow. The newer commands are shown where
  // the job's state lets them work, not as a wall of disabled buttons
  const roleWhyNot = whyNotOnConnection(job.connectionId, 'operator', 'act on jobs');
  const shown = [...ALWAYS, ...WHERE_THEY_APPLY.filter((type) => ACTION_RULES[type].from.has(job.state as never))];
  const actions = shown.map((action) => ({ action, ...job.actions[action] }));
  return (
    <div class="actions">
      {actions.map(({ action, available, reason }) => (
        <button
          key={action}
          type="button"
          class={DANGER.has(action) ? 'danger' : ''}
          disabled={roleWhyNot !== null || !available}
          onClick={() => (asking.value = action)}
          title={roleWhyNot ?? reason ?? ACTION_RULE[action]}
        >
          {action === 'retry' && job.state === 'retrying' ? 'Retry now' : ACTION_LABEL[action]}
        </button>
      ))}
      {roleWhyNot !== null ? (
        <small class="hint why">{roleWhyNot}</small>
      ) : (
        actions.map(({ action, reason }) => reason && <small key={action} class="hint why">{ACTION_LABEL[action]}: {reason}</small>)
      )}
      {outcome.value && outcome.value.state === job.state && (
        <span role="status" class="muted">
          {outcome.value.text}
        </span>
      )}
      <ErrorText error={error.value} />
      {asking.value && (
        <ConfirmDialog
          title={`${ACTION_LABEL[asking.value]} ${job.name}?`}
          confirmLabel={ACTION_LABEL[asking.value]}
          danger={DANGER.has(asking.value)}
          onConfirm={() => void run(asking.value!)}
          onCancel={() => (asking.value = null)}
        >
          <p>{ACTION_RULE[asking.value]}</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
