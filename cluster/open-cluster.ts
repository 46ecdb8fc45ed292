/**
 * Cluster mode (docs/cluster.md): CLUSTER_PARTITIONS partitions and the
 * accounts partition, each written by the node that holds its lease, as the placement
 * over the live nodes wants (cluster/placement.ts, cluster/partition-ownership.ts), and kept
 * by its writer and CLUSTER_STANDBYS standbys (cluster/partition-keeping.ts; the accounts by
 * every node).
 * Opening connects to NATS, lets the caller start answering HTTP, reads which nodes are
 * live to know what this node will keep, and hands back the store for the engine to
 * recover those partitions from. After recovery, `follow` keeps the engine current, takes
 * up and lets go of partitions as the live set changes, and takes this node's share of the
 * leases. Loaded only when
 * CLUSTER_NATS_URL is set (a dynamic import), so a single node never loads a NATS module.
 */
import type { KV, KvEntry } from '@nats-io/kv';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LogWriterObserver } from '../persistence/log-writer.ts';
import type { LeaseHolder } from './lease.ts';
import { ClusterStore } from './cluster-store.ts';
import { connectNatsCluster, LOG_STREAM, type NatsCluster } from './nats-cluster.ts';
import type { ApplyRecord } from './partition-reader.ts';
import { Membership, type Member } from './membership.ts';
import { keepersOf, type Standbys } from './partition-keepers.ts';
import { PartitionKeeping, type KeepingEngine } from './partition-keeping.ts';
import { decodePlacementMap, PLACEMENT_MAP_KEY } from './placement-map.ts';
import { Placement } from './placement.ts';
import { PartitionOwnership } from './partition-ownership.ts';
import { retryingWhileNatsRecovers } from './retry.ts';
import { sharedSessionSecret } from './shared-secret.ts';
import { SizeRebalancer } from './size-rebalancer.ts';
import { SnapshotObjects } from './snapshot-object.ts';
import type { SubjectFollower } from './subject-follower.ts';
import { WatchedBucket } from './watched-bucket.ts';

/** The stream keeps messages this long past retention: every partition is snapshotted far more often (SNAPSHOT_INTERVAL_MINUTES, at most 6 h). */
const STREAM_AGE_PAST_RETENTION_MS = 2 * 24 * 60 * 60 * 1000;

/** Who writes which partition, as the front routes requests by it. */
export interface PartitionOwners {
  /** The holder of partition `key` (`p.<n>` or `accounts`); null while nobody holds it. */
  ownerOf(key: string): LeaseHolder;
  /** The partitions this node serves: taken, caught up, and its `onWriting` hook done. */
  held(): string[];
  /**
   * The live nodes that keep partition `key`'s state, the wanted writer first: a read about
   * its connections can be answered by any of them (one still taking it up says so by its
   * own `keepsHere`). The first 1 + CLUSTER_STANDBYS live nodes of `key`'s placement, plus
   * the lease's holder (cluster/partition-keepers.ts); every live node for the accounts, and
   * for every partition with CLUSTER_STANDBYS=all.
   */
  keepersOf(key: string): Member[];
  /** Whether this node keeps partition `key`'s state now (applied and current): it can answer reads about its connections. */
  keepsHere(key: string): boolean;
  /** The partitions this node keeps now, applied and current (health's `keeps`). */
  kept(): string[];
}

export interface OpenedCluster {
  store: ClusterStore;
  nodeId: string;
  sessionSecret(): Promise<string>;
  /**
   * After the store recovered: follows the log, applying each new record with `apply`, and
   * takes this node's share of the partitions. `failed` rejects when following failed
   * (the node must stop); it never resolves.
   */
  follow(apply: ApplyRecord, engine: KeepingEngine): Promise<{ replica: SubjectFollower; owners: PartitionOwners; failed: Promise<never> }>;
  /** The engine halted (the process exits next): leave the membership and hand over what can be, without waiting. */
  leave(): void;
  /** Hand every partition over (the others take them at once), close the store, disconnect. */
  close(): Promise<void>;
}

export interface OpenClusterOptions {
  log: (line: string) => void;
  /** Runs once when a lease is lost: the node must stop (its memory of that partition may hold a record the log refused). */
  onLeaseLost: (error: Error) => void;
  /** Connected to NATS: start answering HTTP; resolves to this node's advertised URL. */
  connected(nodeId: string): Promise<string>;
  /** This node now writes partition `key` (its catch-up done); the partition counts as served once this resolves. */
  onWriting?(key: string): Promise<void>;
  /** Told of each group published (metrics, ingest timings), as the local log tells of each group commit. */
  observer?: LogWriterObserver;
}

/**
 * The settings cluster mode runs with, named as the service's configuration names them
 * (src/config.ts hands its own object over): cluster/ reads no configuration itself.
 */
