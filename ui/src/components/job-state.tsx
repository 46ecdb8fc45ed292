/**
 * A job's state as the list and the detail show it. A revoke or retry the agent has not
 * confirmed reads "revoke requested", not the contract's `cancelled`; one the job system
 * refused, or that no agent confirmed, is said beside the state it left, until the job moves on.
 */
import { ACTION_RULES, requestNote, unfulfilledNote } from '../../../actors/connection/job-actions.ts';
import type { JobListItem } from '../api/types.ts';
import { StateBadge } from './state-badge.tsx';

export function JobState({ job }: { job: Pick<JobListItem, 'state' | 'stateChangedAt' | 'lastCommand'> }) {
  const command = job.lastCommand;
  const badge = <StateBadge state={job.state} />;
  if (command === null || command.status === 'done') return badge;
  if (command.status === 'pending') {
    const note = requestNote(command.type);
    return job.state === ACTION_RULES[command.type].to ? <span class="badge requested">{note}</span> : <>{badge} <small class="muted">{note}</small></>;
  }
  // news until the job changes state after it
  if (Date.parse(job.stateChangedAt ?? '') > Date.parse(command.completedAt ?? '')) return badge;
  const note = unfulfilledNote(command.type, command.status, command.reason);
  return (
    <>
      {badge} <small class="refused" title={note}>{note.split(':')[0]}</small>
    </>
  );
}
