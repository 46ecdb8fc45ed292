/**
 * One tenant connection: the single writer of its jobs, workers, queues, indexes, dedup
 * keys and quota. `decide*` methods are pure (state + input + clock -> record and reply);
 * `evolve` is the only code that changes state, and replay runs it on the same records.
 */
import { DomainError, validationError } from '../domain-error.ts';
import { dedupKeyOf } from '../ingest/dedup-key.ts';
import type { JobEvent, NormalizedEvent, QueueEvent, WorkerEvent } from '../ingest/normalized-event.ts';
import { validateEvent, type EventError, type EventVerdict } from '../ingest/validate-event.ts';
import { FINISHED_STATES } from '../ingest/states.ts';
import type { IndexEntry } from '../jobs/sorted-index.ts';
import { DailyQuota, countsAgainstQuota, type Usage } from './daily-quota.ts';
import { DedupCache } from './dedup-cache.ts';
import { BatchIds } from './batch-ids.ts';
import { BatchBudget } from './batch-budget.ts';
import { eventBytes } from '../ingest/event-bytes.ts';
import { newId } from '../ids.ts';
import { CommandQueue } from './command-queue.ts';
import { CommandOutcomes, stateEntryOf, type OutcomeDetails, type SettledStatus } from './command-outcomes.ts';
import { isJobCommand, type Command, type ControlCommand, type JobCommand, type JobCommandType } from './command-types.ts';
import type { CapabilitiesRecord, CommandsAckedRecord, CommandsExpiredRecord, ConnectionRecord, ControlRequestedRecord, IngestRecord, JobActionRecord } from './connection-records.ts';
import { ACTION_RULES, entryStateOf, notFound, refusal, type ActionResult } from './job-actions.ts';
import { CapabilityBook, type AgentCapabilities } from './agent-capabilities.ts';
import { ControlOutcomes } from './control-outcomes.ts';
import type { SupportOf } from './action-availability.ts';
import { isFinished, JobStore, type JobChange } from './job-store.ts';
import { readJobColumns, type StoredJobColumns } from './job-columns.ts';
import { reviveJob, type FormatOneJob, type Job } from './job-record.ts';
import { LateCreatedJobs, retainedSinceMs } from './late-created-jobs.ts';
import { QueueStore, type Queue } from './queue-store.ts';
import { StringPool } from './string-pool.ts';
import { livenessMs, WorkerStore, type Worker } from './worker-store.ts';
import { tenantLimitsOf, type TenantLimits } from './tenant-limits.ts';
import { AlertBook } from '../alerts/alert-book.ts';
import { PAYLOAD_LIMIT_DEFAULTS, PayloadRules, type PayloadLimits } from '../ingest/job-payload.ts';
import { TaskMetrics } from '../metrics/task-metrics.ts';
import { MARKER_NAME_LENGTH_MAX, MarkerBook, type MarkerAddedRecord } from '../metrics/markers.ts';
import { TASK_METRICS_DEFAULTS, type TaskMetricsSettings } from '../metrics/metric-tiers.ts';

export interface ConnectionLimits extends Partial<TenantLimits> {
  dailyEventLimit: number;
  dedupKeysMax: number;
  maxJobsPerConnection: number;
  retentionMs: number;
  /** caps and redaction of what jobs were called with (job-payload.ts); the defaults where left out */
  payload?: Partial<PayloadLimits>;
  /** how long a revoke or retry waits for the agent's outcome before it is withdrawn (COMMAND_CONFIRM_SECONDS); default COMMAND_CONFIRM_DEFAULT_MS */
  commandConfirmMs?: number;
  /** task metrics' tiers and series cap; absent: TASK_METRICS_DEFAULTS */
  taskMetrics?: TaskMetricsSettings;
}

export interface IngestReply {
  accepted: number;
  rejected: number;
  skipped: number;
  truncated: number;
  usage: Usage;
  errors?: Array<{ index: number } & EventError>;
}

export interface IngestDecision {
  record: IngestRecord | null;
  reply: IngestReply;
}

/** What an applied record changed, for the live stream. */
export interface Changes {
  /** refs of the jobs (JobStore.refOf): a job removed by a later record is no longer found through its ref */
  jobs: Set<number>;
  workers: Set<Worker>;
  queues: Set<Queue>;
  /** ids of the commands made or settled */
  commands: Set<string>;
}