export interface ClusterSettings {
  /** CLUSTER_NATS_URL: null means no cluster mode (refused here) */
  clusterNatsUrl: string[] | null;
  /** CLUSTER_NODE_ID; null: host name and port */
  clusterNodeId: string | null;
  clusterReplicas: number;
  clusterPartitions: number;
  clusterLeaseMs: number;
  /** CLUSTER_STANDBYS: how many nodes besides its writer keep each partition */
  clusterStandbys: Standbys;
  /** CLUSTER_REBALANCE_SECONDS in ms: how often placement by size may move one slot; 0: placement by count only, no map read or written */
  clusterRebalanceMs: number;
  /** RETENTION_HOURS: the stream keeps messages a while past it */
  retentionMs: number;
  /** DATA_DIR: a staging directory for snapshots goes under it */
  dataDir: string;
  /** PORT: part of the default node id */
  port: number;
}

export async function openCluster(config: ClusterSettings, options: OpenClusterOptions): Promise<OpenedCluster> {
  const servers = config.clusterNatsUrl;
  if (servers === null) throw new Error('openCluster() without CLUSTER_NATS_URL');
  const nodeId = config.clusterNodeId ?? defaultNodeId(config.port);
  const { log } = options;
  const stagingDir = join(config.dataDir, 'cluster-staging');
  // Snapshot files left by a process that died while uploading or verifying one.
  await rm(stagingDir, { recursive: true, force: true });
  const nats: NatsCluster = await connectNatsCluster(
    servers,
    nodeId,
    { replicas: config.clusterReplicas, partitions: config.clusterPartitions, maxAgeMs: config.retentionMs + STREAM_AGE_PAST_RETENTION_MS },
    log,
  );
  let mapWatch: WatchedBucket | undefined;
  try {
    const url = await options.connected(nodeId);
    const store = new ClusterStore({
      js: nats.js,
      jsm: nats.jsm,
      stream: LOG_STREAM,
      subjectPrefix: 'jobwatch.log',
      partitions: config.clusterPartitions,
      snapshots: new SnapshotObjects(nats.snapshots, stagingDir),
      node: nodeId,
      maxPayloadBytes: nats.maxPayloadBytes,
      leaseMs: config.clusterLeaseMs,
      log,
      observer: options.observer,
    });
    // one placement for every question of who keeps and writes what (the same on every node)
    const placement = new Placement(store.keys, config.clusterStandbys);
    let ownership: PartitionOwnership | undefined;
    let keeping: PartitionKeeping | undefined;
    let rebalancer: SizeRebalancer | undefined;
    mapWatch = bySize(config) ? await watchPlacementMap(nats.placement, placement, log, () => ownership?.lookAgain()) : undefined;
    await planKeeping(store, nats.nodes, nodeId, placement, config, log);
    return {
      store,
      nodeId,
      // create-if-absent then read: safe to repeat through a NATS hiccup at start
      sessionSecret: () => retryingWhileNatsRecovers('reading the shared session secret', () => sharedSessionSecret(nats.secrets), log),
      follow: async (apply, engine) => {
        let replicaFailed: (error: Error) => void = () => undefined;
        const failed = new Promise<never>((_, reject) => {
          replicaFailed = reject;
        });
        failed.catch(() => undefined);
        const replica = store.follow(apply, replicaFailed);
        keeping = new PartitionKeeping({ store, node: nodeId, placement, leaseMs: config.clusterLeaseMs, engine, log });
        ownership = await takeShare(store, nats, keeping, placement, engine, { nodeId, url, config, options });
        if (bySize(config)) rebalancer = rebalancerOf(nats.placement, nodeId, placement, ownership, config, options);
        return { replica, owners: ownersOf(ownership, keeping), failed };
      },
      leave: () => {
        rebalancer?.stop();
        mapWatch?.stop();
        keeping?.stop();
        ownership?.stop().catch((error: unknown) => log(`leaving the membership after a halt failed: ${String(error)}`));
      },
      close: async () => {
        // hand every partition over first (each release flushes its writes), then stop following
        rebalancer?.stop();
        keeping?.stop();
        await ownership?.stop();
        mapWatch?.stop();
        await store.close();
        await nats.close();
      },
    };
  } catch (error) {
    mapWatch?.stop();
    await nats.close().catch(() => undefined);
    throw error;
  }
}

/** Joins the membership and takes this node's share of the leases; what it keeps follows the looks (partition-keeping.ts). */
async function takeShare(
  store: ClusterStore,
  nats: NatsCluster,
  keeping: PartitionKeeping,
  placement: Placement,
  engine: KeepingEngine,
  { nodeId, url, config, options }: { nodeId: string; url: string; config: ClusterSettings; options: OpenClusterOptions },
): Promise<PartitionOwnership> {
  const { log } = options;
  // a NATS server lost shortly before: the buckets' streams may still be electing leaders (retried, as the log's steps are)
  const ownership = await retryingWhileNatsRecovers('joining the membership and watching the leases', () => PartitionOwnership.start({
    leases: nats.leases,
    nodes: nats.nodes,
    node: nodeId,
    url,
    leaseMs: config.clusterLeaseMs,
    placement,
    log,
    keeps: () => keeping.kept(),
    weights: () => Object.fromEntries(engine.jobsByPartition()),
    onTaken: async (key, epoch) => {
      // a writer keeps what it writes: with CLUSTER_STANDBYS=0 a failover's new writer loads the partition here first
      await keeping.takeUp(key);
      await store.takeOver(key, epoch);
      await options.onWriting?.(key);
    },
    release: (key) => store.release(key),
    onLost: (key, error) => options.onLeaseLost(new Error(`lost the lease of partition ${key}: ${error.message}`, { cause: error })),
    onLook: () => keeping.look(),
  }), log);
  keeping.attach(ownership);
  return ownership;
}

