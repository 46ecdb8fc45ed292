/** What became of the job's latest revoke or retry at the agent, when the service reports it. */
import type { LastCommand } from '../../api/types.ts';
import { TimeText } from '../../components/time-text.tsx';

const LABEL = { revoke: 'Revoke', retry: 'Retry' } as const;

export function LastCommandNotice({ command }: { command: LastCommand | null | undefined }) {
  if (command === null || command === undefined) return null;
  const what = LABEL[command.type];
  if (command.status === 'failed') {
    return (
      <p class="error" role="alert">
        {what} not carried out by the agent: {command.reason ?? 'no reason given'} (<TimeText iso={command.completedAt ?? command.createdAt} />)
      </p>
    );
  }
  return (
    <p class="notice">
      {what} {command.status === 'pending' ? 'waiting for the agent' : 'carried out by the agent'} (asked <TimeText iso={command.createdAt} />)
    </p>
  );
}
