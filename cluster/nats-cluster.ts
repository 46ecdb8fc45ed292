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
import { NotANatsFailure, retryingWhileNatsRecovers } from './retry.ts';

export const LOG_STREAM = 'JOBWATCH_LOG';
/** Every subject of the log: the partitions' and the accounts'. One stream, so one sequence orders them all. */
export const LOG_SUBJECTS = 'jobwatch.log.>';
/** Fixed facts about the cluster, written once at its first start: the partition count. */
export const META_BUCKET = 'jobwatch_meta';
const PARTITIONS_META_KEY = 'partitions';
export const LEASES_BUCKET = 'jobwatch_leases';
export const SECRETS_BUCKET = 'jobwatch_secrets';
export const SNAPSHOTS_BUCKET = 'jobwatch_snapshots';
/** Membership (cluster/membership.ts): one key per node, refreshed every lease / 4. */
export const NODES_BUCKET = 'jobwatch_nodes';
/** Placement by size (cluster/size-rebalancer.ts): one key, the placement map, written by the coordinating node. */
export const PLACEMENT_BUCKET = 'jobwatch_placement';
/**
 * The backstop that removes a dead node's key from the bucket (liveness itself is judged
 * on each node's clock after one lease): far longer than any lease, so a live node's key,
 * written every lease / 4, never expires.
 */
export const NODE_KEY_MAX_AGE_MS = 60 * 60 * 1000;

/** The lease key, snapshot name and subject suffix of the partition that holds users, sessions, connections and keys. */
export const ACCOUNTS_KEY = 'accounts';

export function partitionKey(partition: number): string {
  return `p.${partition}`;
}

/** Every partition key of a cluster of `partitions`: p.0 .. p.N-1, then `accounts`. */
export function partitionKeys(partitions: number): string[] {
  return [...Array.from({ length: partitions }, (_, partition) => partitionKey(partition)), ACCOUNTS_KEY];
}

/** The subject a partition key's records go to: `jobwatch.log.p.<n>` or `jobwatch.log.accounts`. */
export function subjectOf(key: string, prefix = 'jobwatch.log'): string {
  return `${prefix}.${key}`;
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
  placement: KV;
  secrets: KV;
  snapshots: ObjectStore;
  maxPayloadBytes: number;
  close(): Promise<void>;
}

export interface NatsClusterOptions {
  replicas: number;
  /** CLUSTER_PARTITIONS: stored at the cluster's first start; another value refuses the start. */
  partitions: number;
  /** The stream's max_age: retention + 2 days (every partition is snapshotted far more often). */
  maxAgeMs: number;
}

/**
 * How a bucket of leases is made, here and by the tests that exercise leases on their own
 * bucket: reads come from the stream leader (no direct gets), because a lease written is
 * read back to confirm it (lease.ts, stillLatest) and a replica's direct answer can be
 * older than the write just stored.
 */
export function leaseBucketSettings(replicas: number): { replicas: number; history: number; allow_direct: boolean } {
  return { replicas, history: 1, allow_direct: false };
}

