/**
 * The commands of each job and what became of them: the job's latest command (the
 * detail's and the list's `lastCommand`), and its last few, whose requests, refusals and
 * expiries the served state history shows. Kept per job id in the order of each job's
 * latest command (a new command moves its job to the end), bounded in jobs and per job,
 * and expired with retention like the commands themselves.
 */
import type { JobState } from '../ingest/states.ts';
import type { JobCommandType } from './command-types.ts';
import { ACTION_RULES } from './job-actions.ts';

/**
 * `failed`: the agent reported the job system did not carry it out; `unsupported`: the
 * job system cannot do it at all; `expired`: no outcome came within the wait.
 */
export type CommandStatus = 'pending' | 'done' | 'failed' | 'unsupported' | 'expired';
export type SettledStatus = Exclude<CommandStatus, 'pending'>;

/** What an agent may report beside an outcome: a few named figures or words (`{removed: 1204}`). */
export type OutcomeDetails = Record<string, string | number | boolean | null>;

export interface CommandOutcome {
  jobId: string;
  commandId: string;
  type: JobCommandType;
  status: CommandStatus;
  reason: string | null;
  /** what the agent said beside its outcome; absent when it said nothing (and before format 7) */
  details?: OutcomeDetails | null;
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
  /**
   * The state the command's entry shows in the job's history while it stands (a revoke's
   * `cancelled`), or null when it made none: the new controls (run now, delete, kill, a retry
   * of a job waiting to retry) leave the state to the job system. Absent before format 7:
   * revoke and retry made their rule's state.
   */
  stateEntry?: JobState | null;
}

/** The state a command's entry shows, for outcomes of every format. */
export function stateEntryOf(outcome: Pick<CommandOutcome, 'type' | 'stateEntry'>): JobState | null {
  if (outcome.stateEntry !== undefined) return outcome.stateEntry;
  return outcome.type === 'revoke' || outcome.type === 'retry' ? ACTION_RULES[outcome.type].to : null;
}

export const COMMAND_OUTCOMES_MAX = 100_000;
/** Commands kept per job: its history notes go back this far. */
export const COMMANDS_PER_JOB_MAX = 10;

export class CommandOutcomes {
  /** per job, oldest command first */
  private readonly byJob = new Map<string, CommandOutcome[]>();

  /** each kept command's job, so an outcome can be found by its command id */
  private readonly jobOfCommand = new Map<string, string>();

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

  /** A kept command of a job, by its id. */
  byCommand(commandId: string): CommandOutcome | undefined {
    const jobId = this.jobOfCommand.get(commandId);
    return jobId === undefined ? undefined : this.byJob.get(jobId)?.find((kept) => kept.commandId === commandId);
  }

  created(outcome: Omit<CommandOutcome, 'status' | 'reason' | 'completedAtMs' | 'details'>): void {
    const trail = this.byJob.get(outcome.jobId) ?? [];
    this.byJob.delete(outcome.jobId);
    trail.push({ ...outcome, status: 'pending', reason: null, completedAtMs: null });
    this.jobOfCommand.set(outcome.commandId, outcome.jobId);
    if (trail.length > COMMANDS_PER_JOB_MAX) this.jobOfCommand.delete(trail.shift()!.commandId);
    this.byJob.set(outcome.jobId, trail);
    while (this.byJob.size > this.outcomesMax) {
      const oldest = this.byJob.keys().next().value;
      if (oldest === undefined) break;
      this.forgetJob(oldest);
    }
  }

  /** Settles a pending command; returns it, or undefined when it is not kept or not pending. */
  completed(jobId: string, commandId: string, status: SettledStatus, reason: string | null, atMs: number | null, details: OutcomeDetails | null = null): CommandOutcome | undefined {
    const outcome = this.byJob.get(jobId)?.find((kept) => kept.commandId === commandId);
    if (outcome === undefined || outcome.status !== 'pending') return undefined;
    outcome.status = status;
    outcome.reason = reason;
    outcome.completedAtMs = atMs;
    if (details !== null) outcome.details = details;
    return outcome;
  }

  expireBefore(cutoffMs: number): void {
    for (const [jobId, trail] of this.byJob) {
      if (trail.at(-1)!.createdAtMs >= cutoffMs) break; // jobs are in the order of their latest command, which is time order
      this.forgetJob(jobId);
    }
  }

  private forgetJob(jobId: string): void {
    for (const kept of this.byJob.get(jobId) ?? []) this.jobOfCommand.delete(kept.commandId);
    this.byJob.delete(jobId);
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
      this.jobOfCommand.set(outcome.commandId, outcome.jobId);
    }
  }
}
