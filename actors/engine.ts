/**
 * The engine: the accounts actor and one actor per connection, and the only path by
 * which state changes. `commit` hands a record to the log (which fixes its order),
 * applies it with `evolve`, and resolves once the log says it is durable, so nothing is
 * acknowledged before it would survive a restart. Evolving before the sync lets the next
 * request decide against current state while one group commit covers many requests.
 * If the log fails, the engine halts: it refuses everything and reports the failure,
 * because its memory now holds state the log does not.
 */
import type { AccountsRecord } from './accounts/account-records.ts';
import { AccountsActor } from './accounts/accounts-actor.ts';
import type { Clock } from './clock.ts';
import { ConnectionActor, type Changes, type ConnectionLimits } from './connection/connection-actor.ts';
import type { ConnectionRecord } from './connection/connection-records.ts';
import { isAlertRecord, type AlertRecord } from './alerts/alert-records.ts';
import { AuditLog, type AuditLimits, type AuditRecord } from './audit/audit-log.ts';
import { DomainError } from './domain-error.ts';
import { SnapshotRestorer, takeSnapshot, type EngineSnapshot, type SnapshotScope } from './engine-snapshot.ts';
import { partitionOf } from './partition-of.ts';
import { checkRecordShape } from './stored/record-shapes.ts';

/**
 * Removes what retention has passed as of `atMs`: in every connection, or, with
 * `partition` and `partitions` (cluster mode, one record per partition written by its
 * owner), only in the connections of that partition.
 */
export interface RetentionRecord {
  t: 'retention';
  atMs: number;
  partition?: number;
  partitions?: number;
}

/**
 * Changes nothing: cluster mode's accounts writer appends one when the accounts partition
 * stayed quiet for a snapshot interval, so its subject always holds a message younger than
 * the stream's max_age and a snapshot covering it (src/partition-snapshots.ts).
 */
export interface KeepAliveRecord {
  t: 'log.keepalive';
  atMs: number;
}

/** Records after which a live stream may have to end: its session, its user or its user's teams changed. */
const ACCESS_RECORD_PREFIXES = ['session.', 'user.', 'team.', 'member.'];

export type EngineRecord = AccountsRecord | ConnectionRecord | AlertRecord | AuditRecord | RetentionRecord | KeepAliveRecord;

/** Where records go to become durable: the append log, or memory in tests. */
export interface RecordLog {
  append(record: unknown): Promise<number>;
}

export const inMemoryLog: RecordLog = { append: async () => 0 };

export interface EngineListener {
  /** after a record that changed a connection's data is durable */
  changed?(connectionId: string, changes: Changes): void;
  /** after a connection and all its data were deleted */
  deleted?(connectionId: string): void;
  /** after a record that changed users, sessions or who may read what (a logout, a login that dropped an old session, a membership) */
  accountsChanged?(): void;
}

export interface EngineOptions {
  clock: Clock;
  log: RecordLog;
  limits: ConnectionLimits;
  /** called once when the log fails; the process should stop */
  onHalt?: (error: unknown) => void;
  /** a listener failed after a durable commit: reported, never turned into a failed request */
  onListenerError?: (error: unknown) => void;
  /**
   * Which connections this engine keeps (a shard: those of its partition; docs/architecture.md,
   * "Shards"). The accounts know every connection; a connection not kept here has no actor,
   * so its records find none and change nothing. Default: every connection.
   */
  holds?: (connectionId: string) => boolean;
  /** the audit log's bounds (AUDIT_RETENTION_DAYS, AUDIT_ENTRIES_MAX); the defaults when absent */
  audit?: AuditLimits;
}

const HOLDS_EVERY_CONNECTION = (): boolean => true;

export class Engine {
  readonly accounts = new AccountsActor();
  readonly audit: AuditLog;
  private readonly connectionActors = new Map<string, ConnectionActor>();
  private readonly listeners: EngineListener[] = [];
  private haltedBy: unknown = null;
  /** Records committed here (counted as the commit starts) and replicated records applied: moves while the engine works. */
  recordsTaken = 0;
  /** Commits appended and not yet durable (or failed): the engine is not idle while one waits for the log. */
  commitsWaiting = 0;
  readonly clock: Clock;
  /** Whether this engine keeps a connection's state (see EngineOptions.holds). */
  readonly holds: (connectionId: string) => boolean;

  constructor(private readonly options: EngineOptions) {
    this.clock = options.clock;
    this.holds = options.holds ?? HOLDS_EVERY_CONNECTION;
    this.audit = new AuditLog(options.audit);
  }

  get limits(): ConnectionLimits {
    return this.options.limits;
  }

  connection(connectionId: string): ConnectionActor | undefined {
    return this.connectionActors.get(connectionId);
  }

  connectionIds(): IterableIterator<string> {
    return this.connectionActors.keys();
  }

  listen(listener: EngineListener): void {
    this.listeners.push(listener);
  }

  get halted(): boolean {
    return this.haltedBy !== null;
  }

  async commit(record: EngineRecord): Promise<void> {
    this.refuseWhenHalted();
    const durable = this.options.log.append(record);
    const changes = this.evolve(record);
    this.recordsTaken++;
    this.commitsWaiting++;
    try {
      await durable;
    } catch (error) {
      this.halt(error);
      throw unavailable();
    } finally {
      this.commitsWaiting--;
    }
    this.notify(record, changes);
  }

