/**
 * Create or edit an alert rule: its connection, name and kind, the fields its kind takes,
 * the channels it notifies, and the value the condition measures now (rule-preview.tsx).
 */
import { useSignal } from '@preact/signals';
import { ALERT_KINDS, KIND_FIELDS } from '../../../../actors/alerts/alert-model.ts';
import { api } from '../../api/client.ts';
import type { PublicChannel, PublicConnection, PublicRule } from '../../api/types.ts';
import { ErrorText } from '../../components/error-text.tsx';
import { draftOf, ruleFields, thresholdInput, type Draft } from './rule-draft.ts';
import { RulePreview } from './rule-preview.tsx';

export function RuleForm(props: { rule: PublicRule | null; connections: PublicConnection[]; channels: PublicChannel[]; onSaved: () => void; onCancel?: () => void }) {
  const draft = useSignal<Draft>(draftOf(props.rule, props.connections));
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  const d = draft.value;
  const set = (changes: Partial<Draft>) => (draft.value = { ...draft.value, ...changes });
  // every named field is the draft's field of that name; a new connection has other channels
  const onInput = (event: Event) => {
    const { name, value, type, checked } = event.target as HTMLInputElement;
    if (name in d) set({ [name]: type === 'checkbox' ? checked : value, ...(name === 'connectionId' ? { channelIds: [] } : {}) });
  };
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
  const title = props.rule === null ? 'New rule' : `Edit ${props.rule.name}`;
  return (
    <form class="card rule-form" onSubmit={onSubmit} onInput={onInput} aria-label={title}>
      <h2 class="wide">{title}</h2>
      <label>
        <span>Connection</span>
        <select name="connectionId" value={d.connectionId} disabled={props.rule !== null}>
          {props.connections.map((connection) => (
            <option key={connection.id} value={connection.id}>
              {connection.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Name</span>
        <input name="name" required maxLength={100} value={d.name} />
      </label>
      <label>
        <span>Kind</span>
        <select name="kind" value={d.kind}>
          {ALERT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind.replaceAll('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      <KindInputs draft={d} />
      <ChannelChoices channels={props.channels.filter((channel) => channel.connectionId === d.connectionId)} chosen={d.channelIds} onChange={(channelIds) => set({ channelIds })} />
      <RulePreview draft={d} />
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

/** The fields the rule's kind takes (KIND_FIELDS), and its window. */
function KindInputs({ draft: d }: { draft: Draft }) {
  const fields = KIND_FIELDS[d.kind];
  const threshold = thresholdInput(d);
  return (
    <>
      {fields.queue !== 'refused' && (
        <label>
          <span>Queue (optional)</span>
          <input name="queue" maxLength={255} value={d.queue} />
        </label>
      )}
      {fields.task !== 'refused' && (
        <label>
          <span>Task{fields.task === 'optional' ? ' (optional)' : ''}</span>
          <input name="task" maxLength={255} required={fields.task === 'required'} value={d.task} />
        </label>
      )}
      {fields.relativeTo === 'optional' && (
        <label>
          <span>p95 run time against</span>
          <select name="relativeTo" value={d.relativeTo}>
            <option value="">a threshold in ms</option>
            <option value="week_before">the same window a week before</option>
          </select>
        </label>
      )}
      {fields.threshold === 'required' && (
        <label>
          <span>{threshold.label}</span>
          <input name="threshold" type="number" required min={threshold.min} max={threshold.max} step={threshold.step} value={d.threshold} />
        </label>
      )}
      {fields.includePaused === 'optional' && (
        <label class="checkbox">
          <input name="includePaused" type="checkbox" checked={d.includePaused} />
          Also while the queue is paused (a paused queue grows by design)
        </label>
      )}
      <label>
        <span>Window (minutes)</span>
        <input name="windowMinutes" type="number" required min={0.5} max={10080} step="any" value={d.windowMinutes} />
      </label>
    </>
  );
}

/** The connection's channels, each ticked when the rule notifies it. */
function ChannelChoices(props: { channels: PublicChannel[]; chosen: string[]; onChange: (channelIds: string[]) => void }) {
  const toggle = (id: string) => props.onChange(props.chosen.includes(id) ? props.chosen.filter((other) => other !== id) : [...props.chosen, id]);
  return (
    <fieldset class="wide">
      <legend>Notify</legend>
      {props.channels.length === 0 ? (
        <span class="muted">No channel yet</span>
      ) : (
        props.channels.map((channel) => (
          <label key={channel.id}>
            <input type="checkbox" checked={props.chosen.includes(channel.id)} onChange={() => toggle(channel.id)} />
            {channel.name}
          </label>
        ))
      )}
    </fieldset>
  );
}
