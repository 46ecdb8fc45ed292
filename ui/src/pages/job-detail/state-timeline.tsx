/** The job's state history, oldest first, with the time spent between each state and the next, and what became of its revokes and retries. */
import { StateBadge } from '../../components/state-badge.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { shortDuration } from '../../lib/time.ts';

export function StateTimeline({ history }: { history: Array<{ state: string; timestamp: string; note?: string }> }) {
  if (history.length === 0) return <p class="muted">No state changes recorded.</p>;
  return (
    <ol class="timeline" aria-label="State history">
      {history.map((entry, index) => {
        const next = history[index + 1];
        const gapMs = next === undefined ? null : Date.parse(next.timestamp) - Date.parse(entry.timestamp);
        return (
          <li key={index}>
            <StateBadge state={entry.state} />
            <TimeText iso={entry.timestamp} />
            <span class="gap">{gapMs === null ? 'current' : `${shortDuration(gapMs)} until ${next!.note?.split(':')[0] ?? next!.state}`}</span>
            {entry.note && <span class={entry.note.endsWith('requested') ? 'note' : 'note refused'}>{entry.note}</span>}
          </li>
        );
      })}
    </ol>
  );
}
