/** The columns of the rules table: the rule, its condition in words, its state, the value now, whom it notifies, edit and delete. */
import type { PublicRule } from '../../api/types.ts';
import type { Column } from '../../components/data-table.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { STATUS_CLASS } from './status-class.ts';
import { whyNotChange } from './alert-roles.ts';

export function ruleColumns(channelNames: Map<string, string>, onEdit: (rule: PublicRule) => void, onDelete: (rule: PublicRule) => void): Column<PublicRule>[] {
  return [
    { id: 'name', label: 'Rule', cell: (rule) => <strong>{rule.name}</strong> },
    // the condition in words already names what it measures ("failure rate > 20% …", "depth > 10 …")
    { id: 'condition', label: 'Condition', cell: (rule) => rule.condition },
    {
      id: 'state',
      label: 'State',
      cell: (rule) => (
        <>
          <span class={`badge ${STATUS_CLASS[rule.status]}`}>{rule.status}</span>{' '}
          {rule.status === 'firing' && <span class="hint">since <TimeText iso={rule.firingSince} /></span>}
          {rule.status === 'resolved' && <span class="hint"><TimeText iso={rule.changedAt} /></span>}
        </>
      ),
    },
    { id: 'value', label: 'Value now', class: 'num', cell: (rule) => <span class={rule.current.breached ? 'error-inline' : undefined}>{rule.current.text}</span> },
    { id: 'channels', label: 'Notifies', class: 'hide-narrow', cell: (rule) => (rule.channelIds.length === 0 ? <span class="muted">nobody</span> : rule.channelIds.map((id) => channelNames.get(id) ?? id).join(', ')) },
    {
      id: 'edit',
      label: '',
      cell: (rule) => (
        <span class="actions">
          <button type="button" class="small" disabled={whyNotChange(rule.connectionId) !== null} title={whyNotChange(rule.connectionId) ?? undefined} onClick={() => onEdit(rule)} aria-label={`Edit ${rule.name}`}>Edit</button>
          <button type="button" class="danger small" disabled={whyNotChange(rule.connectionId) !== null} title={whyNotChange(rule.connectionId) ?? undefined} onClick={() => onDelete(rule)} aria-label={`Delete ${rule.name}`}>Delete</button>
        </span>
      ),
    },
  ];
}
