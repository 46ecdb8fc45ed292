/**
 * Opening a data directory, shared by the server and the CLI: take the directory lock,
 * open the log, recover (snapshot + log tail, logging what was done), and hand back an
 * engine whose every commit goes to the log.
 *
 * Cluster mode: the engine recovers as a replica of the log on NATS and keeps following
 * it; it writes once this node holds the lease (`ownership`). The CLI (no
 * `clusterWaiting`) waits for that before it gets the engine; the server gets it at once
 * and serves reads from the replica meanwhile.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newSessionSecret } from '../actors/accounts/secrets.ts';
import { systemClock, type Clock } from '../actors/clock.ts';
import { Engine, type EngineRecord } from '../actors/engine.ts';
import { acquireDataDirLock, type DataDirLock } from '../persistence/data-dir-lock.ts';
import { openDurableStore, type DurableStore, type LogWriterObserver, type RecoveryReport } from '../persistence/durable-store.ts';
import { FileStorage } from '../persistence/file-storage.ts';
import type { Config } from './config.ts';
import type { LogLine } from './logging/log-line.ts';
import type { ClusterWaiting, OpenedCluster } from '../cluster/open-cluster.ts';

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
  /** Resolves once this node writes the log (at once on a single node); rejects if it never can (the node must stop). */
  ownership: Promise<void>;
  /** Whether this node writes the log now (always on a single node). */
  owns(): boolean;
  /** Cluster mode: the replica that follows the log while this node does not own it; null on a single node. */
  replica: LogReplica | null;
  close(): Promise<void>;
}

export interface OpenEngineOptions {
  log: LogLine;
  /** Told of each group commit and sync of the log (metrics). */
  logObserver?: LogWriterObserver;
  clock?: Clock;
  onHalt?: (error: unknown) => void;
  onListenerError?: (error: unknown) => void;
  onGroupCommitted?: (records: number, writeMs: number, syncMs: number) => void;
  /** Cluster mode: what answers HTTP while this node waits for the lease (src/http/cluster-front.ts). */
  clusterWaiting?: ClusterWaiting;
}

export async function openEngine(config: Config, options: OpenEngineOptions): Promise<OpenedEngine> {
  await mkdir(config.dataDir, { recursive: true });
  const lock = await acquireDataDirLock(config.dataDir, options.log);
  let cluster: OpenedCluster | undefined;
  try {
    cluster = config.clusterNatsUrl === null ? undefined : await openClusterMode(config, options);
    const store =
      cluster?.store ??
      (await openDurableStore({ dir: join(config.dataDir, 'log'), storage: new FileStorage(), fsync: config.fsync, log: options.log, observer: options.logObserver }));
    const engine = new Engine({
      clock: options.clock ?? systemClock,
      log: store,
      limits: {
        dailyEventLimit: config.dailyEventLimit,
        dedupKeysMax: config.dedupKeysMax,
        maxJobsPerConnection: config.maxJobsPerConnection,
        retentionMs: config.retentionMs,
        ...config.tenantLimits,
      },
      onHalt: options.onHalt,
      onListenerError: options.onListenerError,
    });
    const restorer = engine.restorer();
    const recovery = await store.recover({
      snapshotChunk: (chunk) => restorer.restore(chunk),
      record: (record) => engine.evolve(record as EngineRecord),
    });
    const sessionSecret = config.sessionSecret ?? (await (cluster ? cluster.sessionSecret() : loadOrCreateSecret(config.dataDir)));
    const followed = cluster?.followThenOwn((record) => engine.applyReplicated(record as EngineRecord));
    const ownership = followed?.ownership ?? Promise.resolve();
    // a replica that cannot follow, or a takeover that fails: the engine refuses everything and onHalt stops the node
    ownership.catch((error: unknown) => engine.halt(error));
    if (cluster !== undefined && options.clusterWaiting === undefined) await ownership;
    return {
      engine,
      store,
      lock,
      recovery,
      sessionSecret,
      clusterNodeId: cluster?.nodeId ?? null,
      ownership,
      owns: () => cluster?.store.owns ?? true,
      replica: followed?.replica ?? null,
      close: async () => {
        await store.close();
        await cluster?.close();
        await lock.release();
      },
    };
  } catch (error) {
    await cluster?.close().catch(() => undefined);
    await lock.release();
    throw error;
  }
}

/** The NATS modules load only here, so a single node never imports them. */
async function openClusterMode(config: Config, options: OpenEngineOptions): Promise<OpenedCluster> {
  const { openCluster } = await import('../cluster/open-cluster.ts');
  return openCluster(config, {
    log: options.log,
    // A deposed owner stops the way a failed log stops it; without a handler (the CLI) its writes are fenced.
    onLeaseLost: (error) => options.onHalt?.(error),
    waiting: options.clusterWaiting,
  });
}

/** Kept beside the log so sessions survive restarts when SESSION_SECRET is not set. */
async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const path = join(dataDir, 'session-secret');
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    const secret = newSessionSecret();
    await writeFile(path, secret + '\n', { mode: 0o600 });
    return secret;
  }
}
