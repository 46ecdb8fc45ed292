/**
 * The job store of two checkouts compared in one process, where a shared machine's load
 * hits both alike: each side's connection actor (imported from its own tree) is loaded with
 * the same realistic bodies (load/events.ts), then both ingest the same further batches in
 * alternating blocks (the order flips every block), and both answer the same job-list
 * queries alternately. Prints each side's CPU time per event (process.cpuUsage, every
 * thread), the ratio, and the median time of each list query. Memory per job is better
 * read from load/store-growth.ts run per tree: in one process the two heaps interfere.
 *
 *   npx bun load/store-ab.ts --old <checkout of the commit before> [--new <checkout>] \
 *     [--jobs 200k] [--blocks 30] [--cap 0] [--stuck 0] [--list-rounds 300]
 *
 * --cap sets the job cap; --stuck loads that many old jobs that never finish first (the
 * eviction at the cap must get past them). --new defaults to this checkout.
 */
import { join, resolve } from 'node:path';
import { JobGenerator } from './events.ts';
import { num, parseArgs, str } from './util.ts';

const args = parseArgs();
const count = (text: string): number => {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (match === null) throw new Error(`not a count: ${text}`);
  return Math.round(Number(match[1]) * { '': 1, k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase() as '' | 'k' | 'm']);
};
const oldDir = resolve(str(args, 'old', ''));
if (str(args, 'old', '') === '') throw new Error('--old <checkout> is required');
const newDir = resolve(str(args, 'new', join(import.meta.dir, '..')));
const preload = count(str(args, 'jobs', '200k'));
const blocks = num(args, 'blocks', 30);
const cap = count(str(args, 'cap', '0'));
const stuck = count(str(args, 'stuck', '0'));
const listRounds = num(args, 'list-rounds', 300);
const BATCHES_PER_BLOCK = 5;
const JOBS_PER_BATCH = 330;

const CONNECTION = '0190a000-0000-7000-8000-00000000c01d';
// no tenant byte budgets: their defaults refuse events past about half a million jobs
const limits = { dailyEventLimit: 0, dedupKeysMax: 100_000, maxJobsPerConnection: cap > 0 ? cap : 100_000_000, retentionMs: 365 * 86_400_000, dailyIngestBytesMax: 0, connectionMemoryBytesMax: 0 };

type Actor = { jobs: { size: number }; decideIngest(events: unknown[], nowMs: number): { record: unknown }; evolve(record: unknown): void };
interface Side {
  name: string;
  actor: Actor;
  listJobs: (actors: Actor[], query: unknown) => unknown;
  bodies: unknown[][];
  cpuUs: number;
  events: number;
}

async function load(dir: string): Promise<{ Actor: new (id: string, limits: unknown) => Actor; listJobs: Side['listJobs'] }> {
  const actorModule = await import(join(dir, 'actors/connection/connection-actor.ts'));
  const listModule = await import(join(dir, 'actors/queries/job-list.ts'));
  return { Actor: actorModule.ConnectionActor, listJobs: listModule.listJobs };
}

function stuckBodies(): unknown[][] {
  const bodies: unknown[][] = [];
  const startMs = Date.now() - 7 * 86_400_000;
  for (let first = 0; first < stuck; first += 1_000) {
    const events = [];
    for (let n = first; n < Math.min(stuck, first + 1_000); n++) {
      events.push({
        type: 'job_state_change',
        timestamp: new Date(startMs + n).toISOString(),
        framework: 'celery',
        connectionId: CONNECTION,
        job: { externalId: `lost-${n}`, name: 'tasks.lost', queue: 'default', state: 'queued' },
      });
    }
    bodies.push(events);
  }
  return bodies;
}

const cpuUs = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const ingest = (actor: Actor, events: unknown[]): void => {
  const { record } = actor.decideIngest(events, Date.now());
  if (record !== null) actor.evolve(record);
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const generator = new JobGenerator(CONNECTION, preload + blocks * BATCHES_PER_BLOCK * JOBS_PER_BATCH + 1);
const preloadBodies = stuckBodies();
while (generator.jobsGenerated + stuck < preload) preloadBodies.push(generator.nextBatch(JOBS_PER_BATCH));
const timedBodies = Array.from({ length: blocks * BATCHES_PER_BLOCK }, () => generator.nextBatch(JOBS_PER_BATCH));

const sides: Side[] = [];
for (const [name, dir] of [['old', oldDir], ['new', newDir]] as const) {
  const { Actor, listJobs } = await load(dir);
  const actor = new Actor(CONNECTION, limits);
  // each side its own copies: evolve swaps strings in the events it applies
  for (const events of preloadBodies) ingest(actor, structuredClone(events));
  sides.push({ name, actor, listJobs, bodies: structuredClone(timedBodies), cpuUs: 0, events: 0 });
  console.error(`store-ab: ${name} loaded ${actor.jobs.size} jobs from ${dir}`);
}

for (let block = 0; block < blocks; block++) {
  for (const side of block % 2 === 0 ? sides : [...sides].reverse()) {
    const start = cpuUs();
    for (let batch = block * BATCHES_PER_BLOCK; batch < (block + 1) * BATCHES_PER_BLOCK; batch++) {
      side.events += side.bodies[batch]!.length;
      ingest(side.actor, side.bodies[batch]!);
    }
    side.cpuUs += cpuUs() - start;
  }
}
const [old, fresh] = sides as [Side, Side];
console.log(`jobs: ${old.actor.jobs.size} (cap ${cap || 'none'}, ${stuck} old jobs that never finish)`);
for (const side of sides) console.log(`${side.name}: ingest CPU ${(side.cpuUs / side.events).toFixed(2)} us/event over ${side.events} events`);
console.log(`new / old ingest CPU: ${(fresh.cpuUs / old.cpuUs).toFixed(3)}`);

const QUERIES: Array<[string, Record<string, unknown>]> = [
  ['createdAt desc', { limit: 50, sortBy: 'createdAt', sortOrder: 'desc' }],
  ['createdAt asc', { limit: 50, sortBy: 'createdAt', sortOrder: 'asc' }],
  ['createdAt desc, failed in media (1%)', { limit: 50, sortBy: 'createdAt', sortOrder: 'desc', state: 'failed', queue: 'media' }],
  ['createdAt desc, the rare task (1%)', { limit: 50, sortBy: 'createdAt', sortOrder: 'desc', search: 'reconcile_ledger' }],
  ['createdAt desc, active', { limit: 50, sortBy: 'createdAt', sortOrder: 'desc', state: 'active' }],
  ['startedAt desc', { limit: 50, sortBy: 'startedAt', sortOrder: 'desc' }],
];
for (const [label, query] of QUERIES) {
  const times: Record<string, number[]> = { old: [], new: [] };
  for (let round = 0; round < listRounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const start = performance.now();
      side.listJobs([side.actor], query);
      times[side.name]!.push(performance.now() - start);
    }
  }
  console.log(`list ${label}: median old ${median(times.old!).toFixed(3)} ms, new ${median(times.new!).toFixed(3)} ms`);
}
