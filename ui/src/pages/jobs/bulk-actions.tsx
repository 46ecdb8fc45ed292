/** Revoke or retry the selected jobs: confirm first, then say what happened to each one. */
import { useSignal } from '@preact/signals';
import { ACTION_LABEL, ACTION_RULE, actOnJobs, type JobAction } from '../../api/job-actions.ts';
import type { PublicActionResult } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { roleSomewhere } from '../../lib/roles.ts';

const VIEWER_ONLY = 'To revoke or retry you need the operator role in the jobs\' team; you are a viewer in each of your teams.';

export function BulkActions(props: { selected: string[]; names: Map<string, string>; onDone: (results: PublicActionResult[]) => void; onClear: () => void }) {
  const asking = useSignal<JobAction | null>(null);
  const results = useSignal<PublicActionResult[] | null>(null);
  const error = useSignal<unknown>(null);
  const count = props.selected.length;
  const run = async (action: JobAction) => {
    asking.value = null;
    error.value = null;
    try {
      const done = await actOnJobs(action, props.selected);
      results.value = done;
      props.onDone(done);
    } catch (failure) {
      error.value = failure;
    }
  };
  const succeeded = results.value?.filter((result) => result.success).length ?? 0;
  return (
    <div class="bulk">
      {count > 0 && (
        <div class="row" role="group" aria-label="Selected jobs">
          <strong>{count} selected</strong>
          <button type="button" class="danger" disabled={!roleSomewhere('operator')} title={roleSomewhere('operator') ? undefined : VIEWER_ONLY} onClick={() => (asking.value = 'revoke')}>
            Revoke selected
          </button>
          <button type="button" disabled={!roleSomewhere('operator')} title={roleSomewhere('operator') ? undefined : VIEWER_ONLY} onClick={() => (asking.value = 'retry')}>
            Retry selected
          </button>
          {!roleSomewhere('operator') && <span class="hint">{VIEWER_ONLY}</span>}
          <button type="button" class="link" onClick={props.onClear}>
            Clear selection
          </button>
        </div>
      )}
      <ErrorText error={error.value} />
      {results.value && (
        <section class="results" aria-live="polite">
          <div class="row">
            <strong>
              {succeeded} of {results.value.length} done
            </strong>
            <button type="button" class="link" onClick={() => (results.value = null)}>
              Dismiss
            </button>
          </div>
          <ul>
            {results.value.map((result) => (
              <li key={result.id} class={result.success ? 'ok' : 'failed'}>
                {props.names.get(result.id) ?? result.id}: {result.success ? `now ${result.state}` : result.error}
              </li>
            ))}
          </ul>
        </section>
      )}
      {asking.value && (
        <ConfirmDialog
          title={`${ACTION_LABEL[asking.value]} ${count} job${count === 1 ? '' : 's'}?`}
          confirmLabel={ACTION_LABEL[asking.value]}
          danger={asking.value === 'revoke'}
          onConfirm={() => void run(asking.value!)}
          onCancel={() => (asking.value = null)}
        >
          <p>{ACTION_RULE[asking.value]} Jobs in other states are left as they are and reported below.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
