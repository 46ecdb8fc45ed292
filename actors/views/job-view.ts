/** The Job list item and Job detail shapes of the interface, built from a stored job. */
import { isoOrNull } from '../clock.ts';
import { allActions, type ActionAvailability, type SupportOf } from '../connection/action-availability.ts';
import { parseAttempts } from '../connection/attempt-history.ts';
import type { CommandOutcome, CommandStatus, OutcomeDetails } from '../connection/command-outcomes.ts';
import type { JobCommandType } from '../connection/command-types.ts';
import type { JobRelations } from '../connection/job-links.ts';
import { collapsedHistory, durationMsOf, stateChangedAtMs, type Job } from '../connection/job-record.ts';
import { readPayloadText } from '../ingest/job-payload.ts';
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
  /** how far the current run is, 0 to 1 (reported, or read from a progress object); beyond V0 */
  progress: number | null;
}

/** One run of a job, as the detail lists them, oldest first, the current run last. */
export interface AttemptView {
  attempt: number;
  /** the state the run reached (a run that failed and was retried: `failed`); the current run's is the job's */
  state: string;
  startedAt: string | null;
  finishedAt: string | null;
  workerId: string | null;
  error: string | null;
  stacktrace: string | null;
}

/** A payload field kept cut: its value is the head of its JSON text, and the whole was this many bytes. */
export interface CutField {
  field: 'args' | 'result' | 'progressData';
  bytes: number;
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
  /** runs added by a retry from jobwatch that the agent carried out, beyond the job system's own retries */
  manualRetries: number;
  /** progress reported as an object, as it came (masked); null when a number or nothing was reported */
  progressData: unknown;
  args: unknown;
  result: unknown;
  /** the job's log lines, oldest first, the newest kept */
  logs: string[];
  attempts: AttemptView[];
  /** payload fields kept cut (their value is then the head of their JSON text) */
  truncated: CutField[];
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
    scheduledFor: isoTimeOrNull(extensionsOf(job).eta),
    createdAt: new Date(job.createdAtMs).toISOString(),
    startedAt: isoOrNull(job.startedAtMs),
    completedAt: isoOrNull(job.completedAtMs),
    durationMs: durationMsOf(job),
    workerId: job.workerId,
    error: job.error,
    parentId: relations.parentId,
    rootId: relations.rootId,
    lastCommand: lastCommand === undefined ? null : toLastCommand(lastCommand),
    progress: job.progress,
  };
}

/**
 * `commands`: the job's commands kept, oldest first (CommandOutcomes.trailOf); `supportOf`:
 * what the connection's agents said they support (its CapabilityBook's `support`).
 */
export function toJobDetail(job: Job, recent: Job[], commands: readonly CommandOutcome[], supportOf: SupportOf, relations: JobRelations): JobDetail {
  const history = collapsedHistory(job);
  const extensions = extensionsOf(job);
  const tags = extensions.tags;
  const item = toJobListItem(job, commands.at(-1), relations);
  const truncated: CutField[] = [];
  const payload = (field: CutField['field']): unknown => {
    const text = job[field];
    if (text === null) return null;
    const { value, cutFromBytes } = readPayloadText(text);
    if (cutFromBytes !== null) truncated.push({ field, bytes: cutFromBytes });
    return value;
  };
  return {
    ...item,
    tags: tags !== null && typeof tags === 'object' && !Array.isArray(tags) ? (tags as Record<string, unknown>) : {},
    previousState: history.length >= 2 ? history[history.length - 2]!.state : null,
    attempt: job.attempt,
    maxRetries: job.maxRetries,
    manualRetries: job.manualRetries,
    progress: job.progress,
    progressData: payload('progressData'),
    args: payload('args'),
    result: payload('result'),
    logs: job.logs === null ? [] : (JSON.parse(job.logs) as string[]),
    attempts: attemptsOf(job),
    truncated,
    stacktrace: job.stacktrace,
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
      error: other.error,
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

/** Every run of the job: the earlier ones as kept when each ended, then the current one. */
function attemptsOf(job: Job): AttemptView[] {
  const earlier = parseAttempts(job.attempts).map((run) => ({
    attempt: run.attempt,
    state: run.state,
    startedAt: isoOrNull(run.startedAtMs),
    finishedAt: isoOrNull(run.finishedAtMs),
    workerId: run.workerId,
    error: run.error,
    stacktrace: run.stacktrace,
  }));
  const current = { attempt: job.attempt, state: job.state, startedAt: isoOrNull(job.startedAtMs), finishedAt: isoOrNull(job.completedAtMs), workerId: job.workerId, error: job.error, stacktrace: job.stacktrace };
  return [...earlier, current];
}

function extensionsOf(job: Job): Record<string, unknown> {
  return job.extensions === null ? {} : (JSON.parse(job.extensions) as Record<string, unknown>);
}

/** `extensions.eta` as sent by Celery SDKs: an ISO string or epoch milliseconds. */
function isoTimeOrNull(value: unknown): string | null {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}
