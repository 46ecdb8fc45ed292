/**
 * The engine's state as a sequence of plain chunks, and back. Writing 1M jobs takes
 * longer than a request may wait, so job chunks are produced lazily while requests keep
 * changing state. The snapshot stays consistent (equal to the state at its start) by
 * copy-on-write: it captures the rows of the jobs in id order, and once it starts, the
 * first change to any of their rows (or its removal, which frees the row for another job)
 * stores a copy of the job as it was, which the chunk producer prefers to the row.
 *
 * Format 2 stores jobs as columns (job-columns.ts); format 1 stored job objects and is
 * still read, so that an upgrade by restart keeps its data. Format 4 may store a chunk's
 * ids as bytes, stores errors and traces as codes into the chunk's strings and extensions as
 * JSON text, and records how much each connection's job table holds, so that a restart sizes
 * the table once (job-columns.ts); a reader of format 3 would misread it, so the version says it.
 * Format 5 keeps each job's last few commands (not only its latest), each with where its
 * state entry stands and the state before it, so that a refused one can be withdrawn after a
 * restart; a reader of format 4 would keep one command per job and lose that.
 * The job columns are format 4's.
 * Format 6 adds teams, memberships and password links to the accounts chunk, and the audit
 * log's chunks: a reader of format 5 would drop them without a word, so the version says that too.
 * Format 7 keeps the commands on queues, workers and tasks (pending and settled), what each
 * agent said it supports, whether each queue is paused, and per job command whether it made
 * a state entry and what the agent reported beside its outcome; a reader of format 6 would
 * lose them and misread a pending command on a queue as one on a job.
 * Format 8 adds each connection's task metrics (`taskMetrics` chunks) and markers; a reader
 * of format 7 would drop them.
 * Format 9 writes every column of the column list (job-column-list.ts): the typed ones as
 * before (with each job's runs added by hand and log line counts, new), each text column
 * (extensions, arguments, result, progress object, log, earlier attempts) as its texts' UTF-8
 * bytes joined with their lengths; a chunk is cut at JOBS_PER_CHUNK jobs or
 * CHUNK_TEXT_BYTES_MAX of their texts, whichever comes first; and the teams' saved views of
 * the jobs list in the accounts chunk. A reader of format 8 would drop the texts and the
 * views.
 *
 * In cluster mode each partition's owner snapshots only its part (a `SnapshotScope`):
 * the connections of one partition, and the accounts in the accounts partition's own
 * snapshot. A restorer applies such snapshots one after another (each ends with its own
 * `end`, which indexes that snapshot's jobs) and then reconciles the connections with the
 * accounts, since the snapshots were taken at different moments.
 */
import type { AccountsActor } from './accounts/accounts-actor.ts';
import type { AuditLog, StoredAuditEntry } from './audit/audit-log.ts';
import { ConnectionActor, type ConnectionLimits } from './connection/connection-actor.ts';
import type { Command } from './connection/command-queue.ts';
import type { CommandOutcome } from './connection/command-outcomes.ts';
import type { AgentCapabilities } from './connection/agent-capabilities.ts';
import type { ControlOutcome } from './connection/control-outcomes.ts';
import type { AlertBookSnapshot } from './alerts/alert-book.ts';
import type { QuotaSnapshot } from './connection/daily-quota.ts';
import { textBytesOfJob, toJobColumns, type StoredJobColumns } from './connection/job-columns.ts';
import type { FormatOneJob, Job } from './connection/job-record.ts';
import type { JobTableSizes } from './connection/job-table.ts';
import type { Queue } from './connection/queue-store.ts';
import type { Worker } from './connection/worker-store.ts';
import { QueueMetrics } from './metrics/queue-metrics.ts';
import { WorkerRate } from './metrics/worker-metrics.ts';
import { taskMetricsParts, type TaskMetricsSnapshot } from './metrics/task-metrics.ts';
import type { Marker } from './metrics/markers.ts';
import { inPartition, type PartitionSelector } from './partition-of.ts';
import { checkChunkShape } from './stored/chunk-shapes.ts';
import { ShapeError } from './stored/shape-check.ts';

export const SNAPSHOT_FORMAT_VERSION = 10;
/**
 * Versions `SnapshotRestorer` reads: 1 wrote jobs as objects (`k: 'jobs'`), 1 and 2 kept
 * dedup keys in the connection chunk, 1 to 3 had no job table sizes and ids as strings only,
 * 1 to 4 kept one command outcome per job, without its entry time and prior state, 1 to 5
 * had no teams in the accounts chunk (their connections have no team until the first start
 * of a version with teams moves them) and no audit log, 1 to 6 had no commands but on jobs,
 * no capabilities and no paused queues, 1 to 7 had no task metrics (a connection restored
 * from them starts its task metrics and markers empty), 1 to 8 had no column of the column
 * list (job-column-list.ts) added since format 4's (runs added by hand, the texts beyond
 * extensions) and extensions outside the text columns, 1 to 9 no job relations (a job
 * columns chunk without `parentExternalId` and `rootExternalId`: no job had a parent or root).
 */
