/** A timestamp as relative or absolute text (the header's switch), the other form on hover. */
import { absoluteTimes, now } from '../lib/clock.ts';
import { absoluteTime, relativeTime } from '../lib/time.ts';

export function TimeText({ iso }: { iso: string | null | undefined }) {
  if (iso === null || iso === undefined) return <span class="muted">–</span>;
  const absolute = absoluteTime(iso);
  const relative = relativeTime(iso, now.value);
  return (
    <time dateTime={iso} title={absoluteTimes.value ? relative : absolute}>
      {absoluteTimes.value ? absolute : relative}
    </time>
  );
}
