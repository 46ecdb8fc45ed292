/**
 * What the cluster tests share: a node's environment, concurrent writers that retry a
 * batch until it is acknowledged (as an SDK does on 503 or a dropped connection), and
 * the check that every acknowledged event can be read back.
 */
import { afterAll } from 'bun:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, ingest, killAllServices, listAllJobs, makeDataDir, removeDir, startService, type ServiceProcess } from '../blackbox/service-process.ts';
import type { NatsTestCluster } from '../support/nats-cluster.ts';

/** Short enough for a test, long enough for a renewal to get through a busy machine. */
export const TEST_LEASE_MS = 3_000;
/** CLUSTER_SECRET of every test node. */
export const TEST_CLUSTER_SECRET = 'test-cluster-secret-0123456789';

/**
 * CLUSTER_STANDBYS of the test nodes: the variable the tests run with (`CLUSTER_STANDBYS=0 bun
 * test test/cluster`), the service's default when unset. A test that is about standbys sets its own.
 */
export function testStandbys(): Record<string, string> {
  const standbys = process.env.CLUSTER_STANDBYS;
  return standbys === undefined || standbys === '' ? {} : { CLUSTER_STANDBYS: standbys };
}

export function nodeEnv(natsUrl: string, nodeId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...testStandbys(),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    DAILY_EVENT_LIMIT: '0',
    CLUSTER_NATS_URL: natsUrl,
    CLUSTER_NODE_ID: nodeId,
    CLUSTER_LEASE_MS: String(TEST_LEASE_MS),
    CLUSTER_SECRET: TEST_CLUSTER_SECRET,
    // the tests that check where partitions go expect the counted placement; placement by size has its own test
    CLUSTER_REBALANCE_SECONDS: '0',
    ...extra,
  };
}

/**
 * Runs a test's body; when it fails, prints the tail of what each node said (a failure seen
 * only in a long CI run is then explained by its log, not guessed at). `nodes` is read at
 * the failure, so a test that restarts its nodes passes every generation it started.
 */
export async function explainingFailure(nodes: () => ServiceProcess[], body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    for (const [index, node] of nodes().entries()) console.log(`node ${index + 1} (pid ${node.pid}, exit ${node.exitCode}) said:\n${node.output.slice(-4000)}`);
    throw error;
  }
}

export interface WriterRun {
  /** External ids of every event whose batch was acknowledged (200, every event accepted or skipped as a repeat). */
  acknowledged: Set<string>;
  /** Batches answered 503 or not answered, then retried. */
  retries: number;
  /** The longest a batch took from its first send to its acknowledgement (retries included). */
  longestWaitMs: number;
  stop(): Promise<void>;
}

/**
 * `writers` loops, each sending batches of `batchSize` new jobs to `target()` (read
 * anew for every attempt, so a test can point writers at another node). A batch is
 * retried unchanged until acknowledged; the retry's repeats come back as `skipped`.
 */
