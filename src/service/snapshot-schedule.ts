/**
 * When the running service snapshots: on a timer when the mode's policy says one is due,
 * on demand (`now`, also at a clean stop), and never two at once: the engine copies on write
 * for one snapshot at a time, so a backup (which is a snapshot) also waits for a running
 * one and holds off the next while it writes (`whenIdle`, `hold`).
 */
import type { LogLine } from '../logging/log-line.ts';

/** What a snapshot is in this mode (service-mode.ts): the whole store, or the partitions this node writes. */
export interface SnapshotPolicy {
  /** Snapshots everything this node writes that has log since its last snapshot. */
  takeAll(): Promise<void>;
  /** Checked on the timer: the snapshot that is due, started; null when none is. */
  takeDue(): Promise<void> | null;
}

export class SnapshotSchedule {
  private running: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly policy: SnapshotPolicy,
    private readonly log: LogLine,
  ) {}

  /** A snapshot now, or the one (or the backup) already running. */
  now(): Promise<void> {
    return this.running ?? this.hold(this.policy.takeAll());
  }

  /** Marks `work` as the one running; the next waits for it. Returns it, settled or not as it is. */
  hold(work: Promise<void>): Promise<void> {
    const running = work.finally(() => {
      this.running = null;
    });
    this.running = running;
    return running;
  }

  /** Resolves once nothing runs (a failure of what ran is not this caller's). */
  async whenIdle(): Promise<void> {
    while (this.running !== null) await this.running.catch(() => undefined);
  }

  /** Checks every `checkIntervalMs` whether a snapshot is due; not while the engine is halted. */
  start(checkIntervalMs: number, halted: () => boolean): void {
    this.timer = setInterval(() => {
      if (halted() || this.running !== null) return;
      const due = this.policy.takeDue();
      if (due !== null) this.hold(due).catch((error: unknown) => this.log(`snapshot failed: ${String(error)}`, { severity: 'error' }));
    }, checkIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer; what runs goes on (`whenIdle` waits for it). */
  stopTimer(): void {
    clearInterval(this.timer);
  }
}
