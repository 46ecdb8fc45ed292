/**
 * What the cluster tests share: a node's environment, concurrent writers that retry a
 * batch until it is acknowledged (as an SDK does on 503 or a dropped connection), and
 * the check that every acknowledged event can be read back.
 */
import { ADMIN_EMAIL, ADMIN_PASSWORD, batchOfJobs, ingest, listAllJobs, spawnService, type ServiceProcess, type SpawnOptions } from '../blackbox/service-process.ts';

/** Short enough for a test, long enough for a renewal to get through a busy machine. */
export const TEST_LEASE_MS = 2_000;
/** CLUSTER_SECRET of every test node. */
export const TEST_CLUSTER_SECRET = 'test-cluster-secret-0123456789';

export function nodeEnv(natsUrl: string, nodeId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    DAILY_EVENT_LIMIT: '0',
    CLUSTER_NATS_URL: natsUrl,
    CLUSTER_NODE_ID: nodeId,
    CLUSTER_LEASE_MS: String(TEST_LEASE_MS),
    CLUSTER_SECRET: TEST_CLUSTER_SECRET,
    ...extra,
  };
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
  owner?: string | null;
  /** A standby's copy of the log: null until it caught up at start. */
  replica?: { following: boolean; appliedSeq: number; lastKnownSeq: number; lag: number } | null;
}

export async function health(baseUrl: string): Promise<{ status: number; body: NodeHealth }> {
  const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
  return { status: response.status, body: (await response.json()) as NodeHealth };
}

/** Polls /api/health of each node until one says it is the owner; returns its index. */
export async function waitForOwner(baseUrls: string[], timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const [index, baseUrl] of baseUrls.entries()) {
      const answer = await health(baseUrl).catch(() => null);
      if (answer?.status === 200 && answer.body.role === 'owner') return index;
    }
    if (Date.now() > deadline) throw new Error(`no node of ${baseUrls.join(', ')} became the owner within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

/**
 * Spawns a node that is expected to wait for the lease: it listens (and forwards) at once;
 * resolves once it says it is a standby whose replica caught up (it answers reads itself).
 */
export async function startStandby(options: SpawnOptions, timeoutMs = 30_000): Promise<ServiceProcess> {
  const service = spawnService(options);
  const match = await service.waitFor(/listening on http:\/\/[^\s:]+:(\d+)/, timeoutMs);
  service.port = Number(match[1]);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await health(service.baseUrl).catch(() => null);
    if (answer?.body.role === 'standby' && answer.body.owner !== null && answer.body.replica?.following === true) return service;
    if (Date.now() > deadline) throw new Error(`not a standby with a known owner within ${timeoutMs} ms; output:\n${service.output}`);
    await Bun.sleep(50);
  }
}