  /**
   * A record another node committed and the log already holds (cluster mode: a replica
   * following the owner): applied and told to the listeners exactly as a local commit is
   * once durable, so live streams, metrics and views work on a replica. Nothing is appended.
   */
  applyReplicated(raw: unknown): void {
    const record = checkRecordShape(raw);
    const changes = this.evolve(record);
    this.recordsTaken++;
    this.notify(record, changes);
  }

  /** Recovery: a record read back from the log, its shape checked (stored/record-shapes.ts), then applied. */
  replay(raw: unknown): void {
    this.evolve(checkRecordShape(raw));
  }

  /** The record is durable and acknowledged whatever a listener does. */
  private notify(record: EngineRecord, changes: Changes | null): void {
    for (const listener of this.listeners) {
      try {
        if (changes !== null && 'connectionId' in record && record.connectionId !== undefined && record.t !== 'connection.deleted') listener.changed?.(record.connectionId, changes);
        if (record.t === 'connection.deleted') listener.deleted?.(record.connectionId);
        if (ACCESS_RECORD_PREFIXES.some((prefix) => record.t.startsWith(prefix)) || record.t === 'connection.moved') listener.accountsChanged?.();
      } catch (error) {
        this.listenerFailed(error);
      }
    }
  }

  private listenerFailed(error: unknown): void {
    (this.options.onListenerError ?? ((e) => console.error('engine listener failed:', e)))(error);
  }

  /** Applies a record to state; also the replay path of recovery. */
  evolve(record: EngineRecord): Changes | null {
    if (isAlertRecord(record)) {
      // alert changes are not job, worker or queue changes: the live stream has nothing to send
      this.connectionActors.get(record.connectionId)?.alerts.evolve(record);
      return null;
    }
    switch (record.t) {
      case 'ingest':
      case 'job.action':
      case 'control.requested':
      case 'commands.acked':
      case 'commands.expired':
      case 'agent.capabilities':
        return this.connectionActors.get(record.connectionId)?.evolve(record) ?? null;
      case 'marker.added':
      case 'marker.deleted':
        // markers are not job, worker or queue changes: the live stream has nothing to send
        this.connectionActors.get(record.connectionId)?.evolve(record);
        return null;
      case 'retention':
        for (const actor of this.connectionActors.values()) {
          if (record.partitions === undefined || partitionOf(actor.connectionId, record.partitions) === record.partition) actor.expire(record.atMs);
        }
        return null;
      case 'connection.created':
        this.accounts.evolve(record);
        // Kept if present: in cluster mode a partition's snapshot can be newer than the accounts log replayed after it.
        if (this.holds(record.connection.id) && !this.connectionActors.has(record.connection.id)) {
          this.connectionActors.set(record.connection.id, new ConnectionActor(record.connection.id, this.options.limits));
        }
        return null;
      case 'connection.deleted':
        this.accounts.evolve(record);
        this.connectionActors.delete(record.connectionId);
        return null;
      case 'log.keepalive':
        return null;
      case 'audit.recorded':
        this.audit.evolve(record);
        return null;
      default:
        this.accounts.evolve(record);
        return null;
    }
  }

  /**
   * Drops the state of every connection this engine no longer holds (cluster mode: its
   * partition was let go; other nodes keep it): the actor with its jobs, indexes, dedup,
   * quota and alerts, and the audit entries its partition carried. Nothing is recorded: the
   * accounts still know the connection. The listeners are not told: the connection was not
   * deleted, and a live stream watching it goes on, its events relayed by a node keeping it
   * (src/http/cluster-live.ts). Returns what was dropped, for the log.
   */
  dropConnectionsNotHeld(): { connections: number; jobs: number; auditEntries: number } {
    const dropped: string[] = [];
    let jobs = 0;
    for (const [connectionId, actor] of this.connectionActors) {
      if (this.holds(connectionId)) continue;
      jobs += actor.jobs.size;
      dropped.push(connectionId);
    }
    for (const connectionId of dropped) this.connectionActors.delete(connectionId);
    const auditEntries = this.audit.dropVia((connectionId) => !this.holds(connectionId));
    return { connections: dropped.length, jobs, auditEntries };
  }

  /** The state as of this call, produced lazily (see engine-snapshot.ts); a scope limits it to one partition's part. */
  takeSnapshot(scope?: SnapshotScope): EngineSnapshot {
    return takeSnapshot(this.accounts, this.audit, this.connectionActors, this.clock.nowMs(), scope);
  }

  /** Recovery: applies snapshot chunks in order, before any record is replayed. */
  restorer(): SnapshotRestorer {
    return new SnapshotRestorer(this.accounts, this.audit, this.connectionActors, this.options.limits, this.holds);
  }

  refuseWhenHalted(): void {
    if (this.haltedBy !== null) throw unavailable();
  }

  /** Refuses everything from now on and reports `error` once (a failed log, or a replica that cannot follow it). */
  halt(error: unknown): void {
    if (this.haltedBy !== null) return;
    this.haltedBy = error ?? new Error('log failure');
    this.options.onHalt?.(error);
  }
}

function unavailable(): DomainError {
  return new DomainError('SERVICE_UNAVAILABLE', 'the event log cannot be written; the service is stopping to protect acknowledged data');
}