export async function connectNatsCluster(
  servers: readonly string[],
  nodeId: string,
  { replicas, partitions, maxAgeMs }: NatsClusterOptions,
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
    const { jsm, leases, nodes, placement, secrets, snapshots } = await retryingWhileNatsRecovers(
      'opening the JetStream stream and buckets',
      async () => {
        // inside the retry: the manager asks JetStream for its account info, which times out
        // while the metadata leader is being re-elected after a NATS server died
        const jsm = await jetstreamManager(nc);
        const kvm = new Kvm(js);
        // read from the stream leader: a node starting beside the first must see the count that node just stored
        const meta = await kvm.create(META_BUCKET, { replicas, history: 1, allow_direct: false });
        await ensureLogStream(jsm, replicas, maxAgeMs);
        await ensurePartitionCount(meta, jsm, partitions);
        return {
          jsm,
          leases: await kvm.create(LEASES_BUCKET, leaseBucketSettings(replicas)),
          nodes: await kvm.create(NODES_BUCKET, { replicas, history: 1, ttl: NODE_KEY_MAX_AGE_MS }),
          // read from the stream leader, as the leases: the coordinator's compare-and-set reads back what it wrote
          placement: await kvm.create(PLACEMENT_BUCKET, { replicas, history: 1, allow_direct: false }),
          secrets: await kvm.create(SECRETS_BUCKET, { replicas, history: 1 }),
          snapshots: await new Objm(js).create(SNAPSHOTS_BUCKET, { replicas, storage: StorageType.File }),
        };
      },
      log,
    );
    log(`connected to NATS ${nc.getServer()} (${servers.length} servers listed, replicas ${replicas})`);
    return { nc, js, jsm, leases, nodes, placement, secrets, snapshots, maxPayloadBytes, close: () => nc.close() };
  } catch (error) {
    await nc.close().catch(() => undefined);
    throw error;
  }
}

/** The node cannot run against this NATS store (another partition count, or a log of an earlier layout). */
export class ClusterLayoutError extends NotANatsFailure {}

async function ensureLogStream(jsm: JetStreamManager, replicas: number, maxAgeMs: number): Promise<void> {
  const wanted = { subjects: [LOG_SUBJECTS], max_age: maxAgeMs * 1_000_000 };
  let info;
  try {
    info = await jsm.streams.info(LOG_STREAM);
  } catch {
    // absent: created below (two nodes starting together may both try; the second add finds it equal)
  }
  if (info === undefined) {
    await jsm.streams.add({ name: LOG_STREAM, ...wanted, num_replicas: replicas, storage: StorageType.File, duplicate_window: DUPLICATE_WINDOW_NS });
    return;
  }
  const subjects = info.config.subjects ?? [];
  if (subjects.length !== 1 || subjects[0] !== LOG_SUBJECTS || info.config.max_age !== wanted.max_age) {
    await jsm.streams.update(LOG_STREAM, { ...info.config, ...wanted });
  }
}

/**
 * The partition count is fixed for the life of the cluster (it names the subject of every
 * connection's records). The first node stores it; a node configured otherwise refuses to
 * start. A stream that already holds messages but no stored count was written by the
 * one-partition layout (every record on p.0), which is not migrated.
 */
async function ensurePartitionCount(meta: KV, jsm: JetStreamManager, partitions: number): Promise<void> {
  let stored = await meta.get(PARTITIONS_META_KEY);
  if (stored === null || stored.operation !== 'PUT') {
    const { state } = await jsm.streams.info(LOG_STREAM);
    if (state.messages > 0) {
      throw new ClusterLayoutError(
        `refusing to start: stream ${LOG_STREAM} holds ${state.messages} messages but ${META_BUCKET} names no partition count: ` +
          'it was written by the one-partition cluster mode of an earlier release, which has no migration. Start from an empty NATS store ' +
          '(remove the JetStream data of every NATS server) or keep running the earlier release.',
      );
    }
    try {
      await meta.create(PARTITIONS_META_KEY, String(partitions));
    } catch {
      // another node stored it first: compared below
    }
    stored = await meta.get(PARTITIONS_META_KEY);
  }
  const count = Number(stored?.string());
  if (count !== partitions) {
    throw new ClusterLayoutError(
      `refusing to start: this cluster has ${stored?.string() ?? 'no'} partitions (${META_BUCKET} key ${PARTITIONS_META_KEY}) but CLUSTER_PARTITIONS is ${partitions}; ` +
        'the count is fixed at the first start (it decides which subject holds each connection): set the same value on every node',
    );
  }
}

/** Reconnects are part of a NATS server failing over; say so, so a slow ack has an explanation in the log. */
function watchConnection(nc: NatsConnection, log: (line: string) => void): void {
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') log(`NATS ${status.type}: ${status.server}`);
    }
  })().catch(() => undefined);
}