export function noChanges(): Changes {
  return { jobs: new Set(), workers: new Set(), queues: new Set(), commands: new Set() };
}

export const EVENT_ERRORS_REPORTED_MAX = 100;
export const COMMANDS_PER_CONNECTION_MAX = 10_000;
/**
 * Commands on queues, workers and tasks pending per connection: each is a person's request,
 * so past this one is refused (429) rather than an older one dropped.
 */
export const CONTROL_COMMANDS_PENDING_MAX = 1_000;
export const COMMAND_CONFIRM_DEFAULT_MS = 5 * 60_000;
/** Commands one expiry record withdraws at most: a backlog is withdrawn over a few records, each small. */
export const COMMANDS_EXPIRED_PER_RECORD = 1_000;
export const SHARED_STRINGS_MAX = 100_000;

/** Omit over each member of a union (a plain Omit merges them). */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The dedup keys decide built for a record's events, for evolve on the live path: the same
 * strings, already hashed by decide's lookups. One entry per record, not per event (weak
 * entries cost the garbage collector). Replay finds none and builds the keys again.
 */
const decidedKeys = new WeakMap<IngestRecord, string[]>();

export class ConnectionActor {
  readonly jobs: JobStore;
  readonly workers = new WorkerStore();
  readonly queues = new QueueStore();
  readonly quota: DailyQuota;
  readonly dedup: DedupCache;
  readonly commands = new CommandQueue(COMMANDS_PER_CONNECTION_MAX);
  readonly commandOutcomes = new CommandOutcomes();
  /** what became of the commands on queues, workers and tasks */
  readonly controlOutcomes = new ControlOutcomes();
  /** what each framework's agent said it supports */
  readonly capabilities = new CapabilityBook();
  /** the capabilities as the availability rules read them (action-availability.ts) */
  readonly supportOf: SupportOf = (framework, type) => this.capabilities.support(framework, type);
  /** alert rules, channels and deliveries: their records go to `alerts.evolve` (actors/alerts/alert-book.ts) */
  readonly alerts = new AlertBook();
  /** per task and queue counts and duration histograms, kept far longer than the jobs (actors/metrics/task-metrics.ts); replaced by a snapshot's */
  taskMetrics: TaskMetrics;
  /** named moments (deploys, changes) drawn on the task metrics' charts */
  readonly markers = new MarkerBook();
  private readonly sharedStrings = new StringPool(SHARED_STRINGS_MAX);
  /** what retention's createdAt scan cannot find (see late-created-jobs.ts) */
  private readonly lateCreated: LateCreatedJobs;
  readonly tenantLimits: TenantLimits;
  /** how arguments, results, progress objects and log lines are masked and capped on ingest */
  readonly payloadRules: PayloadRules;

  constructor(
    readonly connectionId: string,
    readonly limits: ConnectionLimits,
  ) {
    this.payloadRules = new PayloadRules({ ...PAYLOAD_LIMIT_DEFAULTS, ...limits.payload });
    this.jobs = new JobStore(connectionId, undefined, this.payloadRules.limits);
    this.lateCreated = new LateCreatedJobs(this.jobs.table);
    this.tenantLimits = tenantLimitsOf(limits);
    this.quota = new DailyQuota(limits.dailyEventLimit);
    this.dedup = new DedupCache(limits.dedupKeysMax);
    this.taskMetrics = new TaskMetrics(limits.taskMetrics ?? TASK_METRICS_DEFAULTS);
  }

  /** Nothing of the day's quota is left: a request carrying a job event is refused (`quotaRefusal`). */
  quotaSpent(nowMs: number): boolean {
    return this.quota.remaining(nowMs) === 0;
  }

