/**
 * Cluster mode, stage 1 (hot standby): the whole engine is partition 0, owned by the node
 * that holds its lease. Opening waits for the lease (a standby logs whom it waits for and
 * serves nothing meanwhile), then hands back a DurableStore on JetStream for the engine to
 * recover from. Loaded only when CLUSTER_NATS_URL is set (a dynamic import), so a single
 * node never loads a NATS module.
 */
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../src/config.ts';
import type { DurableStore } from '../persistence/durable-store.ts';
import { PartitionLease } from './lease.ts';
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
    const key = partitionKey(PARTITION);
    const lease = await PartitionLease.acquire({
      kv: nats.leases,
      key,
      node: nodeId,
      leaseMs: config.clusterLeaseMs,
      log,
      onLost: options.onLeaseLost,
    });
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
