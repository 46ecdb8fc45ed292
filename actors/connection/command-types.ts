/**
 * The commands jobwatch sends a connection's agent (docs/api.md, "Agent commands"): what
 * each acts on (a job, a queue, a worker or a task), the parameters it takes, and the
 * checks those parameters pass before a command is queued. One list for the service, the
 * agents' contract and the dashboard.
 */
import type { JobState } from '../ingest/states.ts';

export const JOB_COMMAND_TYPES = ['revoke', 'retry', 'promote', 'delete', 'kill'] as const;
export const QUEUE_COMMAND_TYPES = ['queue.pause', 'queue.resume', 'queue.clean', 'queue.retry_failed', 'queue.concurrency'] as const;
export const WORKER_COMMAND_TYPES = ['worker.quiet', 'worker.stop', 'worker.pool'] as const;
export const TASK_COMMAND_TYPES = ['task.rate_limit'] as const;
export const COMMAND_TYPES = [...JOB_COMMAND_TYPES, ...QUEUE_COMMAND_TYPES, ...WORKER_COMMAND_TYPES, ...TASK_COMMAND_TYPES] as const;

export type JobCommandType = (typeof JOB_COMMAND_TYPES)[number];
export type QueueCommandType = (typeof QUEUE_COMMAND_TYPES)[number];
export type WorkerCommandType = (typeof WORKER_COMMAND_TYPES)[number];
export type TaskCommandType = (typeof TASK_COMMAND_TYPES)[number];
export type ControlCommandType = QueueCommandType | WorkerCommandType | TaskCommandType;
export type CommandType = JobCommandType | ControlCommandType;

const JOB_TYPES: ReadonlySet<string> = new Set(JOB_COMMAND_TYPES);
const QUEUE_TYPES: ReadonlySet<string> = new Set(QUEUE_COMMAND_TYPES);
const WORKER_TYPES: ReadonlySet<string> = new Set(WORKER_COMMAND_TYPES);

/** The finished states `queue.clean` may remove in its `finished` mode. */
export const CLEANABLE_STATES = ['completed', 'failed'] as const satisfies readonly JobState[];
export type CleanableState = (typeof CLEANABLE_STATES)[number];

export type CleanParams = { mode: 'finished'; olderThanMs: number; states: CleanableState[] } | { mode: 'waiting' };
export interface ConcurrencyParams {
  /** null clears the limit */
  concurrency: number | null;
}
export interface RateLimitParams {
  /** Celery's syntax (`10/m`), null clears the limit */
  rate: string | null;
}
export interface PoolParams {
  /** processes to add (positive) or take away (negative) */
  delta: number;
}
export type CommandParams = CleanParams | ConcurrencyParams | RateLimitParams | PoolParams;

interface CommandBase {
  id: string;
  createdAtMs: number;
}

/** A job's command names the job as jobwatch knows it and as the job system does. */
export interface JobCommand extends CommandBase {
  type: JobCommandType;
  jobId: string;
  externalId: string;
  name: string;
  queue: string | null;
}

export interface QueueCommand extends CommandBase {
  type: QueueCommandType;
  /** the queue's name in the job system */
  queue: string;
  params?: CleanParams | ConcurrencyParams;
}

export interface WorkerCommand extends CommandBase {
  type: WorkerCommandType;
  /** the worker's externalId: the job system's name for it */
  workerId: string;
  hostname: string;
  pid: number | null;
  params?: PoolParams;
}

export interface TaskCommand extends CommandBase {
  type: TaskCommandType;
  /** the task's name */
  name: string;
  queue: string | null;
  params?: RateLimitParams;
}

export type ControlCommand = QueueCommand | WorkerCommand | TaskCommand;
export type Command = JobCommand | ControlCommand;

export function isJobCommandType(type: string): type is JobCommandType {
  return JOB_TYPES.has(type);
}

export function isJobCommand(command: Command): command is JobCommand {
  return isJobCommandType(command.type);
}

/** What a control command acts on, as one key per target: the queue, worker or task its outcomes are kept under. */
export function targetKeyOf(command: ControlCommand): string {
  if (QUEUE_TYPES.has(command.type)) return queueTargetKey((command as QueueCommand).queue);
  if (WORKER_TYPES.has(command.type)) return workerTargetKey((command as WorkerCommand).workerId);
  return taskTargetKey((command as TaskCommand).name);
}

export const queueTargetKey = (name: string): string => `queue:${name}`;
export const workerTargetKey = (externalId: string): string => `worker:${externalId}`;
export const taskTargetKey = (name: string): string => `task:${name}`;

/** What each command does, in words for people: the dashboard's labels and the notes in a job's history. */
export const COMMAND_VERBS: Record<CommandType, string> = {
  revoke: 'revoke',
  retry: 'retry',
  promote: 'run now',
  delete: 'delete',
  kill: 'kill',
  'queue.pause': 'pause',
  'queue.resume': 'resume',
  'queue.clean': 'clean',
  'queue.retry_failed': 'retry all failed',
  'queue.concurrency': 'set concurrency',
  'task.rate_limit': 'set rate limit',
  'worker.quiet': 'quiet',
  'worker.stop': 'stop',
  'worker.pool': 'resize pool',
};

/** Limits on what a user's command may carry (docs/api.md, "Agent commands"). */
export const COMMAND_PARAM_LIMITS = {
  /** a year: BullMQ's and Celery's retention of finished jobs is far shorter */
  cleanOlderThanMsMax: 365 * 86_400_000,
  concurrencyMax: 1_000_000,
  poolDeltaMax: 1_000,
  rateChars: 32,
} as const;

/** Celery's rate syntax: a number of tasks, optionally per second, minute or hour. */
export const RATE_PATTERN = '^[0-9]{1,9}(\\.[0-9]{1,3})?(/[smh])?$';