/** What the front routes by: who writes, who keeps. */
function ownersOf(ownership: PartitionOwnership, keeping: PartitionKeeping): PartitionOwners {
  return {
    ownerOf: (key) => ownership.ownerOf(key),
    held: () => ownership.held(),
    keepersOf: (key) => keeping.keepersOf(key),
    keepsHere: (key) => keeping.keepsHere(key),
    kept: () => keeping.kept(),
  };
}

/**
 * What this node keeps from the start, before it recovers: the rule over the nodes live now
 * and this one (it joins after recovering, so its share is ready when the leases move to it).
 */
async function planKeeping(store: ClusterStore, nodes: KV, nodeId: string, placement: Placement, config: ClusterSettings, log: (line: string) => void): Promise<void> {
  const { standbys } = placement;
  if (standbys === 'all') {
    store.planKeeping(() => true);
    return;
  }
  const others = await retryingWhileNatsRecovers('reading the live nodes', () => Membership.liveBeforeJoining(nodes, config.clusterLeaseMs), log);
  const live = new Set(others).add(nodeId);
  store.planKeeping((key) => keepersOf(key, placement.ranked(live, key), standbys, null).includes(nodeId));
  const kept = store.keeping();
  log(`keeping ${kept.length} of ${store.keys.length} partitions (CLUSTER_STANDBYS=${standbys}, ${live.size} live nodes: ${[...live].sort().join(', ')}): ${kept.join(', ')}`);
}

/** The coordinating side of placement by size on this node (it moves slots only while it has the smallest live id). */
function rebalancerOf(kv: KV, node: string, placement: Placement, ownership: PartitionOwnership, config: ClusterSettings, options: OpenClusterOptions): SizeRebalancer {
  return new SizeRebalancer({
    kv,
    node,
    placement,
    intervalMs: config.clusterRebalanceMs,
    members: () => ownership.members(),
    ownerOf: (key) => ownership.ownerOf(key),
    log: options.log,
  });
}

/** Whether placement by size runs: a rebalance interval, and standbys that leave a node something to not keep. */
function bySize(config: ClusterSettings): boolean {
  return config.clusterRebalanceMs > 0 && config.clusterStandbys !== 'all';
}

/**
 * Reads the placement map and keeps it in force as it changes (the watch delivers the key
 * as it is first, then every write): a map that does not fit this node (another
 * CLUSTER_STANDBYS, a damaged value) is logged and ignored, the counted placement applies.
 */
async function watchPlacementMap(kv: KV, placement: Placement, log: (line: string) => void, changed: () => void): Promise<WatchedBucket> {
  let complaint = '';
  const use = (entry: KvEntry | null) => {
    let map = null;
    if (entry !== null && entry.operation === 'PUT') {
      const decoded = decodePlacementMap(entry.string(), placement.keys, String(placement.standbys));
      if ('unusable' in decoded) {
        if (decoded.unusable !== complaint) log(`placement by size: ignoring the placement map (revision ${entry.revision}): ${decoded.unusable}; placing by count`);
        complaint = decoded.unusable;
      } else map = decoded;
    }
    const revision = map === null ? 0 : entry!.revision;
    if (!placement.useMap(map, revision)) return;
    log(map === null ? 'placement by size: no placement map in force; placing by count' : `placement by size: placement map revision ${revision} in force (move ${map.moves}, written by ${map.writtenBy} for ${map.nodes.join(', ')})`);
    changed();
  };
  // read before the watch, so that what this node recovers at start follows the map
  use(await retryingWhileNatsRecovers('reading the placement map', () => kv.get(PLACEMENT_MAP_KEY), log));
  let watched: WatchedBucket | undefined;
  // a key the watch has not delivered yet leaves the map read above in force
  const fromWatch = () => {
    const entry = watched?.get(PLACEMENT_MAP_KEY)?.entry;
    if (entry !== undefined) use(entry);
  };
  watched = await retryingWhileNatsRecovers('watching the placement map', () => WatchedBucket.open(kv, 'the placement bucket', log, fromWatch), log);
  fromWatch();
  return watched;
}

/** Unique per node as long as two nodes on one host do not share a port; PORT=0 falls back to the pid. */
function defaultNodeId(port: number): string {
  return `${hostname()}:${port === 0 ? `pid${process.pid}` : port}`;
}
