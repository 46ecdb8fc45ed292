/** Whether the job system has the queue paused (its `paused`); nothing while it is not, or has not said. */
export function PausedBadge({ paused }: { paused: boolean | null }) {
  return paused === true ? <span class="badge state-paused">paused</span> : null;
}
