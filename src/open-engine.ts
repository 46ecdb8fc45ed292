/**
 * Opening a data directory, shared by the server and the CLI: take the directory lock,
 * open the log, recover (snapshot + log tail, logging what was done), and hand back an
 * engine whose every commit goes to the log.
 *
 * Cluster mode (the server only): the engine recovers as a replica of every partition of
 * the log on NATS and keeps following it; it writes the partitions this node takes
 * (`cluster.store.writing()`), as cluster/partition-ownership.ts assigns them.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newSessionSecret } from '../actors/accounts/secrets.ts';
import { systemClock, type Clock } from '../actors/clock.ts';
import type { AuditLimits } from '../actors/audit/audit-log.ts';
import type { ConnectionLimits } from '../actors/connection/connection-actor.ts';
import { Engine } from '../actors/engine.ts';
import { acquireDataDirLock, type DataDirLock } from '../persistence/data-dir-lock.ts';
import { readLayout, WHOLE_STORE_DIR } from '../persistence/data-layout.ts';
import { openWholeDataDir, settleLayout, type WholeDataDir } from './shards/reshard.ts';
import { openDurableStore, type DurableStore, type LogWriterObserver, type RecoveryReport } from '../persistence/durable-store.ts';
import { FileStorage } from '../persistence/file-storage.ts';
import { describeTightening, mkdirPrivate, PRIVATE_FILE_MODE, tightenPrivateTree } from '../persistence/private-files.ts';
import { keepAccountsMark } from './accounts-kept.ts';
import { engineRecoveryHandler } from './engine-recovery.ts';
import type { Config } from './config.ts';
import type { LogLine } from './logging/log-line.ts';
import type { OpenedCluster, PartitionOwners } from '../cluster/open-cluster.ts';
import type { KeepingEngine } from '../cluster/partition-keeping.ts';
import type { ClusterRecoveryHandler, ClusterStore } from '../cluster/cluster-store.ts';

/** What the HTTP front reads of a replica (cluster/subject-follower.ts). */
export interface LogReplica {
  /** The log sequence applied so far. */
  readonly appliedSeq: number;
  /** The newest log sequence this node has heard of. */
  readonly lastKnownSeq: number;
  /** Applying the log as it grows (false once stopped or failed). */
  readonly following: boolean;
  /** True once `seq` is applied; false after `timeoutMs`. */
  waitApplied(seq: number, timeoutMs: number): Promise<boolean>;
}

export interface OpenedEngine {
  engine: Engine;
  store: DurableStore;
  lock: DataDirLock;
  recovery: RecoveryReport;
  sessionSecret: string;
  /** Cluster mode: this node's id; null on a single node. */
  clusterNodeId: string | null;
  /** Cluster mode: the partitioned store, the replica that follows every partition, and who writes which; null on a single node. */
  cluster: ClusterNode | null;
  close(): Promise<void>;
}

export interface ClusterNode {
  store: ClusterStore;
  replica: LogReplica;
  owners: PartitionOwners;
}

/** What answers HTTP in cluster mode from the moment NATS is reached (src/http/cluster-front.ts). */
export interface ClusterWaiting {
  /** Connected to NATS: start answering HTTP; resolves to this node's advertised URL. */
  connected(nodeId: string): Promise<string>;
  /** This node now writes partition `key` (taken and caught up); it is served once this resolves. */
  writing?(key: string): Promise<void>;
}

export interface OpenEngineOptions {
  log: LogLine;
  /** Told of each group commit and sync of the log (metrics). */
  logObserver?: LogWriterObserver;
  clock?: Clock;
  onHalt?: (error: unknown) => void;
  onListenerError?: (error: unknown) => void;
  onGroupCommitted?: (records: number, writeMs: number, syncMs: number) => void;
  /** Cluster mode: what answers HTTP (src/http/cluster-front.ts); required there. */
  clusterWaiting?: ClusterWaiting;
  /**
   * A single node's service: a data directory left in shards (WORKERS was above 1) is moved
   * back into one store first. Without it (the command line) the layout is read as it is:
   * shards are opened into one engine whose commits go to the accounts' store.
   */
  settleLayout?: boolean;
}

