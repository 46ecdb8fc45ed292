/**
 * The commands a tab's jobs most often need, on each row: run now on the Scheduled tab,
 * retry now and kill on the Retrying tab, delete on the Failed tab. Each is offered where
 * it can work (action-availability.ts, with what the connection's agent reported) and
 * disabled with the reason elsewhere; delete and kill ask first.
 */
import { useSignal } from '@preact/signals';
import { actionAvailability } from '../../../../actors/connection/action-availability.ts';
import type { JobCommandType } from '../../../../actors/connection/command-types.ts';
import { ACTION_LABEL, ACTION_RULE, commandJob } from '../../api/job-actions.ts';
import type { JobListItem } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { supportIn } from '../../lib/capabilities.ts';
import { whyNotOnConnection } from '../../lib/roles.ts';

/** The row commands of each state tab. */
export const ROW_COMMANDS: Partial<Record<string, JobCommandType[]>> = {
  scheduled: ['promote', 'delete'],
  retrying: ['retry', 'kill'],
  failed: ['delete'],
};
/** How a row labels retry on the Retrying tab: it runs the next attempt now. */
const ROW_LABEL: Partial<Record<JobCommandType, string>> = { retry: 'Retry now' };
const CONFIRMED: ReadonlySet<JobCommandType> = new Set(['delete', 'kill']);

/**
 * What a row shows at once after one of its commands was asked: a revoke or retry the
 * contract's state, every command pending; the stream brings what the job system then did.
 */
export function pendingRow(job: JobListItem, type: JobCommandType): Pick<JobListItem, 'id' | 'state' | 'lastCommand'> {
  const state = type === 'revoke' ? 'cancelled' : type === 'retry' && job.state !== 'retrying' ? 'retrying' : job.state;
  return { id: job.id, state, lastCommand: { id: '', type, status: 'pending', reason: null, details: null, createdAt: new Date().toISOString(), completedAt: null } };
}

export function RowActions({ job, types, onAsked }: { job: JobListItem; types: JobCommandType[]; onAsked: (type: JobCommandType) => void }) {
  const asking = useSignal<JobCommandType | null>(null);
  const error = useSignal<unknown>(null);
  const support = supportIn(job.connectionId);
  // the role first: an operator of the job's team acts on its jobs, a viewer is told why not
  const roleWhyNot = whyNotOnConnection(job.connectionId, 'operator', 'act on jobs');
  const run = async (type: JobCommandType) => {
    asking.value = null;
    error.value = null;
    try {
      await commandJob(type, job.id, `${ROW_LABEL[type] ?? ACTION_LABEL[type]} ${job.name} (${job.externalId})`);
      onAsked(type);
    } catch (failure) {
      error.value = failure;
    }
  };
  return (
    <div class="row-actions">
      {types.map((type) => {
        const { available, reason } = roleWhyNot === null ? actionAvailability(type, job, support) : { available: false, reason: roleWhyNot };
        return (
          <button key={type} type="button" class={`small${CONFIRMED.has(type) ? ' danger' : ''}`} disabled={!available} title={reason ?? ACTION_RULE[type]} onClick={() => (CONFIRMED.has(type) ? (asking.value = type) : void run(type))}>
            {ROW_LABEL[type] ?? ACTION_LABEL[type]}
          </button>
        );
      })}
      <ErrorText error={error.value} />
      {asking.value && (
        <ConfirmDialog title={`${ACTION_LABEL[asking.value]} ${job.name}?`} confirmLabel={ACTION_LABEL[asking.value]} danger onConfirm={() => void run(asking.value!)} onCancel={() => (asking.value = null)}>
          <p>
            <code>{job.externalId}</code>: {ACTION_RULE[asking.value]}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