  /** The 429 for a request carrying job events with nothing of the day's quota left. */
  quotaRefusal(nowMs: number): DomainError {
    const usage = this.quota.usage(nowMs);
    const retryAfterSeconds = Math.max(1, Math.ceil((Date.parse(usage.resetAt) - nowMs) / 1000));
    return new DomainError(
      'DAILY_LIMIT_EXCEEDED',
      'daily event limit reached; previously ingested data is preserved',
      undefined,
      { usage },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }

  /** One event checked on its own, as `decideIngest` checks it; the route may do so ahead, in slices. */
  validateIngestEvent(raw: unknown, nowMs: number): EventVerdict {
    // Decided with the injected clock, so replay never depends on when it runs.
    return validateEvent(raw, this.connectionId, nowMs + this.tenantLimits.clockSkewToleranceMs, this.payloadRules);
  }

  /** `verdicts`: each event already checked by `validateIngestEvent` (same order); absent, they are checked here. */
  decideIngest(rawEvents: readonly unknown[], nowMs: number, verdicts?: readonly EventVerdict[]): IngestDecision {
    const remainingAtArrival = this.quota.remaining(nowMs);
    // Only job events spend the quota, so a request of worker and queue events alone is
    // still taken when it is spent (they stay bounded by the byte budget and the caps).
    if (remainingAtArrival === 0 && rawEvents.some(countsAgainstQuota)) throw this.quotaRefusal(nowMs);
    const accepted: NormalizedEvent[] = [];
    const errors: Array<{ index: number } & EventError> = [];
    const keysInBatch = new Set<string>();
    const acceptedKeys: string[] = [];
    const newIds = new BatchIds(this);
    const budget = new BatchBudget(this, nowMs);
    let rejected = 0;
    let skipped = 0;
    let truncated = 0;
    let acceptedJobEvents = 0;
    rawEvents.forEach((raw, index) => {
      const counted = countsAgainstQuota(raw);
      if (counted && acceptedJobEvents >= remainingAtArrival) {
        truncated++;
        return;
      }
      const verdict = verdicts === undefined ? this.validateIngestEvent(raw, nowMs) : verdicts[index]!;
      if (!verdict.ok) {
        rejected++;
        if (errors.length < EVENT_ERRORS_REPORTED_MAX) errors.push({ index, ...verdict.error });
        return;
      }
      const key = dedupKeyOf(verdict.event);
      if (keysInBatch.has(key) || this.dedup.has(key)) {
        skipped++;
        return;
      }
      const limitError = newIds.boundError(verdict.event) ?? budget.admit(verdict.event);
      if (limitError !== null) {
        rejected++;
        if (errors.length < EVENT_ERRORS_REPORTED_MAX) errors.push({ index, ...limitError });
        return;
      }
      keysInBatch.add(key);
      newIds.assign(verdict.event);
      accepted.push(verdict.event);
      acceptedKeys.push(key);
      if (counted) acceptedJobEvents++;
    });
    const record: IngestRecord | null =
      accepted.length === 0 ? null : { t: 'ingest', connectionId: this.connectionId, receivedAtMs: nowMs, events: accepted };
    // Stryker disable next-line ConditionalExpression: without the handed-over keys evolve computes the same keys itself (replay does), only slower
    if (record !== null) decidedKeys.set(record, acceptedKeys);
    const usageAfter = this.quota.usage(nowMs);
    usageAfter.used += acceptedJobEvents;
    if (this.limits.dailyEventLimit > 0) usageAfter.remaining = Math.max(0, usageAfter.remaining - acceptedJobEvents);
    const reply: IngestReply = { accepted: accepted.length, rejected, skipped, truncated, usage: usageAfter };
    if (errors.length > 0) reply.errors = errors;
    return { record, reply };
  }

  /**
   * Judges each id against the rules; ids repeated in one request see the effect of their
   * earlier occurrence. Returns one result per id, in order, and the record of what passed.
   */
  decideJobAction(action: JobCommandType, jobIds: readonly string[], nowMs: number): { results: ActionResult[]; record: JobActionRecord | null } {
    const rule = ACTION_RULES[action];
    const decidedState = new Map<string, Job['state']>();
    const targets: JobActionRecord['targets'] = [];
    const results = jobIds.map((id): ActionResult => {
      const row = this.jobs.rowOf(id);
      if (row < 0) return notFound(id);
      const state = decidedState.get(id) ?? this.jobs.table.stateOf(row);
      if (!rule.from.has(state)) return refusal(action, state, id);
      const shown = entryStateOf(action, state) ?? state;
      decidedState.set(id, shown);
      const commandId = newId();
      targets.push({ jobId: id, commandId });
      return { id, success: true, state: shown, commandId };
    });
    const record: JobActionRecord | null =
      targets.length === 0 ? null : { t: 'job.action', connectionId: this.connectionId, atMs: nowMs, action, targets };
    return { results, record };
  }

  /**
   * The pending commands no outcome came for within the wait for confirmation, oldest
   * first, as a record that withdraws them; null when there are none. Run by a timer on the
   * node that writes the connection (src/service/command-deadline-timer.ts).
   */
  decideCommandExpiry(nowMs: number): CommandsExpiredRecord | null {
    const ids = this.commands.createdBefore(nowMs - (this.limits.commandConfirmMs ?? COMMAND_CONFIRM_DEFAULT_MS), COMMANDS_EXPIRED_PER_RECORD);
    return ids.length === 0 ? null : { t: 'commands.expired', connectionId: this.connectionId, atMs: nowMs, ids };
  }

  /**
   * A marker at `atMs`: no older than the day tier keeps (it would be dropped at once) and
   * no later than the clock skew tolerance allows an event to be.
   */
  decideAddMarker(name: string, atMs: number, addedBy: string, nowMs: number): MarkerAddedRecord {
    const trimmed = name.trim();
    if (trimmed === '' || trimmed.length > MARKER_NAME_LENGTH_MAX) throw validationError('name', `must be 1 to ${MARKER_NAME_LENGTH_MAX} characters, not only spaces`);
    const oldestMs = nowMs - this.taskMetrics.settings.retentionMs.day;
    if (!(atMs >= oldestMs && atMs <= nowMs + this.tenantLimits.clockSkewToleranceMs)) {
      throw validationError('at', `must be between ${new Date(oldestMs).toISOString()} (as far back as task metrics are kept) and now`);
    }
    return { t: 'marker.added', connectionId: this.connectionId, marker: { id: newId(), name: trimmed, atMs, createdAtMs: nowMs, addedBy } };
  }

  /**
   * A command on a queue, a worker or a task, as the agent will receive it; its target and
   * parameters were checked by the caller. Refused (429) while the connection already has
   * `CONTROL_COMMANDS_PENDING_MAX` of them waiting for the agent.
   */
  decideControl(command: DistributiveOmit<ControlCommand, 'id' | 'createdAtMs'>, nowMs: number): ControlRequestedRecord {
    if (this.commands.controlSize >= CONTROL_COMMANDS_PENDING_MAX) {
      throw new DomainError(
        'RATE_LIMITED',
        `${CONTROL_COMMANDS_PENDING_MAX} commands of this connection are waiting for its agent (is it running?); wait for it to answer them, or for them to expire`,
        undefined,
        undefined,
        { 'Retry-After': '10' },
      );
    }
    return { t: 'control.requested', connectionId: this.connectionId, atMs: nowMs, command: { ...command, id: newId(), createdAtMs: nowMs } as ControlCommand };
  }

  /** An agent's report of what it supports; null when it says what the kept report says (nothing to record). */
  decideCapabilities(report: Omit<AgentCapabilities, 'reportedAtMs'>, nowMs: number): CapabilitiesRecord | null {
    if (this.capabilities.same(report)) return null;
    return { t: 'agent.capabilities', connectionId: this.connectionId, atMs: nowMs, framework: report.framework, agentVersion: report.agentVersion, controls: report.controls };
  }

  evolve(record: ConnectionRecord): Changes {
    const changes = noChanges();
    switch (record.t) {
      case 'ingest': {
        let bytes = 0;
        let jobEvents = 0;
        // Events apply one by one, in order (metrics and workers see each state a job passes
        // through); only the index work is per job, once the batch is applied.
        const keys = decidedKeys.get(record);
        this.jobs.deferIndexing(() => {
          record.events.forEach((event, index) => {
            this.dedup.add(keys?.[index] ?? dedupKeyOf(event));
            bytes += eventBytes(event);
            if (event.kind === 'job') jobEvents++;
            this.applyEvent(event, changes, record.receivedAtMs);
          });
        });
        this.enforceJobCap(changes);
        this.quota.record(jobEvents, bytes, record.receivedAtMs);
        break;
      }
      case 'job.action':
        this.applyJobAction(record, changes);
        break;
      case 'control.requested':
        this.applyControl(record, changes);
        break;
      case 'commands.acked':
        this.applyAck(record, changes);
        break;
      case 'commands.expired':
        for (const id of record.ids) this.settle(id, 'expired', null, record.atMs, changes);
        break;
      case 'marker.added':
      case 'marker.deleted':
        this.markers.evolve(record);
        break;
      case 'agent.capabilities':
        this.capabilities.set({ framework: record.framework, agentVersion: record.agentVersion, reportedAtMs: record.atMs, controls: record.controls });
        break;
    }
    for (const ref of changes.jobs) this.lateCreated.update(this.jobs.table.rowOfRef(ref));
    return changes;
  }

  /** A format 1 snapshot's job as a row of the job table (indexed by `loadJobs`); returns the row. */
  loadFormatOneJob(plain: FormatOneJob): number {
    return this.jobs.table.insert(reviveJob(plain));
  }

  /** A snapshot's job columns (formats 2 and 3) as rows of the job table (indexed by `loadJobs`); returns the rows. */
  loadJobColumns(columns: StoredJobColumns): number[] {
    const typed = readJobColumns(columns);
    const first = this.jobs.table.load(typed);
    return Array.from({ length: typed.count }, (_, at) => first + at);
  }

  /** Recovery: fills the empty job store with the snapshot's rows, loaded into its table. */
  loadJobs(rows: number[]): void {
    this.jobs.loadAll(rows);
    for (const row of rows) this.lateCreated.update(row);
  }

  /**
   * Removes what is older than the retention window: jobs whose last state change is
   * older, commands, workers not heard from, and queues nothing named (so queue and
   * worker names a client invents do not stay forever). Deterministic (time from the record).
   * Candidates come from the createdAt index, up to the cutoff (a state rarely begins
   * before its job was created), and from the jobs whose reported createdAt is later than
   * the start of their state, which that scan cannot reach (late-created-jobs.ts).
   */
  expire(nowMs: number): void {
    const cutoffMs = nowMs - this.limits.retentionMs;
    const table = this.jobs.table;
    const expired = new Set<number>(this.lateCreated.retainedBefore(cutoffMs));
    for (const { item: row } of this.jobs.indexes.createdAt.scan('asc')) {
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the stop bounds the work; past it the check below keeps every job
      if (table.createdAtMsOf(row) >= cutoffMs) break;
      if (retainedSinceMs(table, row) < cutoffMs) expired.add(row);
    }
    for (const row of expired) {
      this.lateCreated.delete(row);
      this.jobs.remove(row);
    }
    // what retention still finds pending (the wait for confirmation is longer than retention) is withdrawn too
    const unseen = noChanges();
    for (const id of this.commands.createdBefore(cutoffMs)) this.settle(id, 'expired', null, nowMs, unseen);
    this.commandOutcomes.expireBefore(cutoffMs);
    this.controlOutcomes.expireBefore(cutoffMs);
    for (const worker of [...this.workers.values()]) if (livenessMs(worker) < cutoffMs) this.workers.delete(worker);
    for (const queue of [...this.queues.values()]) if (queue.lastSeenMs < cutoffMs) this.queues.delete(queue);
    this.sampleQueues(nowMs);
    this.taskMetrics.maintain(nowMs);
    this.markers.expireBefore(nowMs - this.taskMetrics.settings.retentionMs.day);
  }

  /**
   * Retention's run (once a minute) samples each queue's depth and the age of its oldest
   * waiting job into the task metrics: a logged record, so a replay samples the same.
   */
  private sampleQueues(nowMs: number): void {
    const oldestCreatedMs = this.oldestQueuedPerQueue();
    for (const queue of this.queues.values()) {
      const depth = queue.depth ?? this.jobs.queuedPerQueue.get(queue.name);
      const oldestMs = oldestCreatedMs.get(queue.name);
      this.taskMetrics.sampleQueue(queue.name, nowMs, depth, oldestMs === undefined ? 0 : nowMs - oldestMs);
    }
  }

  /** The createdAt of each queue's oldest job in `queued`, from one scan of that state's createdAt order that stops once every queue with one is found. */
  private oldestQueuedPerQueue(): Map<string, number> {
    const oldest = new Map<string, number>();
    let waiting = 0;
    for (const queue of this.queues.values()) if (this.jobs.queuedPerQueue.get(queue.name) > 0) waiting++;
    if (waiting === 0) return oldest;
    const { table } = this.jobs;
    for (const { item: row } of this.jobs.oldestOf(['queued'])) {
      const queue = table.queueOf(row);
      if (queue === null || oldest.has(queue)) continue;
      oldest.set(queue, table.createdAtMsOf(row));
      if (oldest.size >= waiting) break;
    }
    return oldest;
  }

  private applyJobAction(record: JobActionRecord, changes: Changes): void {
    const table = this.jobs.table;
    for (const { jobId, commandId } of record.targets) {
      const row = this.jobs.rowOf(jobId);
      if (row < 0) continue;
      const priorState = table.stateOf(row);
      // The action stands after the newest thing known about the job even if the job system's clock runs ahead.
      const atMs = Math.max(record.atMs, table.lastEventMsOf(row));
      const entry = entryStateOf(record.action, priorState);
      if (entry !== null) this.jobs.applyAction(row, entry, atMs);
      const jobQueue = table.queueOf(row);
      const queue = jobQueue === null ? undefined : this.queues.get(jobQueue);
      if (queue !== undefined) this.queues.touch(queue, atMs);
      this.commandOutcomes.created({ jobId, commandId, type: record.action, createdAtMs: record.atMs, entryAtMs: atMs, priorState, stateEntry: entry });
      const command: JobCommand = { id: commandId, type: record.action, jobId, externalId: table.externalId(row), name: table.nameOf(row), queue: jobQueue, createdAtMs: record.atMs };
      this.queueCommand(command, record.atMs, changes);
      changes.jobs.add(this.jobs.refOf(row));
    }
  }

  private applyControl(record: ControlRequestedRecord, changes: Changes): void {
    this.controlOutcomes.created(record.command);
    this.queueCommand(record.command, record.atMs, changes);
  }

  /** Into the agent's queue; what the bound pushes out is settled as expired. */
  private queueCommand(command: Command, atMs: number, changes: Changes): void {
    changes.commands.add(command.id);
    for (const dropped of this.commands.push(command)) this.settleOutcome(dropped, 'expired', null, atMs, changes, null);
  }

  private applyAck(record: CommandsAckedRecord, changes: Changes): void {
    const atMs = record.atMs ?? null;
    for (const id of record.ids) this.settle(id, 'done', null, atMs, changes);
    for (const { id, reason } of record.failed ?? []) this.settle(id, 'failed', reason, atMs, changes);
    for (const { id, status, reason, details } of record.outcomes ?? []) this.settle(id, status, reason, atMs, changes, details ?? null);
  }

  /** A pending command's outcome: it leaves the agent's queue; nothing when it is no longer pending (an ack sent again). */
  private settle(commandId: string, status: SettledStatus, reason: string | null, atMs: number | null, changes: Changes, details: OutcomeDetails | null = null): void {
    const command = this.commands.get(commandId);
    if (command === undefined) return;
    this.commands.ack([commandId]);
    this.settleOutcome(command, status, reason, atMs, changes, details);
  }

  private settleOutcome(command: Command, status: SettledStatus, reason: string | null, atMs: number | null, changes: Changes, details: OutcomeDetails | null): void {
    changes.commands.add(command.id);
    if (isJobCommand(command)) this.settleJobCommand(command, status, reason, atMs, changes, details);
    else this.settleControl(command, status, reason, atMs, changes, details);
  }

  /**
   * What became of a command on a queue, a worker or a task. A pause or resume carried out
   * says whether the queue is paused (until a newer queue snapshot says otherwise).
   */
  private settleControl(command: ControlCommand, status: SettledStatus, reason: string | null, atMs: number | null, changes: Changes, details: OutcomeDetails | null): void {
    this.controlOutcomes.completed(command.id, status, reason, atMs, details);
    if (command.type !== 'queue.pause' && command.type !== 'queue.resume' && command.type !== 'queue.clean') return;
    const queue = this.queues.get(command.queue);
    if (queue === undefined) return;
    changes.queues.add(queue); // so a watching dashboard shows the outcome on the queue
    if (status === 'done' && command.type !== 'queue.clean') this.queues.sayPaused(queue, command.type === 'queue.pause', atMs ?? command.createdAtMs);
  }

  /**
   * Records what became of a command on its job. One that did not happen (failed,
   * unsupported or expired) is withdrawn: its state entry, if it made one, leaves the
   * history, and the job shows what the job system last reported, events that arrived
   * meanwhile included.
   */
  private settleJobCommand(command: JobCommand, status: SettledStatus, reason: string | null, atMs: number | null, changes: Changes, details: OutcomeDetails | null): void {
    const outcome = this.commandOutcomes.completed(command.jobId, command.id, status, reason, atMs, details);
    const row = this.jobs.rowOf(command.jobId);
    if (row < 0) return;
    changes.jobs.add(this.jobs.refOf(row)); // so a watching dashboard refetches the job
    const table = this.jobs.table;
    const entry = stateEntryOf(outcome ?? { type: command.type });
    if (status === 'done') {
      // A revoke or retry the job system carried out counts in the task metrics, once, at the
      // time it was taken. The commands that made no state entry (run now, delete, kill, a
      // retry of a job already waiting to retry, counted when it began to wait) leave the
      // state to the job system, whose events count what follows.
      const kind = entry === null ? null : command.type === 'revoke' ? 'cancelled' : command.type === 'retry' ? 'retried' : null;
      if (kind !== null) this.taskMetrics.recordTransition(table.nameOf(row), table.queueOf(row), kind, outcome?.entryAtMs ?? command.createdAtMs, atMs ?? command.createdAtMs);
      // The job system ran it once more because of jobwatch: the detail says so beside the
      // attempt. A retry of a job waiting to retry made no entry: it ran the attempt that was
      // due anyway, sooner, and adds no run.
      if (command.type === 'retry' && entry !== null) this.jobs.countManualRetry(row);
      return;
    }
    if (entry === null) return;
    const stateBefore = table.stateOf(row);
    if (!this.jobs.withdrawAction(row, entry, outcome?.entryAtMs ?? command.createdAtMs)) return;
    // Events the action hid moved the job meanwhile (it finished, say): the metrics count that
    // move now, unless the job is only back where it was when the action was taken.
    const state = table.stateOf(row);
    const jobQueue = table.queueOf(row);
    const queue = jobQueue === null ? undefined : this.queues.get(jobQueue);
    if (state !== stateBefore && state !== outcome?.priorState) {
      this.recordMetrics({ row, created: false, stateBefore, isNewest: true }, queue, atMs ?? command.createdAtMs, atMs ?? command.createdAtMs);
    }
  }

  private applyEvent(event: NormalizedEvent, changes: Changes, recordAtMs: number): void {
    switch (event.kind) {
      case 'job':
        return this.applyJobEvent(event, changes, recordAtMs);
      case 'worker':
        return this.applyWorkerEvent(event, changes);
      case 'queue':
        return this.applyQueueEvent(event, changes);
    }
  }

  private applyJobEvent(event: JobEvent, changes: Changes, recordAtMs: number): void {
    // The record is already encoded in the log, so its strings can be swapped for shared copies.
    event.name = this.sharedStrings.intern(event.name);
    event.framework = this.sharedStrings.intern(event.framework) as JobEvent['framework'];
    if (event.queue !== undefined) event.queue = this.sharedStrings.intern(event.queue);
    if (event.workerId !== undefined) event.workerId = this.sharedStrings.intern(event.workerId);
    // Any job naming a queue makes it exist, even an old event whose queue the job does not keep.
    if (event.queue !== undefined && this.queues.get(event.queue) === undefined) {
      changes.queues.add(this.queues.ensure(this.connectionId, event.queue, event.framework, event.atMs, event.newQueueId));
    }
    const named = event.queue === undefined ? undefined : this.queues.get(event.queue);
    if (named !== undefined) this.queues.touch(named, event.atMs);
    const change = this.jobs.applyEvent(event);
    changes.jobs.add(this.jobs.refOf(change.row));
    const jobQueue = this.jobs.table.queueOf(change.row);
    const queue = jobQueue === null ? undefined : this.queues.get(jobQueue);
    if (queue !== undefined) this.queues.touch(queue, event.atMs);
    this.recordMetrics(change, queue, event.atMs, recordAtMs);
  }

  /**
   * Metrics move only when the newest event (or a withdrawn action) moves the job into a
   * new state: the queue's buckets, the worker's rate and the task metrics; `atMs` stands in
   * for times the job lacks, `recordAtMs` is the record's own time. Wait time is measured
   * when a job starts, or when it finishes without having been seen active (an agent that
   * saw only the end still reports when it started); run time when it finishes with a
   * known start.
   */
  private recordMetrics(change: JobChange, queue: Queue | undefined, atMs: number, recordAtMs: number): void {
    const { table } = this.jobs;
    const row = change.row;
    const state = table.stateOf(row);
    if (!change.isNewest || change.stateBefore === state) return;
    const name = table.nameOf(row);
    const queueName = table.queueOf(row);
    const startedAtMs = table.startedAtMsOf(row);
    if (state === 'active') {
      const startMs = startedAtMs ?? atMs;
      const waitMs = Math.max(0, startMs - table.createdAtMsOf(row));
      queue?.metrics.recordStarted(startMs, waitMs);
      this.taskMetrics.recordStarted(name, queueName, startMs, waitMs, recordAtMs);
    } else if (state === 'retrying' || state === 'cancelled') {
      this.taskMetrics.recordTransition(name, queueName, state === 'retrying' ? 'retried' : 'cancelled', atMs, recordAtMs);
    } else if (isFinished(state)) {
      const finishedAtMs = table.completedAtMsOf(row) ?? atMs;
      if (change.stateBefore !== 'active' && startedAtMs !== null) {
        this.taskMetrics.recordStarted(name, queueName, startedAtMs, Math.max(0, startedAtMs - table.createdAtMsOf(row)), recordAtMs);
      }
      const runMs = startedAtMs === null ? null : Math.max(0, finishedAtMs - startedAtMs);
      this.taskMetrics.recordFinished(name, queueName, state === 'failed' ? 'failed' : 'completed', finishedAtMs, runMs, recordAtMs);
      queue?.metrics.recordFinished(finishedAtMs, state === 'failed');
      const workerId = table.workerOf(row);
      const worker = workerId === null ? undefined : this.workers.get(workerId);
      if (worker !== undefined) {
        worker.rate.recordFinished(finishedAtMs);
        worker.processedTotal++;
      }
    }
  }

  private applyWorkerEvent(event: WorkerEvent, changes: Changes): void {
    changes.workers.add(this.workers.applyEvent(this.connectionId, event));
  }

  private applyQueueEvent(event: QueueEvent, changes: Changes): void {
    changes.queues.add(this.queues.applySnapshot(this.connectionId, event));
  }

  /**
   * Past the per-connection cap, the oldest finished jobs go first, then the oldest of any
   * state. Enforced once the whole record is applied:
   * `decide` judged every event against the jobs as they were before the record, so a job
   * evicted halfway would leave a later event of the same record without its job (and the
   * log unreplayable).
   */
  private enforceJobCap(changes: Changes): void {
    const excess = this.jobs.size - this.limits.maxJobsPerConnection;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a fast path; with no excess collectOldest takes nothing
    if (excess <= 0) return;
    const victims = new Set<number>();
    this.collectOldest(victims, excess, this.jobs.oldestOf(FINISHED_STATES));
    this.collectOldest(victims, excess, this.jobs.indexes.createdAt.scan('asc'));
    for (const row of victims) {
      changes.jobs.delete(this.jobs.refOf(row));
      this.lateCreated.delete(row);
      this.jobs.remove(row);
    }
  }

  /** Adds rows from `oldestFirst` (a scan by createdAt) to `victims` until it holds `count`. */
  private collectOldest(victims: Set<number>, count: number, oldestFirst: Iterable<IndexEntry<number>>): void {
    if (victims.size >= count) return;
    for (const entry of oldestFirst) {
      victims.add(entry.item); // a job the first pass took is already in: the size stays
      if (victims.size >= count) return;
    }
  }
}