export async function openEngine(config: Config, options: OpenEngineOptions): Promise<OpenedEngine> {
  await mkdirPrivate(config.dataDir);
  const lock = await acquireDataDirLock(config.dataDir, options.log);
  // Locked, so nobody else writes here: files an older version left readable to others are made private.
  const tightened = describeTightening(config.dataDir, await tightenPrivateTree(config.dataDir));
  if (tightened !== null) options.log(tightened, { severity: 'warn' });
  let cluster: OpenedCluster | undefined;
  let singleStore: DurableStore | undefined;
  try {
    // a lost lease halts the engine (once it exists), which stops the node
    let halt: (error: unknown) => void = (error) => options.onHalt?.(error);
    cluster = config.clusterNatsUrl === null ? undefined : await openClusterMode(config, options, (error) => halt(error));
    if (cluster === undefined) {
      const access = { dataDir: config.dataDir, storage: new FileStorage(), fsync: config.fsync, clock: options.clock ?? systemClock, limits: engineLimitsOf(config), log: options.log, observer: options.logObserver };
      const layout = options.settleLayout === true ? await settleLayout(access, 1) : await readLayout(access.storage, config.dataDir);
      if (layout.dir !== null) return await openedWhole(await openWholeDataDir(access), lock, config);
    }
    const store: DurableStore =
      cluster?.store ??
      (singleStore = await openDurableStore({ dir: join(config.dataDir, WHOLE_STORE_DIR), storage: new FileStorage(), fsync: config.fsync, log: options.log, observer: options.logObserver }));
    const engine = new Engine({
      clock: options.clock ?? systemClock,
      log: store,
      limits: engineLimitsOf(config),
      audit: auditLimitsOf(config),
      // cluster mode: the connections of the partitions this node keeps (cluster/partition-keeping.ts), changing as nodes come and go
      ...(cluster === undefined ? {} : { holds: (connectionId: string) => cluster!.store.keepsConnection(connectionId) }),
      onHalt: (error) => {
        // cluster: leave the membership at once, so no node hands this one a partition while it exits
        cluster?.leave();
        options.onHalt?.(error);
      },
      onListenerError: options.onListenerError,
    });
    halt = (error) => engine.halt(error);
    const opened = cluster;
    // a single node's snapshot is the whole state; a cluster's, one partition's
    const { restorer, ...recoveryHandler } = engineRecoveryHandler(engine, { wholeState: cluster === undefined });
    const handler: ClusterRecoveryHandler = {
      ...recoveryHandler,
      // cluster mode: several partitions' snapshots, taken at different moments (cluster/cluster-store.ts)
      snapshotsRestored: () => restorer.reconcileWithAccounts({ drop: false }),
      replayed: () => restorer.reconcileWithAccounts(),
    };
    const recovery = await store.recover(handler);
    // a single node's manifest keeps whether the directory held accounts (cluster mode keeps no marks)
    if (store.mark !== undefined && recovery.marks !== undefined) await keepAccountsMark(engine, { mark: (name) => store.mark!(name) }, recovery.marks, config.dataDir, options.log);
    const sessionSecret = config.sessionSecret ?? (await (cluster ? cluster.sessionSecret() : loadOrCreateSecret(config.dataDir)));
    let clusterNode: ClusterNode | null = null;
    if (cluster !== undefined) {
      const followed = await cluster.follow((record) => engine.applyReplicated(record), keepingEngine(engine, cluster.store));
      // a replica that cannot follow: the engine refuses everything and onHalt stops the node
      followed.failed.catch((error: unknown) => engine.halt(error));
      clusterNode = { store: cluster.store, replica: followed.replica, owners: followed.owners };
    }
    return {
      engine,
      store,
      lock,
      recovery,
      sessionSecret,
      clusterNodeId: cluster?.nodeId ?? null,
      cluster: clusterNode,
      close: async () => {
        // cluster: hand the partitions over first (each flushed by its release), then stop following
        if (opened !== undefined) await opened.close();
        else await store.close();
        await lock.release();
      },
    };
  } catch (error) {
    // a refusal after recovery (the accounts' mark) leaves the log open: close it before the lock goes
    await singleStore?.close().catch(() => undefined);
    await cluster?.close().catch(() => undefined);
    await lock.release();
    throw error;
  }
}