const READABLE_FORMAT_VERSIONS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
/** Task metrics series go into chunks of about this many bytes: a connection's 90 days of 200 tasks is tens of MB. */
export const TASK_METRICS_BYTES_PER_CHUNK = 1 << 20;
/** Each chunk is copied and encoded in one turn of the event loop: small chunks bound the stall. */
export const JOBS_PER_CHUNK = 1_000;
/**
 * A chunk's texts (arguments, results, logs) stop it early: a thousand jobs with 256 KiB
 * logs would be a quarter of a gigabyte in one turn. A job larger than this alone is a chunk.
 */
export const CHUNK_TEXT_BYTES_MAX = 4 * 1024 * 1024;
/** 100k dedup keys in one chunk took 40-60 ms to encode at 1M jobs: the stall a snapshot caused. */
export const DEDUP_KEYS_PER_CHUNK = 5_000;
/** audit entries per chunk, for the same reason */
export const AUDIT_ENTRIES_PER_CHUNK = 5_000;

type PlainWorker = Omit<Worker, 'rate'> & { rate: unknown };
/** formats 1 to 6: no `paused` and `pausedAtMs` */
type PlainQueue = Omit<Queue, 'metrics' | 'paused' | 'pausedAtMs'> & Partial<Pick<Queue, 'paused' | 'pausedAtMs'>> & { metrics: unknown };

export type SnapshotChunk =
  | { k: 'header'; version: number; takenAtMs: number }
  | { k: 'accounts'; data: ReturnType<AccountsActor['toSnapshot']> }
  /** format 6: audit entries, oldest first, those of the snapshot's partitions in cluster mode */
  | { k: 'audit'; entries: StoredAuditEntry[] }
  | {
      k: 'connection';
      id: string;
      quota: QuotaSnapshot;
      /** formats 1 and 2: every key here; format 3: none here, they follow in `dedupKeys` chunks */
      dedupKeys: string[];
      workers: PlainWorker[];
      queues: PlainQueue[];
      commands: Command[];
      /** absent in snapshots written before command outcomes existed; formats 1 to 4: one per job, without entryAtMs and priorState */
      commandOutcomes?: Array<Omit<CommandOutcome, 'entryAtMs' | 'priorState'> & Partial<CommandOutcome>>;
      /** absent in snapshots written before alerts existed, and when the connection has none */
      alerts?: AlertBookSnapshot;
      /** format 7: the commands on queues, workers and tasks and what became of them */
      controlOutcomes?: ControlOutcome[];
      /** format 7: each framework's agent's latest report of what it supports */
      capabilities?: AgentCapabilities[];
      /** format 4: how much the job table held, so that a restart sizes it once (a hint: the jobColumns chunks are the data) */
      jobTable?: JobTableSizes;
      /** format 8: markers drawn on the task metrics' charts; absent when there are none */
      markers?: Marker[];
    }
  /** format 8: a slice of the connection's task metrics series (actors/metrics/task-metrics.ts), after its connection chunk */
  | { k: 'taskMetrics'; connectionId: string; part: TaskMetricsSnapshot }
  /** format 3: the connection's dedup keys, oldest first, in slices after its connection chunk */
  | { k: 'dedupKeys'; connectionId: string; keys: string[] }
  /** format 1 */
  | { k: 'jobs'; connectionId: string; jobs: FormatOneJob[] }
  | { k: 'jobColumns'; connectionId: string; columns: StoredJobColumns }
  /** the last chunk: jobs are indexed in bulk once all have arrived */
  | { k: 'end' };

export interface EngineSnapshot {
  chunks: Generator<SnapshotChunk>;
  /** Stops copy-on-write; called when the snapshot is written or abandoned. */
  release(): void;
}

/** Which part of the state a snapshot holds; without a scope, all of it. */
export interface SnapshotScope {
  /** whether the accounts chunk is included */
  accounts: boolean;
  /** the connections of one partition, or none (the accounts partition's snapshot) */
  connections: PartitionSelector | 'none';
  /**
   * every audit entry the engine holds, whatever it came through: a shard's, which holds only
   * those it wrote, some about no connection (src/shards/); else those of the scope's partitions
   */
  everyAuditEntry?: boolean;
}

