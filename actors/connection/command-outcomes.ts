/**
 * The revoke and retry commands of each job and what became of them: the job's latest
 * command (the detail's and the list's `lastCommand`), and its last few, whose requests,
 * refusals and expiries the served state history shows. Kept per job id in the order of
 * each job's latest command (a new command moves its job to the end), bounded in jobs and
 * per job, and expired with retention like the commands themselves.
 */
import type { JobState } from '../ingest/states.ts';
import type { JobAction } from './connection-records.ts';

/** `failed`: the agent reported the job system did not carry it out; `expired`: no outcome came within the wait. */
export type CommandStatus = 'pending' | 'done' | 'failed' | 'expired';

export interface CommandOutcome {
  jobId: string;
  commandId: string;
  type: JobAction;
  status: CommandStatus;
  reason: string | null;
  createdAtMs: number;
  completedAtMs: number | null;
  /**
   * When the action's state entry stands in the job's history (the action's time, or the
   * job's newest event if later): withdrawn from there when the command fails or expires.
   * Snapshots before format 5 have none: their creation time is taken.
   */
  entryAtMs: number;
  /** The job's state when the action was taken. Snapshots before format 5 have none (null). */
  priorState: JobState | null;
}

export const COMMAND_OUTCOMES_MAX = 100_000;
/** Commands kept per job: its history notes go back this far. */
export const COMMANDS_PER_JOB_MAX = 10;

export class CommandOutcomes {
  /** per job, oldest command first */
  private readonly byJob = new Map<string, CommandOutcome[]>();

  constructor(private readonly outcomesMax = COMMAND_OUTCOMES_MAX) {}

  /** Jobs with a command kept. */
  get size(): number {
    return this.byJob.size;
  }

  /** The job's latest command. */
  ofJob(jobId: string): CommandOutcome | undefined {
    return this.byJob.get(jobId)?.at(-1);
  }

  /** The job's commands kept, oldest first. */
  trailOf(jobId: string): readonly CommandOutcome[] {
    return this.byJob.get(jobId) ?? [];
  }

  created(outcome: Omit<CommandOutcome, 'status' | 'reason' | 'completedAtMs'>): void {
    const trail = this.byJob.get(outcome.jobId) ?? [];
    this.byJob.delete(outcome.jobId);
    trail.push({ ...outcome, status: 'pending', reason: null, completedAtMs: null });
    if (trail.length > COMMANDS_PER_JOB_MAX) trail.shift();
    this.byJob.set(outcome.jobId, trail);
    while (this.byJob.size > this.outcomesMax) {
      const oldest = this.byJob.keys().next().value;
      if (oldest === undefined) break;
      this.byJob.delete(oldest);
    }
  }

  /** Settles a pending command; returns it, or undefined when it is not kept or not pending. */
  completed(jobId: string, commandId: string, status: Exclude<CommandStatus, 'pending'>, reason: string | null, atMs: number | null): CommandOutcome | undefined {
    const outcome = this.byJob.get(jobId)?.find((kept) => kept.commandId === commandId);
    if (outcome === undefined || outcome.status !== 'pending') return undefined;
    outcome.status = status;
    outcome.reason = reason;
    outcome.completedAtMs = atMs;
    return outcome;
  }

  expireBefore(cutoffMs: number): void {
    for (const [jobId, trail] of this.byJob) {
      if (trail.at(-1)!.createdAtMs >= cutoffMs) break; // jobs are in the order of their latest command, which is time order
      this.byJob.delete(jobId);
    }
  }

  /** Every job's commands, oldest first, jobs in their order. */
  toSnapshot(): CommandOutcome[] {
    return [...this.byJob.values()].flat();
  }

  /** Takes a snapshot's list (format 5, or one command per job before it). */
  restore(outcomes: Array<Omit<CommandOutcome, 'entryAtMs' | 'priorState'> & Partial<CommandOutcome>>): void {
    for (const outcome of outcomes) {
      const trail = this.byJob.get(outcome.jobId) ?? [];
      if (trail.length === 0) this.byJob.set(outcome.jobId, trail);
      trail.push({ ...outcome, entryAtMs: outcome.entryAtMs ?? outcome.createdAtMs, priorState: outcome.priorState ?? null });
    }
  }
}