/** What taking a partition up and letting one go do to the engine (cluster/partition-keeping.ts). */
function keepingEngine(engine: Engine, store: ClusterStore): KeepingEngine {
  return {
    takeUpHandler: () => {
      const restorer = engine.restorer();
      return {
        snapshotChunk: (chunk) => restorer.restore(chunk),
        snapshotEnded: () => restorer.snapshotEnded({ wholeState: false }),
        snapshotRestored: () => void restorer.reconcileWithAccounts(),
        record: (record) => engine.replay(record),
      };
    },
    dropNotHeld: () => engine.dropConnectionsNotHeld(),
    heldOf: (key) => {
      let connections = 0;
      let jobs = 0;
      for (const connectionId of engine.connectionIds()) {
        if (store.keyOfConnection(connectionId) !== key) continue;
        connections += 1;
        jobs += engine.connection(connectionId)!.jobs.size;
      }
      return { connections, jobs };
    },
    jobsByPartition: () => {
      const jobs = new Map<string, number>();
      for (const connectionId of engine.connectionIds()) {
        const key = store.keyOfConnection(connectionId);
        jobs.set(key, (jobs.get(key) ?? 0) + engine.connection(connectionId)!.jobs.size);
      }
      return jobs;
    },
  };
}

/** A data directory in shards, opened whole (the command line). */
async function openedWhole(whole: WholeDataDir, lock: DataDirLock, config: Config): Promise<OpenedEngine> {
  return {
    engine: whole.engine,
    store: whole.store,
    lock,
    recovery: { ...whole.recovery, lines: [] },
    sessionSecret: config.sessionSecret ?? (await loadOrCreateSecret(config.dataDir)),
    clusterNodeId: null,
    cluster: null,
    close: async () => {
      await whole.close();
      await lock.release();
    },
  };
}

/** The connections' limits as configured. */
export function engineLimitsOf(config: Config): ConnectionLimits {
  return {
    dailyEventLimit: config.dailyEventLimit,
    dedupKeysMax: config.dedupKeysMax,
    maxJobsPerConnection: config.maxJobsPerConnection,
    retentionMs: config.retentionMs,
    commandConfirmMs: config.commandConfirmMs,
    ...config.tenantLimits,
    payload: config.payloadLimits,
    taskMetrics: config.taskMetrics,
  };
}

/** The audit log's bounds (AUDIT_RETENTION_DAYS, AUDIT_ENTRIES_MAX): of each store, where shards keep one each. */
export function auditLimitsOf(config: Pick<Config, 'auditRetentionMs' | 'auditEntriesMax'>): AuditLimits {
  return { retentionMs: config.auditRetentionMs, entriesMax: config.auditEntriesMax };
}

/** The NATS modules load only here, so a single node never imports them. */
async function openClusterMode(config: Config, options: OpenEngineOptions, onLeaseLost: (error: Error) => void): Promise<OpenedCluster> {
  const waiting = options.clusterWaiting;
  if (waiting === undefined) {
    throw new Error('the command line works on a single node\'s data directory; in cluster mode use the HTTP API of any node (CLUSTER_NATS_URL is set)');
  }
  const { openCluster } = await import('../cluster/open-cluster.ts');
  return openCluster(config, {
    log: options.log,
    // A node that lost a partition's lease stops the way a failed log stops it: its memory of that partition may hold a refused record.
    onLeaseLost,
    connected: (nodeId) => waiting.connected(nodeId),
    onWriting: async (key) => waiting.writing?.(key),
    observer: options.logObserver,
  });
}

/** Kept beside the log so sessions survive restarts when SESSION_SECRET is not set. */
export async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const path = join(dataDir, 'session-secret');
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    const secret = newSessionSecret();
    await writeFile(path, secret + '\n', { mode: PRIVATE_FILE_MODE });
    return secret;
  }
}