/**
 * Captures `actors` as they are at this call (not at the first pull: the log fixes the
 * snapshot's sequence number at the same moment), then produces chunks lazily.
 */
export function takeSnapshot(accounts: AccountsActor, audit: AuditLog, actors: Map<string, ConnectionActor>, takenAtMs: number, scope?: SnapshotScope): EngineSnapshot {
  // Everything but jobs is small: copy it now, synchronously.
  const fixed: SnapshotChunk[] = [{ k: 'header', version: SNAPSHOT_FORMAT_VERSION, takenAtMs }];
  if (scope === undefined || scope.accounts) fixed.push({ k: 'accounts', data: structuredClone(accounts.toSnapshot()) });
  // entries never change once kept: the array of references is the copy
  const auditEntries = audit.toSnapshot(scope?.everyAuditEntry === true ? undefined : scope);
  for (let start = 0; start < auditEntries.length; start += AUDIT_ENTRIES_PER_CHUNK) fixed.push({ k: 'audit', entries: auditEntries.slice(start, start + AUDIT_ENTRIES_PER_CHUNK) });
  const jobLists: Array<{ actor: ConnectionActor; rows: Uint32Array; preImages: Map<number, Job> }> = [];
  for (const actor of actors.values()) {
    if (scope !== undefined && (scope.connections === 'none' || !inPartition(actor.connectionId, scope.connections))) continue;
    fixed.push(connectionChunk(actor));
    // Views of the sealed buckets (never changed in place) and copies of the open ones: consistent at this call.
    for (const part of taskMetricsParts(actor.taskMetrics.toSnapshot(), TASK_METRICS_BYTES_PER_CHUNK)) {
      fixed.push({ k: 'taskMetrics', connectionId: actor.connectionId, part });
    }
    const dedupKeys = actor.dedup.toSnapshot();
    for (let start = 0; start < dedupKeys.length; start += DEDUP_KEYS_PER_CHUNK) {
      fixed.push({ k: 'dedupKeys', connectionId: actor.connectionId, keys: dedupKeys.slice(start, start + DEDUP_KEYS_PER_CHUNK) });
    }
    const preImages = new Map<number, Job>();
    const { jobs } = actor;
    // A row first changed after the capture holds a job the snapshot has (a row freed
    // before it is not captured, and one freed after it has its copy already).
    jobs.beforeMutate = (row) => {
      if (!preImages.has(row)) preImages.set(row, jobs.read(row));
    };
    jobLists.push({ actor, rows: jobs.rows(), preImages });
  }
  const release = (): void => {
    for (const { actor, preImages } of jobLists) {
      actor.jobs.beforeMutate = null;
      preImages.clear();
    }
  };
  function* produce(): Generator<SnapshotChunk> {
    try {
      yield* fixed;
      for (const { actor, rows, preImages } of jobLists) {
        let chunk: Job[] = [];
        let textBytes = 0;
        for (const row of rows) {
          const job = preImages.get(row) ?? actor.jobs.read(row);
          chunk.push(job);
          textBytes += textBytesOfJob(job);
          if (chunk.length < JOBS_PER_CHUNK && textBytes < CHUNK_TEXT_BYTES_MAX) continue;
          // The columns are a copy: the jobs may change once this turn ends.
          yield { k: 'jobColumns', connectionId: actor.connectionId, columns: toJobColumns(chunk) };
          chunk = [];
          textBytes = 0;
        }
        if (chunk.length > 0) yield { k: 'jobColumns', connectionId: actor.connectionId, columns: toJobColumns(chunk) };
      }
      yield { k: 'end' };
    } finally {
      release();
    }
  }
  return { chunks: produce(), release };
}

function connectionChunk(actor: ConnectionActor): SnapshotChunk {
  return {
    k: 'connection',
    id: actor.connectionId,
    quota: actor.quota.toSnapshot(),
    dedupKeys: [],
    workers: [...actor.workers.values()].map((worker) => ({ ...structuredClone({ ...worker, rate: null }), rate: worker.rate.toSnapshot() })),
    queues: [...actor.queues.values()].map((queue) => ({ ...structuredClone({ ...queue, metrics: null }), metrics: queue.metrics.toSnapshot() })),
    commands: structuredClone(actor.commands.toSnapshot()),
    commandOutcomes: structuredClone(actor.commandOutcomes.toSnapshot()),
    controlOutcomes: structuredClone(actor.controlOutcomes.toSnapshot()),
    capabilities: structuredClone(actor.capabilities.toSnapshot()),
    ...(actor.alerts.isEmpty ? {} : { alerts: actor.alerts.toSnapshot() }),
    ...(actor.markers.size === 0 ? {} : { markers: actor.markers.toSnapshot() }),
    jobTable: actor.jobs.table.sizes(),
  };
}

