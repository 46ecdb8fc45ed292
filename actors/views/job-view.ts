/** The Job list item and Job detail shapes of the interface, built from a stored job. */
import { isoOrNull } from '../clock.ts';
import type { CommandOutcome } from '../connection/command-outcomes.ts';
import { collapsedHistory, detailsOfJob, durationMsOf, stateChangedAtMs, type Job } from '../connection/job-record.ts';

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
  progress: number | null;
  args: null;
  result: null;
  stacktrace: string | null;
  parentId: string | null;
  rootId: string | null;
  extensions: Record<string, unknown>;
  stateHistory: Array<{ state: string; timestamp: string }>;
  recentExecutions: RecentExecution[];
  /** The job's latest revoke or retry command and whether the job system carried it out. */
  lastCommand: LastCommand | null;
}

export interface LastCommand {
  id: string;
  type: 'revoke' | 'retry';
  status: 'pending' | 'done' | 'failed';
  reason: string | null;
  createdAt: string;
  completedAt: string | null;
}

export function toJobListItem(job: Job): JobListItem {
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
  };
}

export function toJobDetail(job: Job, recent: Job[], lastCommand: CommandOutcome | undefined): JobDetail {
  const history = collapsedHistory(job);
  const details = detailsOfJob(job);
  const extensions = details.extensions ?? {};
  const tags = extensions.tags;
  return {
    ...toJobListItem(job),
    tags: tags !== null && typeof tags === 'object' && !Array.isArray(tags) ? (tags as Record<string, unknown>) : {},
    previousState: history.length >= 2 ? history[history.length - 2]!.state : null,
    attempt: job.attempt,
    maxRetries: job.maxRetries,
    manualRetries: job.manualRetries,
    progress: job.progress,
    args: null,
    result: null,
    stacktrace: details.stacktrace,
    parentId: stringOrNull(extensions.parentId),
    rootId: stringOrNull(extensions.rootId),
    extensions,
    stateHistory: history.map((entry) => ({ state: entry.state, timestamp: new Date(entry.atMs).toISOString() })),
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
    lastCommand:
      lastCommand === undefined
        ? null
        : {
            id: lastCommand.commandId,
            type: lastCommand.type,
            status: lastCommand.status,
            reason: lastCommand.reason,
            createdAt: new Date(lastCommand.createdAtMs).toISOString(),
            completedAt: isoOrNull(lastCommand.completedAtMs),
          },
  };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** `extensions.eta` as sent by Celery SDKs: an ISO string or epoch milliseconds. */
function isoTimeOrNull(value: unknown): string | null {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}
