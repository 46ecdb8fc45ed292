/**
 * Cluster mode: the whole engine is partition 0, written by the node that holds its lease
 * and followed by every other node (a hot replica). Opening connects to NATS, lets the
 * caller start answering HTTP (a standby forwards to the holder it is told of), starts
 * waiting for the lease, and hands back a DurableStore on JetStream for the engine to
 * recover from. After recovery, `followThenOwn` keeps the engine current and, once the
 * lease is won, makes this node the writer without rebuilding anything. Loaded only when
 * CLUSTER_NATS_URL is set (a dynamic import), so a single node never loads a NATS module.
 */
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../src/config.ts';
import type { DurableStore } from '../persistence/durable-store.ts';
import { PartitionLease, type LeaseHolder } from './lease.ts';
import { JetStreamStore } from './jetstream-store.ts';
import { connectNatsCluster, LOG_STREAM, PARTITION, partitionKey, partitionSubject } from './nats-cluster.ts';
import type { ApplyRecord } from './partition-reader.ts';
import { sharedSessionSecret } from './shared-secret.ts';
import { SnapshotObjects } from './snapshot-object.ts';
import type { SubjectFollower } from './subject-follower.ts';

export interface OpenedCluster {
  store: DurableStore & { readonly owns: boolean };
  nodeId: string;
  sessionSecret(): Promise<string>;
  /**
   * After the store recovered: follows the log, applying each new record with `apply`, and
   * takes over once this node holds the lease. `ownership` resolves when this node writes
   * and rejects if following or taking over failed (the node must stop).
   */
  followThenOwn(apply: ApplyRecord): { replica: SubjectFollower; ownership: Promise<void> };
  /** After the store closed: stop waiting for the lease or release it (a standby takes it at once), and disconnect. */
  close(): Promise<void>;
}

export interface OpenClusterOptions {
  log: (line: string) => void;
  /** Runs once when the lease is lost: the node must stop (its writes are fenced from now on anyway). */
  onLeaseLost: (error: Error) => void;
  /** The HTTP side of a standby; absent (the CLI): nothing is served while waiting. */
  waiting?: ClusterWaiting;
}

export interface ClusterWaiting {
  /** Connected to NATS, before waiting for the lease: start answering HTTP; resolves to this node's advertised URL. */
  connected(nodeId: string): Promise<string>;
  /** The current holder, on every poll while this node waits. */
  holder(holder: LeaseHolder): void;
  /** This node holds the lease; it catches up and fences the log next. */
  acquired(): void;
}

export async function openCluster(config: Config, options: OpenClusterOptions): Promise<OpenedCluster> {
  const servers = config.clusterNatsUrl;
  if (servers === null) throw new Error('openCluster() without CLUSTER_NATS_URL');
  const nodeId = config.clusterNodeId ?? defaultNodeId(config.port);
  const { log } = options;
  const stagingDir = join(config.dataDir, 'cluster-staging');
  // Snapshot files left by a process that died while uploading or verifying one.
  await rm(stagingDir, { recursive: true, force: true });
  const nats = await connectNatsCluster(servers, nodeId, config.clusterReplicas, log);
  try {
    const url = (await options.waiting?.connected(nodeId)) ?? config.clusterAdvertiseUrl ?? '';
    const key = partitionKey(PARTITION);
    const closing = new AbortController();
    // Waiting for the lease starts now, beside the recovery: a node that wins it early takes over once recovered.
    const leaseWon = PartitionLease.acquire({
      kv: nats.leases,
      key,
      node: nodeId,
      url,
      onHolder: (holder) => options.waiting?.holder(holder),
      leaseMs: config.clusterLeaseMs,
      log,
      onLost: options.onLeaseLost,
      signal: closing.signal,
    });
    leaseWon.catch(() => undefined); // observed by followThenOwn or close
    const store = new JetStreamStore({
      js: nats.js,
      jsm: nats.jsm,
      stream: LOG_STREAM,
      subject: partitionSubject(PARTITION),
      snapshotName: key,
      snapshots: new SnapshotObjects(nats.snapshots, stagingDir),
      node: nodeId,
      maxPayloadBytes: nats.maxPayloadBytes,
      leaseMs: config.clusterLeaseMs,
      log,
    });
    let replicaFailed: (error: Error) => void = () => undefined;
    const replicaFailure = new Promise<never>((_, reject) => {
      replicaFailed = reject;
    });
    replicaFailure.catch(() => undefined);
    return {
      store,
      nodeId,
      sessionSecret: () => sharedSessionSecret(nats.secrets),
      followThenOwn: (apply) => {
        const replica = store.follow(apply, replicaFailed);
        const takeOver = async (): Promise<void> => {
          const lease = await leaseWon.catch((error: unknown) => {
            // a standby stopping cleanly stops waiting: it never owns, and that is no failure
            if (closing.signal.aborted) return new Promise<never>(() => undefined);
            throw error;
          });
          options.waiting?.acquired();
          await store.takeOver(lease.epoch, apply);
        };
        return { replica, ownership: Promise.race([takeOver(), replicaFailure]) };
      },
      close: async () => {
        closing.abort(new Error('the node is stopping'));
        const lease = await leaseWon.catch(() => undefined);
        await lease?.release();
        await nats.close();
      },
    };
  } catch (error) {
    await nats.close().catch(() => undefined);
    throw error;
  }
}

/** Unique per node as long as two nodes on one host do not share a port; PORT=0 falls back to the pid. */
function defaultNodeId(port: number): string {
  return `${hostname()}:${port === 0 ? `pid${process.pid}` : port}`;
}
