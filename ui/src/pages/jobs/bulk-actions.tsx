/**
 * Revoke or retry the selected jobs. Each action is offered for the selected jobs it can
 * work for (an operator's role in their team, then action-availability.ts) and sent for
 * those only; with none, it is disabled and says why. Confirm first, then say what happened to each one.
 */
import { useSignal } from '@preact/signals';
import { actionAvailability } from '../../../../actors/connection/action-availability.ts';
import { supportIn } from '../../lib/capabilities.ts';
import { requestNote } from '../../../../actors/connection/job-actions.ts';
import { ACTION_LABEL, ACTION_RULE, actOnJobs, type JobAction } from '../../api/job-actions.ts';
import type { JobListItem, PublicActionResult } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { whyNotOnConnection } from '../../lib/roles.ts';

/** The ids of the selected jobs the action can work for (the user's role in the job's team first), and why not for the others (each reason once). */
function sortOut(action: JobAction, selected: JobListItem[]) {
  const able: string[] = [];
  const reasons = new Set<string>();
  for (const job of selected) {
    const roleWhyNot = whyNotOnConnection(job.connectionId, 'operator', `${action} jobs`);
    const { available, reason } = roleWhyNot === null ? actionAvailability(action, job, supportIn(job.connectionId)) : { available: false, reason: roleWhyNot };
    if (available) able.push(job.id);
    else reasons.add(reason!);
  }
  return { able, why: [...reasons].join('; ') };
}

/**
 * `subject` names the jobs (`selected` in the list; a workflow's page says `in this workflow`);
 * without `onClear` there is no selection to clear.
 */
export function BulkActions({ selected, onDone, onClear, subject = 'selected' }: { selected: JobListItem[]; onDone: (action: JobAction, results: PublicActionResult[]) => void; onClear?: () => void; subject?: string }) {
  const asking = useSignal<JobAction | null>(null);
  const results = useSignal<{ action: JobAction; list: PublicActionResult[]; names: Map<string, string> } | null>(null);
  const error = useSignal<unknown>(null);
  const count = selected.length;
  const sorted = { revoke: sortOut('revoke', selected), retry: sortOut('retry', selected) };
  const run = async (action: JobAction) => {
    asking.value = null;
    error.value = null;
    const names = new Map(selected.map((job) => [job.id, job.name]));
    try {
      const list = await actOnJobs(action, sorted[action].able);
      results.value = { action, list, names };
      onDone(action, list);
    } catch (failure) {
      error.value = failure;
    }
  };
  const shown = results.value;
  const asked = asking.value && sorted[asking.value];
  return (
    <div class="bulk">
      {count > 0 && (
        <div class="row" role="group" aria-label={subject === 'selected' ? 'Selected jobs' : `Jobs ${subject}`}>
          <strong>
            {count} {subject === 'selected' ? 'selected' : `${count === 1 ? 'job' : 'jobs'} ${subject}`}
          </strong>
          {(['revoke', 'retry'] as const).map((action) => {
            const { able, why } = sorted[action];
            return (
              <button key={action} type="button" class={action === 'revoke' ? 'danger' : ''} disabled={able.length === 0} title={why || ACTION_RULE[action]} onClick={() => (asking.value = action)}>
                {ACTION_LABEL[action]} {able.length === count ? (subject === 'selected' ? 'selected' : 'all') : `${able.length} of ${count}`}
              </button>
            );
          })}
          {onClear && (
            <button type="button" class="link" onClick={onClear}>
              Clear selection
            </button>
          )}
        </div>
      )}
      <ErrorText error={error.value} />
      {shown && (
        <section class="results" aria-live="polite">
          <div class="row">
            <strong>
              {shown.list.filter((result) => result.success).length} of {shown.list.length} requested
            </strong>
            <button type="button" class="link" onClick={() => (results.value = null)}>
              Dismiss
            </button>
          </div>
          <ul>
            {shown.list.map((result) => (
              <li key={result.id} class={result.success ? 'ok' : 'failed'}>
                {shown.names.get(result.id) ?? result.id}: {result.success ? `${requestNote(shown.action)}, waiting for the agent` : result.error}
              </li>
            ))}
          </ul>
        </section>
      )}
      {asking.value && asked && (
        <ConfirmDialog
          title={`${ACTION_LABEL[asking.value]} ${asked.able.length} job${asked.able.length === 1 ? '' : 's'}?`}
          confirmLabel={ACTION_LABEL[asking.value]}
          danger={asking.value === 'revoke'}
          onConfirm={() => void run(asking.value!)}
          onCancel={() => (asking.value = null)}
        >
          <p>
            {ACTION_RULE[asking.value]} {asked.why && `The other ${subject === 'selected' ? 'selected jobs' : `jobs ${subject}`} are left as they are: ${asked.why}.`}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