/** Where a restorer's time went, for recovery's log line: wall-clock ms inside `restore`. */
export interface RestoreTimings {
  /** every chunk but `end`: the accounts, connections, dedup keys, and the jobs loaded into their tables */
  chunksMs: number;
  /** the `end` chunks: the dedup caches, and each job store's lookups by id and external id, tallies and groups */
  lookupsMs: number;
}

/**
 * Rebuilds state from chunks in the order `takeSnapshot` produced them. Each chunk's shape
 * is checked first (stored/chunk-shapes.ts), and so is their order: a header opens each
 * snapshot and an end chunk closes it, so a chunk that went missing or was swapped is
 * refused rather than skipped.
 */
export class SnapshotRestorer {
  readonly timings: RestoreTimings = { chunksMs: 0, lookupsMs: 0 };
  /** where in a snapshot the chunks are: before its header, inside it, or past its end chunk */
  private position: 'before header' | 'inside' | 'after end' = 'before header';
  private sawAccounts = false;
  /** the rows loaded into each connection's job table, indexed at `end` */
  private readonly pendingJobs = new Map<ConnectionActor, number[]>();
  /** Restored once all have arrived: the cache's fast path wants them in one array. */
  private readonly pendingDedupKeys = new Map<ConnectionActor, string[]>();
  private takenAtMs = 0;
  /** Connections a snapshot holds that this engine does not keep (another shard's): their chunks are passed over. */
  private readonly passedOver = new Set<string>();

  constructor(
    private readonly accounts: AccountsActor,
    private readonly audit: AuditLog,
    private readonly actors: Map<string, ConnectionActor>,
    private readonly limits: ConnectionLimits,
    private readonly holds: (connectionId: string) => boolean = () => true,
  ) {}

  restore(raw: unknown): void {
    const startedAtMs = performance.now();
    const chunk = checkChunkShape(raw);
    try {
      this.follow(chunk.k);
      this.apply(chunk);
    } finally {
      const ms = performance.now() - startedAtMs;
      if (chunk.k === 'end') this.timings.lookupsMs += ms;
      else this.timings.chunksMs += ms;
    }
  }

  /**
   * After a snapshot's last chunk: it must have ended with its end chunk, and a snapshot of
   * the whole state (a single node's; not one partition's) must have held the accounts.
   */
  snapshotEnded({ wholeState }: { wholeState: boolean }): void {
    if (this.position !== 'after end') throw new ShapeError(`expected the snapshot to close with its 'end' chunk, but its chunks ran out ${this.position === 'before header' ? 'before any header' : 'before it'}`);
    if (wholeState && !this.sawAccounts) throw new ShapeError("expected an 'accounts' chunk in a snapshot of the whole state, found none: every user, session and connection would be lost");
  }

  private follow(kind: SnapshotChunk['k']): void {
    if (kind === 'header') {
      if (this.position === 'inside') throw new ShapeError("expected the snapshot's 'end' chunk before another header");
      this.position = 'inside';
      this.sawAccounts = false;
      return;
    }
    if (this.position !== 'inside') throw new ShapeError(`expected ${this.position === 'before header' ? 'the header chunk first' : 'nothing after the end chunk'}, found a '${kind}' chunk`);
    if (kind === 'accounts') this.sawAccounts = true;
    if (kind === 'end') this.position = 'after end';
  }

