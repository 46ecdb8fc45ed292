/**
 * How the job store's cost grows with its size, in one process (no HTTP, no log, no load
 * generator beside it), so that a shared machine's noise hurts least: a connection actor is
 * fed realistic 1,000-event batches (load/events.ts) through decide + evolve, and at each
 * size it prints the heap and resident memory per job after a full collection, the CPU time
 * per event of ingesting more batches at that size (process.cpuUsage, all threads), and
 * job-list pages in-process (newest first by createdAt, and a 1% filter). A second scenario
 * measures the eviction at the job cap when half of the jobs under the cap are old and
 * never finish (a producer's lost jobs): every batch then evicts past them. A third, at the
 * largest size, restarts in-process: the connection's snapshot chunks are encoded as the
 * snapshot file holds them (msgpack), the actor dropped, and the chunks decoded and
 * restored into a new actor; it prints the CPU time of that recovery (without the file's
 * reading and checksums) and the heap per job twice: when the restored actor could serve
 * (its rows and the lookups by id and external id, no sorted index yet: the server builds
 * those after it listens) and once every index is built, so the difference is the sorted
 * indexes' share. Heap is not resident memory: see HEAP_MEANING below (resident memory after
 * a restart needs a new process: load/restart.ts and the bench measure it). With
 * `--skip growth` the actor is loaded to the largest size without the growth table.
 *
 * To compare two commits, run this script from each tree alternately; the figures are
 * per job and per event, so the runs need not be the same length.
 *
 *   npx bun load/store-growth.ts [--sizes 100k,1m,3m] [--measure-batches 20] [--cap 200k] [--skip growth,restart,cap]
 */
import { AccountsActor } from '../actors/accounts/accounts-actor.ts';
import { ConnectionActor, type ConnectionLimits } from '../actors/connection/connection-actor.ts';
import { SnapshotRestorer, takeSnapshot } from '../actors/engine-snapshot.ts';
import { decodeValue, encodeValue, releaseDecoderInput } from '../persistence/record-codec.ts';
import { listJobs, type JobListQuery } from '../actors/queries/job-list.ts';
import { JobGenerator, RARE_COMBINATION } from './events.ts';
import { parseArgs, percentiles, str, num, table } from './util.ts';
import { AuditLog } from '../actors/audit/audit-log.ts';

const args = parseArgs();
const count = (text: string): number => {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (match === null) throw new Error(`not a count: ${text}`);
  const scale = { '': 1, k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase() as '' | 'k' | 'm'];
  return Math.round(Number(match[1]) * scale);
};
const sizes = str(args, 'sizes', '100k,1m,3m').split(',').map(count);
const measureBatches = num(args, 'measure-batches', 20);
const cap = count(str(args, 'cap', '200k'));
const skip = new Set(str(args, 'skip', '').split(','));

const CONNECTION = '0190a000-0000-7000-8000-00000000c01d';
const EVENTS_PER_BATCH = 1_000;
const JOBS_PER_BATCH = 330; // about 3 events a job: a body of ~1,000 events

// no tenant byte budgets: their defaults (256 MB of events a day, 1 GB retained) refuse events past about half a million jobs
const limitsWith = (maxJobsPerConnection: number): ConnectionLimits => ({
  dailyEventLimit: 0,
  dedupKeysMax: 100_000,
  maxJobsPerConnection,
  retentionMs: 365 * 86_400_000,
  dailyIngestBytesMax: 0,
  connectionMemoryBytesMax: 0,
});

function newActor(maxJobsPerConnection: number): ConnectionActor {
  return new ConnectionActor(CONNECTION, limitsWith(maxJobsPerConnection));
}

/** A batch that is refused whole stops the run: loading would otherwise never reach its size. */
function ingest(actor: ConnectionActor, events: unknown[]): void {
  const { record, reply } = actor.decideIngest(events, Date.now());
  if (record === null) throw new Error(`store-growth: a batch was refused whole: ${JSON.stringify(reply.errors?.[0] ?? reply)}`);
  actor.evolve(record);
}

const cpuUs = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

