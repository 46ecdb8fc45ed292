/**
 * What jobs were called with, measured in-process (a connection actor fed realistic
 * 1,000-event batches through decide + evolve, no HTTP), in a process of its own per run so
 * that one run's memory does not blur the next's:
 *
 *   npx bun load/payload.ts --measure memory --jobs 1m --payload-bytes 200   # heap and resident bytes per job
 *   npx bun load/payload.ts --measure memory --jobs 1m --payload-bytes 0     # the same jobs without arguments: the baseline
 *   npx bun load/payload.ts --measure search --jobs 1m                       # payload search times at that size
 *
 * Each prints one JSON line on stdout (progress on stderr); `npm run bench` runs the three
 * and puts them in its table. The arguments are a typical 200-byte payload (a user id, an
 * email, a plan, an invoice id, one item, padded to the size), sent with each job's first
 * event as agents send them. A search's time is `listJobs` for one page of 50, its p99 over
 * the runs; a search that ran out of its budget says so (`partial`).
 */
import { ConnectionActor, type ConnectionLimits } from '../actors/connection/connection-actor.ts';
import { listJobs, type JobListQuery } from '../actors/queries/job-list.ts';
import { payloadQueryOf } from '../actors/queries/payload-search.ts';
import { JobGenerator } from './events.ts';
import { num, parseArgs, percentiles, str } from './util.ts';

const args = parseArgs();
const count = (text: string): number => {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (match === null) throw new Error(`not a count: ${text}`);
  return Math.round(Number(match[1]) * { '': 1, k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase() as '' | 'k' | 'm']);
};
const measure = str(args, 'measure', 'search');
const jobs = count(str(args, 'jobs', '1m'));
const payloadBytes = num(args, 'payload-bytes', 200);
const runs = num(args, 'runs', 40);

const CONNECTION = '0190a000-0000-7000-8000-0000000a9a5e';
const JOBS_PER_BATCH = 330;
/** users the payloads name: a `data.userId` of one of them matches about jobs / USERS jobs */
export const USERS = 100_000;

const limits: ConnectionLimits = {
  dailyEventLimit: 0,
  dedupKeysMax: 100_000,
  maxJobsPerConnection: jobs * 2,
  retentionMs: 365 * 86_400_000,
  dailyIngestBytesMax: 0,
  connectionMemoryBytesMax: 0,
};

/** The arguments of job `n`: about `bytes` of JSON (padded with a note). */
export function typicalArgs(n: number, bytes: number): Record<string, unknown> {
  const userId = (n * 7919) % USERS;
  const args: Record<string, unknown> = {
    userId,
    email: `user${userId}@example.com`,
    plan: n % 3 === 0 ? 'pro' : 'free',
    invoiceId: `INV-2026-${String(n).padStart(7, '0')}`,
    items: [{ sku: `SKU-${n % 500}`, qty: 1 + (n % 4) }],
  };
  const pad = bytes - JSON.stringify({ ...args, note: '' }).length;
  if (pad > 0) args.note = 'n'.repeat(pad);
  return args;
}

function load(withBytes: number): ConnectionActor {
  const actor = new ConnectionActor(CONNECTION, limits);
  const generator = new JobGenerator(CONNECTION, jobs);
  let n = 0;
  const seen = new Set<string>();
  while (!generator.done) {
    const batch = generator.nextBatch(JOBS_PER_BATCH) as Array<{ job?: Record<string, unknown> }>;
    if (withBytes > 0) {
      for (const event of batch) {
        const job = event.job;
        if (job === undefined || seen.has(job.externalId as string)) continue;
        seen.add(job.externalId as string); // the job's first event carries its arguments, as an agent sends them
        job.args = typicalArgs(n++, withBytes);
      }
      seen.clear();
    }
    const { record, reply } = actor.decideIngest(batch, Date.now());
    if (record === null) throw new Error(`a batch was refused whole: ${JSON.stringify(reply.errors?.[0] ?? reply)}`);
    actor.evolve(record);
    if (actor.jobs.size % 100_000 < JOBS_PER_BATCH) console.error(`payload: ${actor.jobs.size} jobs`);
  }
  return actor;
}

function memory(): { heap: number; rss: number } {
  Bun.gc(true);
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

if (measure === 'memory') {
  const empty = memory();
  const actor = load(payloadBytes);
  const held = memory();
  console.log(JSON.stringify({ measure, jobs: actor.jobs.size, payloadBytes, heapPerJob: (held.heap - empty.heap) / actor.jobs.size, rssPerJob: (held.rss - empty.rss) / actor.jobs.size }));
} else {
  const actor = load(payloadBytes);
  actor.jobs.buildNextIndex();
  const base: JobListQuery = { limit: 50, sortBy: 'createdAt', sortOrder: 'desc' };
  const searches: Array<{ name: string; query: JobListQuery; params: Record<string, string> }> = [
    { name: 'data.userId (about 10 jobs)', query: base, params: { 'data.userId': String(4242) } },
    { name: 'args substring (1 job)', query: base, params: { args: 'INV-2026-0123457' } },
    { name: 'data.plan=pro, failed, by duration', query: { ...base, state: 'failed', sortBy: 'durationMs' }, params: { 'data.plan': 'pro' } },
    { name: 'data.userId, none match', query: base, params: { 'data.userId': String(USERS + 1) } },
  ];
  const timesOf = (list: () => unknown): number[] => {
    list(); // warm
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const start = performance.now();
      list();
      times.push(performance.now() - start);
    }
    return times;
  };
  const results = searches.map(({ name, query, params }) => {
    const payload = payloadQueryOf(params)!;
    // the baseline: the same page without the payload terms
    const [baselineP99] = percentiles(timesOf(() => listJobs([actor], query)), [99]);
    const times: number[] = [];
    let partial = 0;
    let found = 0;
    let total = 0;
    for (let run = 0; run < runs; run++) {
      const start = performance.now();
      const page = listJobs([actor], query, payload);
      times.push(performance.now() - start);
      if (page.pagination.scan?.partial === true) partial++;
      found = page.data.length;
      total = page.pagination.total;
    }
    const [p50, p99, max] = percentiles(times, [50, 99, 100]);
    console.error(`payload: ${name}: p50 ${p50!.toFixed(1)} ms, p99 ${p99!.toFixed(1)} ms (without the terms ${baselineP99!.toFixed(2)} ms), ${found} on the page, total ${total}, ${partial} partial`);
    return { name, p50, p99, max, baselineP99, found, total, partial, runs };
  });
  const argsBytes = actor.jobs.table.sizes().textBytes?.args ?? 0;
  console.log(JSON.stringify({ measure, jobs: actor.jobs.size, payloadBytes, argsBytes, results }));
}
