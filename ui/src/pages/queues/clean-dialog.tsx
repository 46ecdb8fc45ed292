/**
 * The confirm step of a queue's clean: what to remove (finished jobs older than a time, of
 * the states chosen; or every waiting job) and how many that is, said before anything is
 * sent ("Remove 1,204 completed jobs older than 1 h from emails"). The count is what
 * jobwatch knows, and the dialog says it is an estimate where it is one.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { cleanEstimate, type CleanBody } from '../../api/controls.ts';
import type { CleanEstimate, QueueView } from '../../api/types.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';

const AGES: Array<[number, string]> = [
  [0, 'any age'],
  [3_600_000, '1 h'],
  [6 * 3_600_000, '6 h'],
  [86_400_000, '1 d'],
  [7 * 86_400_000, '7 d'],
];

/** "1,204 completed jobs older than 1 h", "all 312 waiting jobs". */
export function cleanSummary(body: CleanBody, estimate: CleanEstimate | null): string {
  const count = estimate === null ? '…' : `${estimate.atLeast ? 'at least ' : ''}${estimate.jobs.toLocaleString()}`;
  const noun = (word: string) => `${word} job${estimate?.jobs === 1 ? '' : 's'}`;
  if (body.mode === 'waiting') return `all ${count} ${noun('waiting')}`;
  const age = AGES.find(([ms]) => ms === body.olderThanMs)?.[1] ?? `${body.olderThanMs} ms`;
  return `${count} ${noun(body.states.join(' and '))}${body.olderThanMs === 0 ? '' : ` older than ${age}`}`;
}

/** Where the count comes from, in words: an estimate from jobwatch's jobs, or the agent's last report. */
function sourceText(estimate: CleanEstimate, framework: string): string {
  return estimate.source === 'snapshot'
    ? `As the agent last reported the queue; ${framework} removes what waits when the clean runs.`
    : `An estimate from the jobs jobwatch keeps: ${framework} may hold fewer (some may be gone already) or jobs jobwatch never saw.`;
}

export function CleanDialog({ queue, onConfirm, onCancel }: { queue: QueueView; onConfirm: (body: CleanBody, summary: string) => void; onCancel: () => void }) {
  const body = useSignal<CleanBody>({ mode: 'finished', olderThanMs: 3_600_000, states: ['completed'] });
  const estimate = useSignal<CleanEstimate | null>(null);
  const error = useSignal<unknown>(null);
  const key = JSON.stringify(body.value);
  useEffect(() => {
    let current = true;
    estimate.value = null;
    error.value = null;
    const asked = body.value;
    if (asked.mode === 'finished' && asked.states.length === 0) return;
    cleanEstimate(queue.id, asked).then(
      (answer) => current && (estimate.value = answer),
      (failure) => current && (error.value = failure),
    );
    return () => void (current = false);
  }, [key]);
  const finished = body.value.mode === 'finished' ? body.value : null;
  const setFinished = (changes: Partial<{ olderThanMs: number; states: Array<'completed' | 'failed'> }>) =>
    (body.value = { mode: 'finished', olderThanMs: finished?.olderThanMs ?? 3_600_000, states: finished?.states ?? ['completed'], ...changes });
  const toggleState = (state: 'completed' | 'failed', on: boolean) => {
    const states = (finished?.states ?? []).filter((each) => each !== state);
    setFinished({ states: on ? [...states, state].sort() : states });
  };
  const summary = cleanSummary(body.value, estimate.value);
  const nothing = finished !== null && finished.states.length === 0;
  return (
    <ConfirmDialog title={`Clean ${queue.name}`} confirmLabel="Remove" danger onConfirm={() => !nothing && onConfirm(body.value, summary)} onCancel={onCancel}>
      <fieldset class="choices">
        <legend>What to remove</legend>
        <label>
          <input type="radio" name="mode" checked={finished !== null} onChange={() => setFinished({})} /> Finished jobs
        </label>
        <label>
          <input type="radio" name="mode" checked={finished === null} onChange={() => (body.value = { mode: 'waiting' })} /> Every waiting job
        </label>
      </fieldset>
      {finished && (
        <div class="form-row">
          <label>
            <input type="checkbox" checked={finished.states.includes('completed')} onChange={(event) => toggleState('completed', event.currentTarget.checked)} /> completed
          </label>
          <label>
            <input type="checkbox" checked={finished.states.includes('failed')} onChange={(event) => toggleState('failed', event.currentTarget.checked)} /> failed
          </label>
          <label>
            <span>Finished more than</span>
            <select value={String(finished.olderThanMs)} onChange={(event) => setFinished({ olderThanMs: Number(event.currentTarget.value) })}>
              {AGES.map(([ms, label]) => (
                <option key={ms} value={String(ms)}>
                  {ms === 0 ? 'any time' : `${label} ago`}
                </option>
              ))}
            </select>
          </label>
        </div>
      )}
      {nothing ? (
        <p class="error">Choose completed, failed or both.</p>
      ) : (
        <p class="confirm-what">
          Remove {summary} from <code>{queue.name}</code>.
        </p>
      )}
      {estimate.value && <p class="hint">{sourceText(estimate.value, queue.framework)} jobwatch keeps their history.</p>}
      <ErrorText error={error.value} />
    </ConfirmDialog>
  );
}