function memory(): { heap: number; rss: number } {
  Bun.gc(true);
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

/** CPU per event of `batches` more batches, in us. */
function ingestCost(actor: ConnectionActor, generator: JobGenerator, batches: number): number {
  const bodies = Array.from({ length: batches }, () => generator.nextBatch(JOBS_PER_BATCH));
  const events = bodies.reduce((sum, body) => sum + body.length, 0);
  const start = cpuUs();
  for (const body of bodies) ingest(actor, body);
  return (cpuUs() - start) / events;
}

function pageTimesMs(actor: ConnectionActor, query: JobListQuery, runs: number): number[] {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    listJobs([actor], query);
    times.push(performance.now() - start);
  }
  return times;
}

const fmt = (value: number, digits = 1): string => value.toFixed(digits);

function growth(): ConnectionActor {
  const largest = Math.max(...sizes);
  const generator = new JobGenerator(CONNECTION, largest + (sizes.length + 1) * measureBatches * JOBS_PER_BATCH);
  const empty = memory();
  const actor = newActor(largest * 2);
  const rows: string[][] = [];
  let loadedEvents = 0;
  let loadCpu = 0;
  for (const size of sizes) {
    const before = cpuUs();
    const eventsBefore = generator.events;
    while (actor.jobs.size < size) ingest(actor, generator.nextBatch(Math.min(JOBS_PER_BATCH, size - actor.jobs.size)));
    loadCpu += cpuUs() - before;
    loadedEvents += generator.events - eventsBefore;
    const jobs = actor.jobs.size;
    const held = memory();
    const perEventUs = ingestCost(actor, generator, measureBatches);
    const base: JobListQuery = { limit: 50, sortBy: 'createdAt', sortOrder: 'desc' };
    const newest = pageTimesMs(actor, base, 200);
    const filtered = pageTimesMs(actor, { ...base, ...RARE_COMBINATION }, 100);
    const [newestP50, newestP99] = percentiles(newest, [50, 99]);
    const [filteredP50, filteredP99] = percentiles(filtered, [50, 99]);
    rows.push([
      jobs.toLocaleString('en-US'),
      fmt((held.heap - empty.heap) / jobs, 0),
      fmt((held.rss - empty.rss) / jobs, 0),
      fmt(loadCpu / loadedEvents),
      fmt(perEventUs),
      `${fmt(newestP50!, 3)} / ${fmt(newestP99!, 3)}`,
      `${fmt(filteredP50!, 3)} / ${fmt(filteredP99!, 3)}`,
    ]);
    console.error(`store-growth: ${jobs} jobs measured`);
  }
  console.log('Growth (in-process, 1,000-event batches through decide + evolve):');
  console.log(
    table(['jobs', 'heap B/job', 'resident B/job', 'load CPU us/event, generating the bodies included (cumulative)', 'ingest CPU us/event at size', 'list createdAt desc p50 / p99 ms', 'list 1% filter p50 / p99 ms'], rows),
  );
  return actor;
}

/** The largest size only, no figures on the way: what the restart scenario starts from when the growth table is skipped. */
function loadOnly(): ConnectionActor {
  const size = Math.max(...sizes);
  const generator = new JobGenerator(CONNECTION, size);
  const actor = newActor(size * 2);
  while (actor.jobs.size < size) ingest(actor, generator.nextBatch(Math.min(JOBS_PER_BATCH, size - actor.jobs.size)));
  console.error(`store-growth: loaded ${actor.jobs.size} jobs for the restart`);
  return actor;
}

/** What the heap figures are, printed under them: they are easily read as resident memory, which they are not. */
const HEAP_MEANING =
  'Heap = process.memoryUsage().heapUsed after a full collection, less the same just before the restore: JavaScript objects plus ' +
  'typed-array storage at its allocated length (a column\'s spare capacity counts whether touched or not). Resident memory (what the ' +
  'memory target states) counts the pages touched and what the allocator keeps; a restored process\'s is the bench\'s "after a restart" row.';

