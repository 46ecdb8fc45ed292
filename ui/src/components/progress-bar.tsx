/** How far a run is: a native bar (no inline style, which the page's CSP forbids) and its percentage beside it. */
import { percentText } from '../lib/progress.ts';

export function ProgressBar({ fraction, note }: { fraction: number | null; note?: string | null }) {
  const percent = percentText(fraction);
  if (percent === null && (note === null || note === undefined)) return null;
  return (
    <span class="progress">
      {fraction !== null && (
        <progress max={1} value={fraction} aria-label={`progress ${percent}`}>
          {percent}
        </progress>
      )}
      <span class="progress-text">{[percent, note].filter((part) => part !== null && part !== undefined).join(' · ')}</span>
    </span>
  );
}
