/**
 * Cluster mode: the whole engine is partition 0, owned by the node that holds its lease.
 * Opening connects to NATS, lets the caller start answering HTTP (a waiting node forwards
 * to the holder it is told of), waits for the lease, then hands back a DurableStore on
 * JetStream for the engine to recover from. Loaded only when CLUSTER_NATS_URL is set (a dynamic import), so a single
 * node never loads a NATS module.
 */
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../src/config.ts';
import type { DurableStore } from '../persistence/durable-store.ts';
import { PartitionLease, type LeaseHolder } from './lease.ts';
import { JetStreamStore } from './jetstream-store.ts';
import { connectNatsCluster, LOG_STREAM, PARTITION, partitionKey, partitionSubject } from './nats-cluster.ts';
import { sharedSessionSecret } from './shared-secret.ts';
import { SnapshotObjects } from './snapshot-object.ts';

export interface OpenedCluster {
  store: DurableStore;
  nodeId: string;
  sessionSecret(): Promise<string>;
  /** After the store closed: release the lease (a standby takes it at once) and disconnect. */
  close(): Promise<void>;
}

export interface OpenClusterOptions {
  log: (line: string) => void;
  /** Runs once when the lease is lost: the node must stop (its writes are fenced from now on anyway). */
  onLeaseLost: (error: Error) => void;
  /** The HTTP side of a waiting node; absent (the CLI): nothing is served while waiting. */
  waiting?: ClusterWaiting;
}

export interface ClusterWaiting {
  /** Connected to NATS, before waiting for the lease: start answering HTTP; resolves to this node's advertised URL. */
  connected(nodeId: string): Promise<string>;
  /** The current holder, on every poll while this node waits. */
  holder(holder: LeaseHolder): void;
  /** This node holds the lease; the engine opens (recovery) next. */
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
    const lease = await PartitionLease.acquire({
      kv: nats.leases,
      key,
      node: nodeId,
      url,
      onHolder: (holder) => options.waiting?.holder(holder),
      leaseMs: config.clusterLeaseMs,
      log,
      onLost: options.onLeaseLost,
    });
    options.waiting?.acquired();
    const store = new JetStreamStore({
      js: nats.js,
      jsm: nats.jsm,
      stream: LOG_STREAM,
      subject: partitionSubject(PARTITION),
      snapshotName: key,
      snapshots: new SnapshotObjects(nats.snapshots, stagingDir),
      node: nodeId,
      epoch: lease.epoch,
      maxPayloadBytes: nats.maxPayloadBytes,
      log,
    });
    return {
      store,
      nodeId,
      sessionSecret: () => sharedSessionSecret(nats.secrets),
      close: async () => {
        await lease.release();
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
