/**
 * Create or edit an alert rule, with the value the condition measures now (the
 * service's preview, asked again as the fields change) so a threshold can be set against
 * what the system actually does.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { ALERT_KINDS, KIND_FIELDS } from '../../../../actors/alerts/alert-model.ts';
import { api } from '../../api/client.ts';
import type { AlertKind, DescribedMeasure, PublicChannel, PublicConnection, PublicRule } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';

const PREVIEW_DELAY_MS = 400;
const PREVIEW_EVERY_MS = 10_000;

interface Draft {
  connectionId: string;
  name: string;
  kind: AlertKind;
  queue: string;
  task: string;
  /** as typed: a percentage for failure_rate, a job count for queue_depth, ms or a factor for runtime_percentile */
  threshold: string;
  windowMinutes: string;
  channelIds: string[];
  /** runtime_percentile: against its threshold in ms (''), or the week before */
  relativeTo: '' | 'week_before';
}

function draftOf(rule: PublicRule | null, connections: PublicConnection[]): Draft {
  if (rule === null) {
    return { connectionId: connections[0]?.id ?? '', name: '', kind: 'failure_rate', queue: '', task: '', threshold: '20', windowMinutes: '5', channelIds: [], relativeTo: '' };
  }
  const threshold = rule.threshold === null ? '' : rule.kind === 'failure_rate' ? String(Math.round(rule.threshold * 1000) / 10) : String(rule.threshold);
  return { connectionId: rule.connectionId, name: rule.name, kind: rule.kind, queue: rule.queue ?? '', task: rule.task ?? '', threshold, windowMinutes: String(rule.windowSeconds / 60), channelIds: [...rule.channelIds], relativeTo: rule.relativeTo ?? '' };
}

/** The body fields of a draft, as the API takes them (fields the kind does not take are left out). */
export function ruleFields(draft: Draft) {
  const fields = KIND_FIELDS[draft.kind];
  const number = Number(draft.threshold);
  return {
    kind: draft.kind,
    queue: fields.queue === 'refused' || draft.queue.trim() === '' ? null : draft.queue.trim(),
    task: fields.task === 'refused' || draft.task.trim() === '' ? null : draft.task.trim(),
    threshold: fields.threshold === 'refused' || draft.threshold.trim() === '' ? null : draft.kind === 'failure_rate' ? number / 100 : number,
    windowSeconds: Math.round(Number(draft.windowMinutes) * 60),
    relativeTo: fields.relativeTo === 'refused' || draft.relativeTo === '' ? null : draft.relativeTo,
  };
}

/** The threshold's label and input bounds for a kind (and, for run time, what it is compared with). */
function thresholdInput(d: Draft): { label: string; min: number; max?: number; step: number | 'any' } {
  if (d.kind === 'failure_rate') return { label: 'Threshold (%)', min: 0, max: 99.9, step: 0.1 };
  if (d.kind !== 'runtime_percentile') return { label: 'Threshold (jobs)', min: 0, step: 1 };
  return d.relativeTo === '' ? { label: 'Threshold (ms)', min: 1, step: 1 } : { label: 'Times the week before', min: 1.01, max: 100, step: 'any' };
}