/** The actor's state through its snapshot chunks, as a restart reads them; memory per job after it, less the chunks' own bytes. */
function restartInProcess(loaded: ConnectionActor): void {
  const jobs = loaded.jobs.size;
  const snapshot = takeSnapshot(new AccountsActor(), new AuditLog(), new Map([[CONNECTION, loaded]]), Date.now());
  const encoded = Array.from(snapshot.chunks, (chunk) => encodeValue(chunk));
  const limits = loaded.limits;
  loaded = undefined as unknown as ConnectionActor; // let the loaded actor go before measuring the restored one
  const before = memory();
  const actors = new Map<string, ConnectionActor>();
  const start = cpuUs();
  const restorer = new SnapshotRestorer(new AccountsActor(), new AuditLog(), actors, limits);
  for (const bytes of encoded) restorer.restore(decodeValue(bytes));
  releaseDecoderInput();
  const servingUs = cpuUs() - start;
  const restored = actors.get(CONNECTION)!;
  // the server answers from here on; the sorted indexes are built after it listens
  const sortedIndexesPending = restored.jobs.indexesPending;
  const serving = memory(); // its full collection is outside both CPU figures
  const indexingStart = cpuUs();
  while (restored.jobs.buildNextIndex());
  const indexedUs = servingUs + (cpuUs() - indexingStart);
  const after = memory();
  const chunkBytes = encoded.reduce((sum, bytes) => sum + bytes.byteLength, 0);
  const servingPerJob = (serving.heap - before.heap) / jobs;
  const indexedPerJob = (after.heap - before.heap) / jobs;
  console.log(`Restart in-process at ${jobs.toLocaleString('en-US')} jobs (snapshot chunks ${fmt(chunkBytes / jobs, 0)} B/job, held throughout and left out):`);
  console.log(
    table(
      [
        'recovery CPU to serving ms',
        'with every index built ms',
        `heap B/job at serving (rows + lookups${sortedIndexesPending ? ', no sorted index' : ', sorted indexes already built'})`,
        'heap B/job, every index built',
        'sorted indexes B/job (share)',
      ],
      [
        [
          fmt(servingUs / 1000, 0),
          fmt(indexedUs / 1000, 0),
          fmt(servingPerJob, 0),
          fmt(indexedPerJob, 0),
          `${fmt(indexedPerJob - servingPerJob, 0)} (${indexedPerJob > 0 ? fmt((100 * (indexedPerJob - servingPerJob)) / indexedPerJob, 0) : 'n/a'}%)`,
        ],
      ],
    ),
  );
  console.log(HEAP_MEANING);
  if (restored.jobs.size !== jobs) throw new Error(`restored ${restored.jobs.size} jobs of ${jobs}`);
}

/** Old jobs that never finish, then ingest at the cap: each batch's eviction must find finished jobs past them. */
function evictionAtCap(): void {
  const actor = newActor(cap);
  const stuck = cap >> 1;
  const startMs = Date.now() - 7 * 86_400_000;
  for (let first = 0; first < stuck; first += EVENTS_PER_BATCH) {
    const events = [];
    for (let n = first; n < Math.min(stuck, first + EVENTS_PER_BATCH); n++) {
      events.push({
        type: 'job_state_change',
        timestamp: new Date(startMs + n).toISOString(),
        framework: 'celery',
        connectionId: CONNECTION,
        job: { externalId: `lost-${n}`, name: 'tasks.lost', queue: 'default', state: 'queued' },
      });
    }
    ingest(actor, events);
  }
  const generator = new JobGenerator(CONNECTION, cap * 4);
  while (actor.jobs.size < cap) ingest(actor, generator.nextBatch(JOBS_PER_BATCH));
  const perEventUs = ingestCost(actor, generator, measureBatches);
  console.log(`Eviction at the cap (${cap.toLocaleString('en-US')} jobs, the oldest ${stuck.toLocaleString('en-US')} never finish): ingest CPU ${fmt(perEventUs)} us/event`);
}

// the loaded actor is handed on, not kept here: the restart measures memory once it is gone
if (!skip.has('restart')) restartInProcess(skip.has('growth') ? loadOnly() : growth());
else if (!skip.has('growth')) growth();
if (!skip.has('cap')) evictionAtCap();