export function startWriters(options: {
  writers: number;
  batchSize: number;
  apiKey: string;
  connectionId: string;
  target: () => string;
}): WriterRun {
  const acknowledged = new Set<string>();
  let stopping = false;
  let retries = 0;
  let longestWaitMs = 0;
  const loops = Array.from({ length: options.writers }, async (_, writer) => {
    for (let batch = 0; !stopping; batch++) {
      const events = batchOfJobs(options.connectionId, `w${writer}-b${batch}`, options.batchSize);
      const sentAtMs = performance.now();
      for (;;) {
        try {
          const result = await ingest(options.target(), options.apiKey, events, AbortSignal.timeout(40_000));
          const settled = (result.body.accepted ?? 0) + (result.body.skipped ?? 0);
          if (result.status === 200 && settled === events.length) break;
          if (result.status !== 503) throw new Error(`ingest answered ${result.status} ${JSON.stringify(result.body)}`);
        } catch (error) {
          if (error instanceof Error && error.message.startsWith('ingest answered')) throw error;
          // no answer: the node or its NATS server went away; retry like an SDK
        }
        retries += 1;
        await Bun.sleep(100);
      }
      longestWaitMs = Math.max(longestWaitMs, performance.now() - sentAtMs);
      for (const event of events) acknowledged.add(event.job.externalId);
    }
  });
  return {
    acknowledged,
    get retries() {
      return retries;
    },
    get longestWaitMs() {
      return longestWaitMs;
    },
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** External ids of `acknowledged` that the node does not return. */
export async function missingJobs(baseUrl: string, cookie: string, acknowledged: Set<string>): Promise<string[]> {
  const stored = new Set((await listAllJobs(baseUrl, cookie, 100)).map((job) => job.externalId));
  return [...acknowledged].filter((id) => !stored.has(id));
}

export async function waitForCount(run: WriterRun, count: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (run.acknowledged.size < count) {
    if (Date.now() > deadline) throw new Error(`only ${run.acknowledged.size} of ${count} events acknowledged within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

export interface NodeHealth {
  status: string;
  role?: string;
  node?: string;
  /** The partitions this node writes now (`p.<n>`, `accounts`). */
  writes?: string[];
  /** The partitions whose state this node keeps, applied and current. */
  keeps?: string[];
  /** The node's copy of the log: null until it recovered at start. */
  replica?: { following: boolean; appliedSeq: number; lastKnownSeq: number; lag: number } | null;
}

export async function health(baseUrl: string): Promise<{ status: number; body: NodeHealth }> {
  const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
  return { status: response.status, body: (await response.json()) as NodeHealth };
}

/** Every partition key of a test cluster of `partitions`: p.0 .. p.N-1 and accounts. */
export function partitionKeys(partitions: number): string[] {
  return [...Array.from({ length: partitions }, (_, partition) => `p.${partition}`), 'accounts'];
}

/**
 * Polls /api/health of each node until every partition is written by exactly one of them
 * (and, with `spread`, every node writes some; with `matching`, each by the node it names);
 * returns who writes what: key -> node index.
 */
export async function waitForAssignment(
  baseUrls: string[],
  { partitions = 16, spread = false, timeoutMs = 30_000, matching }: { partitions?: number; spread?: boolean; timeoutMs?: number; matching?: ReadonlyMap<string, number> } = {},
): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const answers = await Promise.all(baseUrls.map((baseUrl) => health(baseUrl).catch(() => null)));
    const writer = new Map<string, number>();
    let twice = false;
    for (const [index, answer] of answers.entries()) {
      for (const key of answer?.status === 200 ? (answer.body.writes ?? []) : []) {
        if (writer.has(key)) twice = true;
        writer.set(key, index);
      }
    }
    const covered = partitionKeys(partitions).every((key) => writer.has(key));
    const everyNode = !spread || baseUrls.every((_, index) => [...writer.values()].includes(index));
    const asWanted = matching === undefined || [...matching].every(([key, index]) => writer.get(key) === index);
    if (covered && !twice && everyNode && asWanted) return writer;
    last = JSON.stringify(answers.map((answer) => answer?.body.writes ?? null));
    if (Date.now() > deadline) throw new Error(`partitions not all written by one of ${baseUrls.join(', ')} within ${timeoutMs} ms; last seen ${last}`);
    await Bun.sleep(50);
  }
}

/** Starts `count` nodes on one NATS cluster together and waits until every partition has a writer. */
export async function startNodes(natsUrl: string, names: string[], dirs: string[], extra: Record<string, string> = {}, partitions = 16): Promise<ServiceProcess[]> {
  const nodes = await Promise.all(
    names.map((name) => {
      const dataDir = makeDataDir(`cluster-${name}`);
      dirs.push(dataDir);
      return startService({ dataDir, env: nodeEnv(natsUrl, name, { CLUSTER_PARTITIONS: String(partitions), ...extra }) });
    }),
  );
  await waitForAssignment(nodes.map((node) => node.baseUrl), { partitions, spread: nodes.length > 1 });
  return nodes;
}

/** For a file whose nodes live across its tests: after the last one, kill them, stop NATS and remove their data directories. */
export function tearDownAfterAll(dirs: string[], nats: () => NatsTestCluster | undefined): void {
  afterAll(async () => {
    await killAllServices();
    await nats()?.stop();
    dirs.forEach(removeDir);
  });
}
