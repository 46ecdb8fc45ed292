/**
 * The last revoke or retry command of each job and what became of it, so the job detail
 * can show that a retry was not carried out and why. Kept per job id in the order the
 * commands were created (a newer command replaces the entry and moves it to the end),
 * bounded, and expired with retention like the commands themselves.
 */
import type { JobAction } from './connection-records.ts';

export type CommandStatus = 'pending' | 'done' | 'failed';

export interface CommandOutcome {
  jobId: string;
  commandId: string;
  type: JobAction;
  status: CommandStatus;
  reason: string | null;
  createdAtMs: number;
  completedAtMs: number | null;
}

export const COMMAND_OUTCOMES_MAX = 100_000;

export class CommandOutcomes {
  private readonly byJob = new Map<string, CommandOutcome>();

  constructor(private readonly outcomesMax = COMMAND_OUTCOMES_MAX) {}

  get size(): number {
    return this.byJob.size;
  }

  ofJob(jobId: string): CommandOutcome | undefined {
    return this.byJob.get(jobId);
  }

  created(jobId: string, commandId: string, type: JobAction, createdAtMs: number): void {
    this.byJob.delete(jobId);
    this.byJob.set(jobId, { jobId, commandId, type, status: 'pending', reason: null, createdAtMs, completedAtMs: null });
    while (this.byJob.size > this.outcomesMax) {
      const oldest = this.byJob.keys().next().value;
      if (oldest === undefined) break;
      this.byJob.delete(oldest);
    }
  }

  /** Only the job's latest command is tracked: an outcome of an older one changes nothing. */
  completed(jobId: string, commandId: string, status: 'done' | 'failed', reason: string | null, atMs: number | null): void {
    const outcome = this.byJob.get(jobId);
    if (outcome === undefined || outcome.commandId !== commandId) return;
    outcome.status = status;
    outcome.reason = reason;
    outcome.completedAtMs = atMs;
  }

  expireBefore(cutoffMs: number): void {
    for (const outcome of this.byJob.values()) {
      if (outcome.createdAtMs >= cutoffMs) break; // creation order is time order
      this.byJob.delete(outcome.jobId);
    }
  }

  toSnapshot(): CommandOutcome[] {
    return [...this.byJob.values()];
  }

  restore(outcomes: CommandOutcome[]): void {
    for (const outcome of outcomes) this.byJob.set(outcome.jobId, outcome);
  }
}
