/**
 * The one place where a single node and a cluster node differ as a running service. Everything
 * else in src/server.ts is the same code for both: the engine, the services, the app, the
 * timers and the clean stop.
 *
 * | | single node | cluster node |
 * |---|---|---|
 * | HTTP | the app listens once the engine recovered | the front listens as soon as NATS is reached (503 until the replica recovered), then serves the app |
 * | first admin | made at start, before listening | made by the node that writes the accounts partition, once it does |
 * | snapshots | the whole store, when its log passed SNAPSHOT_LOG_MB or the interval passed | each partition this node writes, by its own log and interval |
 * | retention | one record for every connection | one record per partition this node writes |
 * | durability | `fsync <FSYNC>` | the log on JetStream |
 * | alerts, unconfirmed commands | every connection's rules are evaluated and sent, and its commands withdrawn, here | only the connections of partitions this node writes, so each alert is sent once and each command withdrawn once |
 */
import type { Engine, RetentionRecord } from '../../actors/engine.ts';
import type { LiveUpdatesOptions } from '../../actors/live/live-updates.ts';
import type { App } from '../app.ts';
import type { Config } from '../config.ts';
import { ClusterFront, type ReplicaServices } from '../http/cluster-front.ts';
import { ACCOUNTS_PARTITION_KEY, connectionPartitionKey } from '../http/write-partition.ts';
import type { LogLine } from '../logging/log-line.ts';
import type { ServiceObserver } from '../metrics/service-observer.ts';
import type { ClusterNode, ClusterWaiting, OpenedEngine } from '../open-engine.ts';
import { partitionNumberOf, snapshotPartitions } from '../partition-snapshots.ts';
import type { SnapshotPolicy } from './snapshot-schedule.ts';
import { storeSnapshotPolicy } from './store-snapshots.ts';

/**
 * Bun answers a body past this itself, with an empty 413 before any of our code runs. Every
 * route reads its body through src/http/read-body.ts, which refuses past the route's own
 * (much smaller) cap with our JSON 413 and never buffers more than that cap; so Bun's limit
 * only has to stay out of the way.
 */
const SERVER_BODY_BYTES_MAX = Number.MAX_SAFE_INTEGER;

export interface ServiceMode {
  /** How the listening line names durability. */
  readonly durability: string;
  /** Handed to openEngine: cluster mode answers HTTP from the moment NATS is reached. */
  readonly clusterWaiting: ClusterWaiting | undefined;
  /** Makes the first admin with `make`: now, or when this node writes the accounts partition. */
  firstAdmin(make: () => Promise<void>, engine: Engine): Promise<void>;
  /** Starts answering HTTP with `app`; returns how the serving line begins. */
  serve(app: App, opened: OpenedEngine, services: ReplicaServices): string;
  snapshotPolicy(opened: OpenedEngine, observer: Pick<ServiceObserver, 'snapshotWritten'>): SnapshotPolicy;
  retentionRecords(opened: OpenedEngine, atMs: number): RetentionRecord[];
  /** Cluster mode: the live events of connections this node does not answer itself come from a node keeping them. */
  readonly liveElsewhere: LiveUpdatesOptions['elsewhere'];
  /** Which connections this node writes (undefined: all of them): it evaluates their alert rules and withdraws their unconfirmed commands. */
  writesConnectionsOf(opened: OpenedEngine): ((connectionId: string) => boolean) | undefined;
}

export function serviceModeFor(config: Config, log: LogLine): ServiceMode {
  return config.clusterNatsUrl === null ? singleNode(config, log) : clusterNode(config, log);
}

function singleNode(config: Config, log: LogLine): ServiceMode {
  return {
    durability: `fsync ${config.fsync}`,
    clusterWaiting: undefined,
    liveElsewhere: undefined,
    firstAdmin: (make) => make(),
    serve(app) {
      // development: false whatever NODE_ENV says: Bun's development mode answers an uncaught
      // error with a page of source lines and the working directory.
      app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: SERVER_BODY_BYTES_MAX, development: false });
      return 'listening on';
    },
    snapshotPolicy: ({ engine, store }, observer) => storeSnapshotPolicy({ capture: () => engine.takeSnapshot(), store, config, log, observer }),
    retentionRecords: (_opened, atMs) => [{ t: 'retention', atMs }],
    writesConnectionsOf: () => undefined,
  };
}

function clusterNode(config: Config, log: LogLine): ServiceMode {
  const front = new ClusterFront({ ...config, clusterSecret: config.clusterSecret ?? '' }, log);
  // the writer of the accounts partition makes the first admin, once the services exist
  const maker = Promise.withResolvers<() => Promise<void>>();
  let adminMade: Promise<void> | undefined;
  const cluster = (opened: OpenedEngine): ClusterNode => opened.cluster!;
  return {
    durability: 'log on JetStream',
    liveElsewhere: front.liveElsewhere,
    clusterWaiting: {
      connected: (nodeId) => front.listen(nodeId),
      writing: async (key) => {
        if (key !== ACCOUNTS_PARTITION_KEY) return;
        const make = await maker.promise;
        await (adminMade ??= make());
      },
    },
    firstAdmin(make, engine) {
      // a failure to write the first admin halts the engine (onHalt stops the process)
      maker.resolve(() => make().catch((error: unknown) => engine.halt(error)));
      return Promise.resolve();
    },
    serve(app, opened, services) {
      front.replicate(app, opened.engine, cluster(opened), services);
      return 'a replica of the partitions it keeps, serving on';
    },
    snapshotPolicy(opened, observer) {
      const partitions = (all: boolean) => snapshotPartitions(cluster(opened), opened.engine, config, { log, observer, all });
      // each partition this node writes, when its own log passed the size or the interval
      return { takeAll: () => partitions(true), takeDue: () => partitions(false) };
    },
    retentionRecords: (opened, atMs) =>
      // one record per partition this node writes (a replica applies the writers' records)
      cluster(opened)
        .store.writing()
        .flatMap((key) => {
          const partition = partitionNumberOf(key);
          return partition === null ? [] : [{ t: 'retention' as const, atMs, partition, partitions: config.clusterPartitions }];
        }),
    writesConnectionsOf: (opened) => (connectionId) =>
      cluster(opened).store.writing().includes(connectionPartitionKey(connectionId, config.clusterPartitions)),
  };
}