export function RuleForm(props: { rule: PublicRule | null; connections: PublicConnection[]; channels: PublicChannel[]; onSaved: () => void; onCancel?: () => void }) {
  const draft = useSignal<Draft>(draftOf(props.rule, props.connections));
  const preview = useSignal<DescribedMeasure | null>(null);
  const previewError = useSignal<unknown>(null);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const d = draft.value;
  const fields = KIND_FIELDS[d.kind];
  const set = (changes: Partial<Draft>) => (draft.value = { ...draft.value, ...changes });

  useEffect(() => {
    if (d.connectionId === '') return;
    const ask = () =>
      api<DescribedMeasure>('POST', '/api/alert-rules/preview', { connectionId: d.connectionId, ...ruleFields(d) }).then(
        (measure) => {
          preview.value = measure;
          previewError.value = null;
        },
        (failure) => {
          preview.value = null;
          previewError.value = failure;
        },
      );
    // asked again while the form is open: the value moves with the jobs
    const timer = setTimeout(ask, PREVIEW_DELAY_MS);
    const again = setInterval(ask, PREVIEW_EVERY_MS);
    return () => {
      clearTimeout(timer);
      clearInterval(again);
    };
  }, [d.connectionId, d.kind, d.queue, d.task, d.threshold, d.windowMinutes, d.relativeTo]);

  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    busy.value = true;
    error.value = null;
    try {
      const body = { name: d.name, ...ruleFields(d), channelIds: d.channelIds };
      if (props.rule === null) await api('POST', '/api/alert-rules', { connectionId: d.connectionId, ...body });
      else await api('PATCH', `/api/alert-rules/${encodeURIComponent(props.rule.id)}`, body);
      if (props.rule === null) draft.value = draftOf(null, props.connections);
      props.onSaved();
    } catch (failure) {
      error.value = failure;
    } finally {
      busy.value = false;
    }
  };
  const channels = props.channels.filter((channel) => channel.connectionId === d.connectionId);
  const toggleChannel = (id: string) => set({ channelIds: d.channelIds.includes(id) ? d.channelIds.filter((other) => other !== id) : [...d.channelIds, id] });
  return (
    <form class="card rule-form" onSubmit={onSubmit} aria-label={props.rule === null ? 'New rule' : `Edit ${props.rule.name}`}>
      <h2 class="wide">{props.rule === null ? 'New rule' : `Edit ${props.rule.name}`}</h2>
      <label>
        <span>Connection</span>
        <select name="connectionId" value={d.connectionId} disabled={props.rule !== null} onChange={(e) => set({ connectionId: e.currentTarget.value, channelIds: [] })}>
          {props.connections.map((connection) => (
            <option key={connection.id} value={connection.id}>
              {connection.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Name</span>
        <input name="name" required maxLength={100} value={d.name} onInput={(e) => set({ name: e.currentTarget.value })} />
      </label>
      <label>
        <span>Kind</span>
        <select name="kind" value={d.kind} onChange={(e) => set({ kind: e.currentTarget.value as AlertKind })}>
          {ALERT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind.replaceAll('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      {fields.queue !== 'refused' && (
        <label>
          <span>Queue (optional)</span>
          <input name="queue" maxLength={255} value={d.queue} onInput={(e) => set({ queue: e.currentTarget.value })} />
        </label>
      )}
      {fields.task !== 'refused' && (
        <label>
          <span>Task{fields.task === 'optional' ? ' (optional)' : ''}</span>
          <input name="task" maxLength={255} required={fields.task === 'required'} value={d.task} onInput={(e) => set({ task: e.currentTarget.value })} />
        </label>
      )}
      {fields.relativeTo === 'optional' && (
        <label>
          <span>p95 run time against</span>
          <select name="relativeTo" value={d.relativeTo} onChange={(e) => set({ relativeTo: e.currentTarget.value === 'week_before' ? 'week_before' : '' })}>
            <option value="">a threshold in ms</option>
            <option value="week_before">the same window a week before</option>
          </select>
        </label>
      )}
      {fields.threshold === 'required' && (
        <label>
          <span>{thresholdInput(d).label}</span>
          <input name="threshold" type="number" required min={thresholdInput(d).min} max={thresholdInput(d).max} step={thresholdInput(d).step} value={d.threshold} onInput={(e) => set({ threshold: e.currentTarget.value })} />
        </label>
      )}
      <label>
        <span>Window (minutes)</span>
        <input name="windowMinutes" type="number" required min={0.5} max={10080} step="any" value={d.windowMinutes} onInput={(e) => set({ windowMinutes: e.currentTarget.value })} />
      </label>
      <fieldset class="wide">
        <legend>Notify</legend>
        {channels.length === 0 ? (
          <span class="muted">No channel yet</span>
        ) : (
          channels.map((channel) => (
            <label key={channel.id}>
              <input type="checkbox" checked={d.channelIds.includes(channel.id)} onChange={() => toggleChannel(channel.id)} />
              {channel.name}
            </label>
          ))
        )}
      </fieldset>
      <p class="preview wide" role="status" data-testid="rule-preview">
        {preview.value === null ? (
          <span class="muted">Value now: {previewError.value === null ? '…' : 'check the fields'}</span>
        ) : (
          <>
            Value now: <strong>{preview.value.text}</strong>{' '}
            {preview.value.breached ? <span class="badge state-failed">condition holds</span> : <span class="badge">condition does not hold</span>}
          </>
        )}
      </p>
      <div class="wide">
        <ErrorText error={error.value} />
      </div>
      <div class="actions wide">
        <button type="submit" class="primary" disabled={busy.value || d.connectionId === ''}>
          {props.rule === null ? 'Create rule' : 'Save rule'}
        </button>
        {props.onCancel && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