  private apply(chunk: SnapshotChunk): void {
    switch (chunk.k) {
      case 'header':
        if (!READABLE_FORMAT_VERSIONS.includes(chunk.version)) {
          throw new Error(`snapshot format version ${chunk.version} is not supported (expected one of ${READABLE_FORMAT_VERSIONS.join(', ')})`);
        }
        this.takenAtMs = chunk.takenAtMs;
        return;
      case 'accounts':
        this.accounts.restore(chunk.data);
        return;
      case 'audit':
        this.audit.restore(chunk.entries);
        return;
      case 'connection': {
        if (!this.holds(chunk.id)) {
          this.passedOver.add(chunk.id);
          return;
        }
        const actor = new ConnectionActor(chunk.id, this.limits);
        actor.quota.restore(chunk.quota);
        this.pendingDedupKeys.set(actor, chunk.dedupKeys);
        for (const worker of chunk.workers) actor.workers.insert({ ...worker, rate: WorkerRate.fromSnapshot(worker.rate) });
        for (const queue of chunk.queues) {
          // Snapshots before queue retention have no lastSeenMs: count the queue as seen when the snapshot was taken.
          const lastSeenMs = (queue as Partial<PlainQueue>).lastSeenMs ?? this.takenAtMs;
          // Snapshots before queue extensions have none: the next queue snapshot brings them.
          const extensions = (queue as Partial<PlainQueue>).extensions ?? null;
          // Snapshots before format 7 do not say whether a queue is paused: the next snapshot or outcome does.
          const paused = queue.paused ?? null;
          const pausedAtMs = queue.pausedAtMs ?? Number.NEGATIVE_INFINITY;
          actor.queues.insert({ ...queue, lastSeenMs, extensions, paused, pausedAtMs, metrics: QueueMetrics.fromSnapshot(queue.metrics) });
        }
        actor.commands.restore(chunk.commands);
        actor.commandOutcomes.restore(chunk.commandOutcomes ?? []);
        actor.controlOutcomes.restore(chunk.controlOutcomes ?? []);
        actor.capabilities.restore(chunk.capabilities ?? []);
        if (chunk.alerts !== undefined) actor.alerts.restore(chunk.alerts);
        if (chunk.markers !== undefined) actor.markers.restore(chunk.markers);
        if (chunk.jobTable !== undefined) actor.jobs.table.reserve(chunk.jobTable);
        this.actors.set(chunk.id, actor);
        return;
      }
      case 'taskMetrics':
        if (this.passedOver.has(chunk.connectionId)) return;
        this.actorOf(chunk.connectionId, 'task metrics').taskMetrics.loadSnapshotPart(chunk.part);
        return;
      case 'dedupKeys': {
        if (this.passedOver.has(chunk.connectionId)) return;
        const actor = this.actorOf(chunk.connectionId, 'dedup keys');
        const keys = this.pendingDedupKeys.get(actor) ?? [];
        for (const key of chunk.keys) keys.push(key);
        this.pendingDedupKeys.set(actor, keys);
        return;
      }
      case 'jobs': {
        if (this.passedOver.has(chunk.connectionId)) return;
        const { actor, pending } = this.pendingOf(chunk.connectionId);
        for (const job of chunk.jobs) pending.push(actor.loadFormatOneJob(job));
        return;
      }
      case 'jobColumns': {
        if (this.passedOver.has(chunk.connectionId)) return;
        const { actor, pending } = this.pendingOf(chunk.connectionId);
        for (const row of actor.loadJobColumns(chunk.columns)) pending.push(row);
        return;
      }
      case 'end':
        for (const [actor, keys] of this.pendingDedupKeys) actor.dedup.restore(keys);
        this.pendingDedupKeys.clear();
        for (const [actor, rows] of this.pendingJobs) actor.loadJobs(rows);
        this.pendingJobs.clear();
        this.passedOver.clear();
        return;
    }
  }

  /**
   * After several scoped snapshots (one per partition and the accounts'), taken at
   * different moments, and the accounts log replayed to its end: every connection the
   * accounts know gets an actor (its partition's snapshot predates it; the partition's log
   * replays its records next), and an actor whose connection the accounts no longer know
   * is dropped (its partition's snapshot predates the deletion). Returns the ids of both.
   *
   * `drop: false` only creates: recovery in stream order calls it so before replaying (an
   * accounts snapshot older than a partition's may not know a connection yet whose
   * `connection.created` the replay brings), and with drops once the replay is done.
   */
  reconcileWithAccounts({ drop = true }: { drop?: boolean } = {}): { created: string[]; dropped: string[] } {
    if (this.pendingJobs.size > 0 || this.pendingDedupKeys.size > 0) throw new Error('snapshot chunks ended without their end chunk: jobs are still pending');
    const created: string[] = [];
    const dropped: string[] = [];
    for (const id of this.accounts.connections.keys()) {
      if (this.actors.has(id) || !this.holds(id)) continue;
      this.actors.set(id, new ConnectionActor(id, this.limits));
      created.push(id);
    }
    for (const id of this.actors.keys()) {
      if (!drop || this.accounts.connections.has(id)) continue;
      this.actors.delete(id);
      dropped.push(id);
    }
    return { created, dropped };
  }

  private actorOf(connectionId: string, what: string): ConnectionActor {
    const actor = this.actors.get(connectionId);
    if (actor === undefined) throw new Error(`snapshot has ${what} for unknown connection ${connectionId}`);
    return actor;
  }

  private pendingOf(connectionId: string): { actor: ConnectionActor; pending: number[] } {
    const actor = this.actorOf(connectionId, 'jobs');
    let pending = this.pendingJobs.get(actor);
    if (pending === undefined) this.pendingJobs.set(actor, (pending = []));
    return { actor, pending };
  }
}
