/** A target's latest commands and what became of each (a queue's page, a worker's row). */
import type { CommandView } from '../api/types.ts';
import { outcomeText, verbOf } from '../lib/command-tracker.ts';
import { TimeText } from './time-text.tsx';

export function CommandList({ commands, limit = 10 }: { commands: CommandView[]; limit?: number }) {
  if (commands.length === 0) return null;
  return (
    <ul class="commands" aria-label="Latest commands">
      {commands.slice(0, limit).map((command) => (
        <li key={command.id} class={`command-${command.status}`}>
          <strong>{verbOf(command.type)}</strong> <TimeText iso={command.createdAt} />: {outcomeText(command)}
        </li>
      ))}
    </ul>
  );
}
