/**
 * The NATS side of cluster mode: one connection to the NATS cluster, and the stream,
 * key-value buckets and object store the node uses, created when absent with
 * CLUSTER_REPLICAS replicas. Everything JetStream-specific that is not the log protocol
 * itself lives here, so the rest of cluster/ names resources, not API calls.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { retryingWhileNatsRecovers } from './retry.ts';

/** Stage 1 has one partition: the whole engine. */
export const PARTITION = 0;
export const LOG_STREAM = 'JOBWATCH_LOG';
export const LEASES_BUCKET = 'jobwatch_leases';
export const SECRETS_BUCKET = 'jobwatch_secrets';
export const SNAPSHOTS_BUCKET = 'jobwatch_snapshots';
/** Membership (cluster/membership.ts): one key per node, refreshed every lease / 4. */
export const NODES_BUCKET = 'jobwatch_nodes';
/**
 * The backstop that removes a dead node's key from the bucket (liveness itself is judged
 * on each node's clock after one lease): far longer than any lease, so a live node's key,
 * written every lease / 4, never expires.
 */
export const NODE_KEY_MAX_AGE_MS = 60 * 60 * 1000;

export function partitionSubject(partition: number): string {
  return `jobwatch.log.p.${partition}`;
}

export function partitionKey(partition: number): string {
  return `p.${partition}`;
}

/**
 * A 5 MiB ingest body becomes one record of about that size, and a record is never split
 * across messages; a smaller server limit would halt the node on the first large batch,
 * so it is refused at start-up instead.
 */
export const MAX_PAYLOAD_BYTES_MIN = 8 * 1024 * 1024;

/** How long JetStream remembers a message id: a publish retried within it is not stored twice. */
const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

export interface NatsCluster {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  leases: KV;
  nodes: KV;
  secrets: KV;
  snapshots: ObjectStore;
  maxPayloadBytes: number;
  close(): Promise<void>;
}

export async function connectNatsCluster(
  servers: readonly string[],
  nodeId: string,
  replicas: number,
  log: (line: string) => void,
): Promise<NatsCluster> {
  const nc = await connect({
    servers: [...servers],
    name: `jobwatch ${nodeId}`,
    // A NATS server that dies is replaced by another of the list; never give up on the cluster.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
  try {
    const maxPayloadBytes = nc.info?.max_payload ?? 0;
    if (maxPayloadBytes < MAX_PAYLOAD_BYTES_MIN) {
      throw new Error(
        `the NATS server's max_payload is ${maxPayloadBytes} bytes; cluster mode needs at least ${MAX_PAYLOAD_BYTES_MIN} ` +
          `(one ingest body is one record): set max_payload: 8MB in every NATS server's configuration`,
      );
    }
    watchConnection(nc, log);
    const js = jetstream(nc);
    const { jsm, leases, nodes, secrets, snapshots } = await retryingWhileNatsRecovers(
      'opening the JetStream stream and buckets',
      async () => {
        // inside the retry: the manager asks JetStream for its account info, which times out
        // while the metadata leader is being re-elected after a NATS server died
        const jsm = await jetstreamManager(nc);
        await ensureLogStream(jsm, replicas);
        const kvm = new Kvm(js);
        return {
          jsm,
          // reads from the stream leader: a lease written is read back to confirm it (lease.ts, stillLatest)
          leases: await kvm.create(LEASES_BUCKET, { replicas, history: 1, allow_direct: false }),
          nodes: await kvm.create(NODES_BUCKET, { replicas, history: 1, ttl: NODE_KEY_MAX_AGE_MS }),
          secrets: await kvm.create(SECRETS_BUCKET, { replicas, history: 1 }),
          snapshots: await new Objm(js).create(SNAPSHOTS_BUCKET, { replicas, storage: StorageType.File }),
        };
      },
      log,
    );
    log(`connected to NATS ${nc.getServer()} (${servers.length} servers listed, replicas ${replicas})`);
    return { nc, js, jsm, leases, nodes, secrets, snapshots, maxPayloadBytes, close: () => nc.close() };
  } catch (error) {
    await nc.close().catch(() => undefined);
    throw error;
  }
}

async function ensureLogStream(jsm: JetStreamManager, replicas: number): Promise<void> {
  try {
    await jsm.streams.info(LOG_STREAM);
    return;
  } catch {
    // absent: created below (two nodes starting together may both try; the second add finds it equal)
  }
  await jsm.streams.add({
    name: LOG_STREAM,
    subjects: [partitionSubject(PARTITION)],
    num_replicas: replicas,
    storage: StorageType.File,
    duplicate_window: DUPLICATE_WINDOW_NS,
  });
}

/** Reconnects are part of a NATS server failing over; say so, so a slow ack has an explanation in the log. */
function watchConnection(nc: NatsConnection, log: (line: string) => void): void {
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') log(`NATS ${status.type}: ${status.server}`);
    }
  })().catch(() => undefined);
}
