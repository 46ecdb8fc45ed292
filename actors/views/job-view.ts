/** The Job list item and Job detail shapes of the interface, built from a stored job. */
import { isoOrNull } from '../clock.ts';
import { allActions, type ActionAvailability, type SupportOf } from '../connection/action-availability.ts';
import type { CommandOutcome, CommandStatus, OutcomeDetails } from '../connection/command-outcomes.ts';
import type { JobCommandType } from '../connection/command-types.ts';
import type { JobRelations } from '../connection/job-links.ts';
import { collapsedHistory, detailsOfJob, durationMsOf, stateChangedAtMs, type Job } from '../connection/job-record.ts';
import { servedStateHistory, type StateHistoryEntry } from './state-history.ts';

export interface JobListItem {
  id: string;
  externalId: string;
  framework: string;
  connectionId: string;
  name: string;
  queue: string | null;
  state: string;
  stateChangedAt: string | null;
  scheduledFor: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  workerId: string | null;
  error: string | null;
  /** the jobwatch id of the job that started this one (job-links.ts); null without one, or while it has not arrived */
  parentId: string | null;
  /** the jobwatch id of the first job of its workflow; null outside a workflow */
  rootId: string | null;
  /**
   * The job's latest command and what became of it. While a revoke or retry is `pending`,
   * `state` is what the contract's answer said (`cancelled`, `retrying`) and the job system
   * has not confirmed it; `failed` (refused), `unsupported` and `expired` were withdrawn, and
   * `state` is the job system's. The other commands never change `state` themselves.
   */
  lastCommand: LastCommand | null;
}

export interface RecentExecution {
  id: string;
  externalId: string;
  state: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  error: string | null;
}

export interface JobDetail extends JobListItem {
  tags: Record<string, unknown>;
  previousState: string | null;
  attempt: number;
  maxRetries: number | null;
  progress: number | null;
  args: null;
  result: null;
  stacktrace: string | null;
  extensions: Record<string, unknown>;
  stateHistory: StateHistoryEntry[];
  recentExecutions: RecentExecution[];
  /** whether each command can work for this job now, and why not (action-availability.ts) */
  actions: Record<JobCommandType, ActionAvailability>;
}

export interface LastCommand {
  id: string;
  type: JobCommandType;
  status: CommandStatus;
  reason: string | null;
  /** what the agent reported beside its outcome */
  details: OutcomeDetails | null;
  createdAt: string;
  completedAt: string | null;
}

export function toJobListItem(job: Job, lastCommand: CommandOutcome | undefined, relations: JobRelations): JobListItem {
  return {
    id: job.id,
    externalId: job.externalId,
    framework: job.framework,
    connectionId: job.connectionId,
    name: job.name,
    queue: job.queue,
    state: job.state,
    stateChangedAt: isoOrNull(stateChangedAtMs(job)),
    scheduledFor: isoTimeOrNull(job.details?.extensions?.eta),
    createdAt: new Date(job.createdAtMs).toISOString(),
    startedAt: isoOrNull(job.startedAtMs),
    completedAt: isoOrNull(job.completedAtMs),
    durationMs: durationMsOf(job),
    workerId: job.workerId,
    error: detailsOfJob(job).error,
    parentId: relations.parentId,
    rootId: relations.rootId,
    lastCommand: lastCommand === undefined ? null : toLastCommand(lastCommand),
  };
}

/**
 * `commands`: the job's commands kept, oldest first (CommandOutcomes.trailOf); `supportOf`:
 * what the connection's agents said they support (its CapabilityBook's `support`).
 */
export function toJobDetail(job: Job, recent: Job[], commands: readonly CommandOutcome[], supportOf: SupportOf, relations: JobRelations): JobDetail {
  const history = collapsedHistory(job);
  const details = detailsOfJob(job);
  const extensions = details.extensions ?? {};
  const tags = extensions.tags;
  const item = toJobListItem(job, commands.at(-1), relations);
  return {
    ...item,
    tags: tags !== null && typeof tags === 'object' && !Array.isArray(tags) ? (tags as Record<string, unknown>) : {},
    previousState: history.length >= 2 ? history[history.length - 2]!.state : null,
    attempt: job.attempt,
    maxRetries: job.maxRetries,
    progress: job.progress,
    args: null,
    result: null,
    stacktrace: details.stacktrace,
    extensions,
    stateHistory: servedStateHistory(history, commands),
    recentExecutions: recent.map((other) => ({
      id: other.id,
      externalId: other.externalId,
      state: other.state,
      createdAt: new Date(other.createdAtMs).toISOString(),
      startedAt: isoOrNull(other.startedAtMs),
      completedAt: isoOrNull(other.completedAtMs),
      durationMs: durationMsOf(other),
      error: detailsOfJob(other).error,
    })),
    actions: allActions(item, supportOf),
  };
}

function toLastCommand(command: CommandOutcome): LastCommand {
  return {
    id: command.commandId,
    type: command.type,
    status: command.status,
    reason: command.reason,
    details: command.details ?? null,
    createdAt: new Date(command.createdAtMs).toISOString(),
    completedAt: isoOrNull(command.completedAtMs),
  };
}

/** `extensions.eta` as sent by Celery SDKs: an ISO string or epoch milliseconds. */
function isoTimeOrNull(value: unknown): string | null {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}
