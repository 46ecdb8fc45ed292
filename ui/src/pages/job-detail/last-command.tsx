/** What became of the job's latest revoke or retry at the agent, when the service reports it. */
import { requestNote, unfulfilledNote } from '../../../../actors/connection/job-actions.ts';
import type { LastCommand } from '../../api/types.ts';
import { TimeText } from '../../components/time-text.tsx';

const SAYS = { pending: 'waiting for the agent', done: 'carried out by the agent' };

export function LastCommandNotice({ command }: { command: LastCommand | null | undefined }) {
  if (command === null || command === undefined) return null;
  if (command.status === 'failed' || command.status === 'unsupported' || command.status === 'expired') {
    return (
      <p class="error" role="alert">
        {unfulfilledNote(command.type, command.status, command.reason)} (<TimeText iso={command.completedAt} />): the job shows what the job system reported.
      </p>
    );
  }
  return (
    <p class="notice">
      {requestNote(command.type)} <TimeText iso={command.createdAt} />: {SAYS[command.status]}
    </p>
  );
}
