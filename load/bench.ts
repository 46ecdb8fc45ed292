/**
 * The whole load test in one run, printed as one table: each figure beside its baseline
 * measured in the same run on the same machine, the ratio, and the target (met or not).
 *
 *   bun run bench                      # = npx bun load/bench.ts; 1,000,000 jobs, about 6-8 minutes
 *   npx bun load/bench.ts --quick      # 100,000 jobs, shorter runs: a check in about 2 minutes
 *   npx bun load/bench.ts --jobs 500k --profile --skip stream
 *   bun run bench -- --cluster         # only the cluster table (load/cluster.ts; needs nats-server)
 *   bun run bench -- --cluster-memory  # only the cluster's memory per node (load/cluster-memory.ts; needs nats-server)
 *
 * Scenarios (each against a service this script starts on a temporary DATA_DIR, with
 * DAILY_EVENT_LIMIT=0; the baseline is load/baseline.ts in its own process):
 * 1. ingest: first the target case, 8 concurrent senders of 1,000-event bodies against a fresh
 *    service with FSYNC=always (p50/p99/max, and the service's own `ingest timings:` line at
 *    shutdown: work per request, wait for durability, write and fdatasync per group commit,
 *    event-loop stalls); then on another service 1,000-, 100- and 1-event bodies with
 *    --ingest-connections senders, then 1,000-event bodies with FSYNC=no; the baseline
 *    JSON.parses the same bodies with the same senders.
 * 2. reads: a second service (FSYNC=no, snapshots held off while loading) is loaded with
 *    --jobs jobs, then job list pages for every sort and order, two 1% filters, a cursor
 *    page, job detail, queues, workers; the baseline answers a small GET.
 *    Resident memory per job = (RSS with the jobs - RSS of the empty service) / jobs,
 *    VmRSS of the server process from /proc/<pid>/status, each the lowest of a few
 *    readings once ingest has stopped.
 * 3. restart: SIGTERM (shutdown snapshot), start again on the same DATA_DIR, time until
 *    /api/health answers and `recovered:` is logged; the baseline is the same service's
 *    first start on an empty DATA_DIR. A footnote profiles that time from the new process's
 *    log lines (load/restart-profile.ts): spawn to recovery, recovery's own phases, recovery
 *    to listening, listening to the first 200. Memory per job has the shutdown snapshot's bytes per
 *    job (the jobs as columns on disk) as its baseline.
 * 4. snapshot stall: the restart sets SNAPSHOT_LOG_MB=1; after ~3 MB of ingest the server's
 *    5-second check writes a snapshot of all jobs while a tight sequential loop of
 *    GET /api/health records its answers; the longest gap between answers is the stall
 *    (load/restart.ts).
 * 6. growth: load/store-growth.ts in a process of its own (a connection actor in-process, no
 *    HTTP): heap and resident memory per job and ingest CPU per event at 100k and 1M jobs
 *    (100k with --quick; 3M too with BENCH_GROWTH_3M=1, which takes a few minutes more and
 *    about 3 GB), printed after the table.
 * 7. payload: load/payload.ts, three runs, each in a process of its own (a connection actor
 *    in-process, no HTTP): resident and heap memory per job of --jobs jobs without arguments
 *    and with a typical 200-byte payload (the growth is the figure), and the p99 of payload
 *    searches (`data.userId`, an `args` substring, a common field with a state filter, a
 *    field nothing has) for one page, beside the same page without the terms.
 * 8. scaling: load/scaling.ts: 1 (one thread), 2 and 4 shards (WORKERS) with 16 connections and a
 *    sender each, events/s beside 1 shard's, and the HTTP thread's CPU per 1,000 routed events;
 *    one connection at 1 and 4 shards (a connection is bounded by its shard). The other
 *    scenarios run with the WORKERS this script was started with (default 1).
 * 5. stream: N SSE subscribers while ingesting at a target rate (load/stream.ts), twice: spread
 *    over as many users as the per-user stream limit needs (each user its own connection; the
 *    target row), and the most streams one connection may have (one user's limit) receiving
 *    the whole rate. Skipped with a message while GET /api/events/stream answers 404.
 *
 * 7. task metrics: the memory of 200 tasks over 90 days of hourly buckets (30 with --quick),
 *    in a process of its own, and the read latency of one task's 90 days over HTTP against a
 *    service started on a prepared snapshot (load/task-metrics-bench.ts).
 *
 * Options: --jobs N, --quick, --ingest-duration s, --ingest-connections n (default 4),
 * --read-duration s, --read-connections n (default 4), --subscribers n (default 1000),
 * --stream-rate events/s (default 50000), --stream-duration s, --profile (CPU profiles of
 * the services, top functions printed after the table), --skip ingest,reads,restart,stream,growth,payload,metrics,scaling.
 * Progress goes to stderr, results to stdout.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startBaseline } from './baseline.ts';
import type { CannonResult } from './cannon.ts';
import { describeThreadCpu, measureIngest, templatesFor, type IngestResult } from './ingest.ts';
import { summarizeProfile } from './profile.ts';
import { loadJobs, loadPhaseEnv, measureBaselineGet, measureReads, readScenarios, settledRss, type ReadResult } from './reads.ts';
import { measureRestart, measureSnapshotStall, type RestartMeasurement, type StallResult } from './restart.ts';
import { describeRestartProfile, firstTouchMsPerMiB } from './restart-profile.ts';
import { makeTempDir, removeTempDir, serviceFromEnv } from './service.ts';
import { describeStream, measureStream, streamShape, type StreamLayout, type StreamResult } from './stream.ts';
import { taskMetricsRows, type BenchRow } from './task-metrics-bench.ts';
import { flag, fmtBytes, fmtCount, fmtMs, machineDescription, note, num, parseArgs, str, table } from './util.ts';
import { measureScaling, scalingRows, type ScalingRun } from './scaling.ts';
import { benchWorkers } from './service.ts';
import { cpus } from 'node:os';

const args = parseArgs();
if (flag(args, 'cluster')) {
  // its own table; only this run needs nats-server (load/cluster.ts)
  const { runClusterBench } = await import('./cluster.ts');
  await runClusterBench();
  process.exit(0);
}
if (flag(args, 'cluster-memory')) {
  const { runClusterMemoryBench } = await import('./cluster-memory.ts');
  await runClusterMemoryBench(process.argv.slice(2).filter((arg) => arg !== '--cluster-memory'));
  process.exit(0);
}
const quick = flag(args, 'quick');
const jobs = Math.round(num(args, 'jobs', quick ? 100_000 : 1_000_000));
const settings = {
  ingestS: num(args, 'ingest-duration', quick ? 3 : 8),
  ingestWarmupS: quick ? 1 : 2,
  ingestConnections: num(args, 'ingest-connections', 4),
  readS: num(args, 'read-duration', quick ? 1.5 : 3),
  readWarmupS: 0.5,
  readConnections: num(args, 'read-connections', 4),
  subscribers: num(args, 'subscribers', 1000),
  streamRate: num(args, 'stream-rate', 50_000),
  streamS: num(args, 'stream-duration', quick ? 4 : 10),
};
const skip = new Set(
  str(args, 'skip', '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const profileRoot = flag(args, 'profile') ? makeTempDir('jobwatch-prof-') : undefined;
const profileDir = (name: string): string | undefined => {
  if (profileRoot === undefined) return undefined;
  const dir = join(profileRoot, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

const startedAt = new Date();
const runStarted = performance.now();
const footnotes: string[] = [];

// ---------------------------------------------------------------------------------------
// measurements

const baseline = await startBaseline();
note(`baseline (Bun.serve + JSON.parse) pid ${baseline.pid} on ${baseline.baseUrl}`);

interface IngestPair {
  service: IngestResult;
  baseline: IngestResult;
  fsync: string;
  /** the target scenario: a fresh service, TAIL_SENDERS concurrent senders */
  targeted: boolean;
}
/** The issue's "new user" case: this many concurrent senders of 1,000-event batches against a fresh service. */
const TAIL_SENDERS = 8;
/** The target service's own account of where ingest time went (its `ingest timings:` shutdown line). */
let ingestTimings: string | null = null;
const ingestPairs: IngestPair[] = [];
let reads: ReadResult[] = [];
let readBaseline: CannonResult | null = null;
const memory: { empty: number | null; loaded: number | null; afterRestart: number | null } = { empty: null, loaded: null, afterRestart: null };
let loadInfo: { ms: number; events: number } | null = null;
let restart: RestartMeasurement | null = null;
/** the reads service's first start on an empty DATA_DIR: what a restart costs beyond its jobs */
let restartBaselineMs: number | null = null;
let stall: StallResult | null = null;
const streams: StreamResult[] = [];
const problems: string[] = [];
/** load/store-growth.ts's own output, printed after the table */
let growthReport: string | null = null;
/** load/payload.ts's figures: memory per job without and with a typical payload, and payload search times */
const payloadFigures: { none: PayloadMemory | null; typical: PayloadMemory | null; search: PayloadSearch | null } = { none: null, typical: null, search: null };
let scaling: { many: ScalingRun[]; one: ScalingRun[] } | null = null;
let metricsRows: BenchRow[] = [];
/** The issue's sizes for the cost of growth; 3M needs about 3 GB and minutes more, so it is asked for. */
const growthSizes = quick ? '100k' : process.env.BENCH_GROWTH_3M === '1' ? '100k,1m,3m' : '100k,1m';
/** a typical job's arguments as JSON, the issue's figure for memory per job */
const TYPICAL_PAYLOAD_BYTES = 200;

try {
  if (!skip.has('ingest')) {
    const phases = [
      { fsync: 'always', name: 'target', batches: [1000], connections: TAIL_SENDERS, targeted: true },
      { fsync: 'always', name: 'always', batches: [1000, 100, 1], connections: settings.ingestConnections, targeted: false },
      { fsync: 'no', name: 'no', batches: [1000], connections: settings.ingestConnections, targeted: false },
    ] as const;
    for (const phase of phases) {
      const { fsync, connections, targeted } = phase;
      const service = await serviceFromEnv({ env: { FSYNC: fsync, DAILY_EVENT_LIMIT: '0' }, label: `ingest-${phase.name}`, cpuProfDir: profileDir(`ingest-${phase.name}`) });
      try {
        for (const batch of phase.batches) {
          note(`ingest FSYNC=${fsync}, ${batch}-event bodies, ${connections} connections${targeted ? ' (fresh service)' : ''}, ${settings.ingestS} s (+${settings.ingestWarmupS} s warm-up), then the baseline`);
          const templates = templatesFor(service.connectionId, batch);
          const options = { batch, connections, durationS: settings.ingestS, warmupS: settings.ingestWarmupS, templates };
          const measured = await measureIngest(service, { label: `service FSYNC=${fsync}`, ...options });
          const ceiling = await measureIngest({ baseUrl: baseline.baseUrl, apiKey: 'baseline', connectionId: service.connectionId, pid: baseline.pid }, { label: 'baseline', ...options });
          ingestPairs.push({ service: measured, baseline: ceiling, fsync, targeted });
          note(`  service ${fmtCount(measured.eventsPerS)} events/s p50 ${fmtMs(measured.cannon.p50)} p99 ${fmtMs(measured.cannon.p99)} max ${fmtMs(measured.cannon.max)}; baseline ${fmtCount(ceiling.eventsPerS)} events/s p99 ${fmtMs(ceiling.cannon.p99)}`);
        }
      } finally {
        await service.cleanup();
      }
      if (targeted) ingestTimings = service.logs.find((line) => line.includes('ingest timings:'))?.replace(/^.*ingest timings: /, '') ?? null;
    }
  }

  if (!skip.has('reads') || !skip.has('restart')) {
    const service = await serviceFromEnv({ env: loadPhaseEnv(jobs), label: 'reads', cpuProfDir: profileDir('reads') });
    restartBaselineMs = service.startupMs;
    try {
      memory.empty = await settledRss(service, 1_000);
      note(`loading ${fmtCount(jobs)} jobs (FSYNC=no, DAILY_EVENT_LIMIT=0, snapshots held off)`);
      const load = await loadJobs(service, jobs);
      loadInfo = { ms: load.ms, events: load.events };
      note(`loaded ${fmtCount(jobs)} jobs (${fmtCount(load.events)} events) in ${fmtMs(load.ms)}`);
      memory.loaded = await settledRss(service);
      if (!skip.has('reads')) {
        const scenarios = await readScenarios(service);
        note(`reads: ${scenarios.length} scenarios, ${settings.readConnections} connections, ${settings.readS} s each`);
        reads = await measureReads(service, scenarios, { connections: settings.readConnections, durationS: settings.readS, warmupS: settings.readWarmupS });
        readBaseline = await measureBaselineGet(baseline.baseUrl, { connections: settings.readConnections, durationS: settings.readS, warmupS: settings.readWarmupS });
      }
      if (!skip.has('restart') && service.pid !== null) {
        note(`restart with ${fmtCount(jobs)} jobs (SIGTERM, shutdown snapshot, start on the same DATA_DIR)`);
        restart = await measureRestart(service);
        memory.afterRestart = restart.rssAfterRestart;
        note(`  restart ${fmtMs(restart.restartMs)} (shutdown ${fmtMs(restart.shutdownMs)}); snapshot stall next`);
        stall = await measureSnapshotStall(service);
      }
    } catch (error) {
      problems.push(`reads/restart: ${error instanceof Error ? error.message : String(error)}`);
      note(`reads/restart failed: ${String(error)}`);
    } finally {
      await service.cleanup();
    }
  }

  if (!skip.has('stream')) {
    for (const layout of ['spread', 'single'] as StreamLayout[]) {
      const service = await serviceFromEnv({ env: { FSYNC: 'always', DAILY_EVENT_LIMIT: '0' }, label: `stream-${layout}` });
      try {
        note(`stream (${layout}): ${settings.subscribers} subscribers wanted, ${fmtCount(settings.streamRate)} events/s for ${settings.streamS} s`);
        const result = await measureStream(service, { subscribers: settings.subscribers, rate: settings.streamRate, batch: 1000, durationS: settings.streamS, layout });
        streams.push(result);
        if (result.skipped !== null) {
          note(`stream: ${result.skipped}`);
          break;
        }
        note(`  p50 ${fmtMs(result.p50)} p99 ${fmtMs(result.p99)} (${streamShape(result)}, ${fmtCount(result.achievedRate)} events/s)`);
      } catch (error) {
        problems.push(`stream (${layout}): ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await service.cleanup();
      }
    }
  }

  if (!skip.has('payload')) {
    // each in a process of its own: one run's memory must not blur the next's
    const run = async (...extra: string[]): Promise<unknown> => {
      note(`payload: load/payload.ts --jobs ${jobs} ${extra.join(' ')}`);
      const child = Bun.spawn([process.execPath, 'load/payload.ts', '--jobs', String(jobs), ...extra], { cwd: join(import.meta.dir, '..'), stdout: 'pipe', stderr: 'inherit' });
      const output = await new Response(child.stdout).text();
      if ((await child.exited) !== 0) {
        problems.push(`payload: load/payload.ts ${extra.join(' ')} exited with code ${child.exitCode}`);
        return null;
      }
      return JSON.parse(output.trim().split('\n').pop()!);
    };
    payloadFigures.none = (await run('--measure', 'memory', '--payload-bytes', '0')) as PayloadMemory | null;
    payloadFigures.typical = (await run('--measure', 'memory', '--payload-bytes', String(TYPICAL_PAYLOAD_BYTES))) as PayloadMemory | null;
    payloadFigures.search = (await run('--measure', 'search', '--payload-bytes', String(TYPICAL_PAYLOAD_BYTES))) as PayloadSearch | null;
  }

  if (!skip.has('scaling')) {
    note('scaling: 1, 2 and 4 shards with 16 connections, then one connection at 1 and 4 shards (load/scaling.ts)');
    try {
      scaling = await measureScaling({
        shards: [1, 2, 4],
        connections: 16,
        durationS: settings.ingestS,
        // each shard's thread compiles its hot code for itself: more shards, longer warm-up
        warmupS: Math.max(3, 2 * settings.ingestWarmupS),
        generators: Math.max(1, Math.floor(cpus().length / 4)),
        oneConnectionAt: [1, 4],
      });
    } catch (error) {
      problems.push(`scaling: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  if (!skip.has('metrics')) {
    const measured = await taskMetricsRows({ quick, baselineUrl: baseline.baseUrl, reads: { connections: settings.readConnections, durationS: settings.readS, warmupS: settings.readWarmupS } });
    metricsRows = measured.rows;
    problems.push(...measured.problems);
  }

  if (!skip.has('growth')) {
    note(`growth: load/store-growth.ts --sizes ${growthSizes} in its own process`);
    const child = Bun.spawn([process.execPath, 'load/store-growth.ts', '--sizes', growthSizes, '--skip', 'cap'], { cwd: join(import.meta.dir, '..'), stdout: 'pipe', stderr: 'inherit' });
    const output = await new Response(child.stdout).text();
    if ((await child.exited) === 0) growthReport = output.trim();
    else problems.push(`growth: load/store-growth.ts exited with code ${child.exitCode}`);
  }
} finally {
  await baseline.stop();
}

// ---------------------------------------------------------------------------------------
// the table

type Row = BenchRow;
interface PayloadMemory {
  jobs: number;
  heapPerJob: number;
  rssPerJob: number;
}
interface PayloadSearch {
  jobs: number;
  results: Array<{ name: string; p50: number; p99: number; max: number; baselineP99: number; found: number; total: number; partial: number; runs: number }>;
}
const rows: Row[] = [];
const verdict = (met: boolean | null): string => (met === null ? '' : met ? 'met' : 'NOT MET');
const times = (a: number, b: number): string => (Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(1)}x` : '');
/** The time and level a readable log line starts with (`[2026-...Z] INFO: `), left out of the footnotes. */
const LOG_PREFIX = /^\[[^\]]*\] [A-Z]+: /;
const percent = (a: number, b: number): string => (b > 0 ? `${((100 * a) / b).toFixed(1)}%` : '');
const scale = jobs === 1_000_000 ? '' : ` (measured at ${fmtCount(jobs)} jobs; the target is for 1M)`;

/** CPU per 1,000 events, service and baseline: what the throughput would be on idle cores. */
const cpuPer1000 = (service: IngestResult, ceiling: IngestResult): string =>
  service.cpuMsPer1000 === null || ceiling.cpuMsPer1000 === null
    ? ''
    : `; CPU per 1k events ${fmtMs(service.cpuMsPer1000)} vs ${fmtMs(ceiling.cpuMsPer1000)} (${percent(ceiling.cpuMsPer1000, service.cpuMsPer1000)})`;

for (const { service, baseline: ceiling, fsync, targeted } of ingestPairs) {
  const name = `ingest ${service.batch}/req FSYNC=${fsync}${targeted ? `, ${service.connections} senders, fresh` : `, ${service.connections} conns`}`;
  const errors = service.cannon.non2xx + service.cannon.errors;
  rows.push([
    `${name}: events/s`,
    fmtCount(service.eventsPerS),
    fmtCount(ceiling.eventsPerS),
    percent(service.eventsPerS, ceiling.eventsPerS),
    targeted ? '>= 25% of baseline' : '',
    verdict(targeted ? service.eventsPerS >= 0.25 * ceiling.eventsPerS : null),
    `${fmtCount(service.cannon.rps)} req/s, body ${fmtBytes(service.bodyBytes)}${cpuPer1000(service, ceiling)}${errors > 0 ? `, ${errors} errors` : ''}`,
  ]);
  rows.push([
    `${name}: p99`,
    fmtMs(service.cannon.p99),
    fmtMs(ceiling.cannon.p99),
    times(service.cannon.p99, ceiling.cannon.p99),
    targeted ? '< 100 ms' : '',
    verdict(targeted ? service.cannon.p99 < 100 : null),
    `p50 ${fmtMs(service.cannon.p50)} (baseline ${fmtMs(ceiling.cannon.p50)}), max ${fmtMs(service.cannon.max)}`,
  ]);
}

if (readBaseline !== null) {
  for (const { scenario, cannon } of reads) {
    const targeted = scenario.kind === 'list' || scenario.kind === 'filter';
    const share = scenario.share !== undefined ? `, matches ${(scenario.share * 100).toFixed(2)}% of jobs` : '';
    rows.push([
      `${scenario.label}: p99`,
      fmtMs(cannon.p99),
      fmtMs(readBaseline.p99),
      times(cannon.p99, readBaseline.p99),
      targeted ? `< 5 ms${scale === '' ? '' : '*'}` : '',
      verdict(targeted ? cannon.p99 < 5 : null),
      `p50 ${fmtMs(cannon.p50)}, ${fmtCount(cannon.rps)} req/s${share}${cannon.non2xx + cannon.errors > 0 ? `, ${cannon.non2xx + cannon.errors} errors` : ''}`,
    ]);
  }
  rows.push(['baseline GET (small JSON): p99', fmtMs(readBaseline.p99), fmtMs(readBaseline.p99), '1.0x', '', '', `p50 ${fmtMs(readBaseline.p50)}, ${fmtCount(readBaseline.rps)} req/s`]);
}

/** The shutdown snapshot's size per job: the jobs as columns on disk, the memory rows' baseline. */
const snapshotBytesPerJob = ((): number | null => {
  const bytes = restart?.snapshotLine === null || restart === null ? undefined : /: (\d+) bytes in/.exec(restart.snapshotLine)?.[1];
  return bytes === undefined ? null : Number(bytes) / jobs;
})();
const MEMORY_TARGET_BYTES = 400;
if (memory.empty !== null && memory.loaded !== null) {
  // the target holds after loading and after a restart alike: one row each
  const perJobRows: Array<[string, number | null, string]> = [
    ['after loading', (memory.loaded - memory.empty) / jobs, `RSS empty ${fmtBytes(memory.empty)}, loaded ${fmtBytes(memory.loaded)}`],
    ['after a restart', memory.afterRestart === null ? null : (memory.afterRestart - memory.empty) / jobs, `RSS after restart, every index built by reading it, ${memory.afterRestart === null ? 'not measured' : fmtBytes(memory.afterRestart)}`],
  ];
  for (const [when, perJob, detail] of perJobRows) {
    if (perJob === null) continue;
    rows.push([
      `resident memory per job at ${fmtCount(jobs)} jobs, ${when}`,
      `${perJob.toFixed(0)} B`,
      snapshotBytesPerJob === null ? '' : `${snapshotBytesPerJob.toFixed(0)} B`,
      snapshotBytesPerJob === null ? '' : times(perJob, snapshotBytesPerJob),
      `< ${MEMORY_TARGET_BYTES} B${scale === '' ? '' : '*'}`,
      verdict(perJob < MEMORY_TARGET_BYTES),
      `${detail}; baseline: the shutdown snapshot's bytes per job`,
    ]);
  }
} else if (!skip.has('reads') || !skip.has('restart')) {
  rows.push([`resident memory per job`, 'n/a', '', '', `< ${MEMORY_TARGET_BYTES} B`, '', 'not measurable: no server pid (attached to BASE_URL?)']);
}

if (payloadFigures.none !== null && payloadFigures.typical !== null) {
  const { none, typical } = payloadFigures;
  // heap after a full collection: the bytes the jobs hold. Resident memory also keeps what the
  // allocator took for ingest's passing garbage (each event's parsed arguments), so it is shown beside it.
  const growth = typical.heapPerJob - none.heapPerJob;
  const allowed = TYPICAL_PAYLOAD_BYTES + 32;
  rows.push([
    `memory per job with a ${TYPICAL_PAYLOAD_BYTES}-byte payload, growth${scale}`,
    `+${growth.toFixed(0)} B`,
    `${none.heapPerJob.toFixed(0)} B`,
    times(typical.heapPerJob, none.heapPerJob),
    `<= ${allowed} B (payload + 32)`,
    verdict(growth <= allowed),
    `heap per job after a full collection, in-process (load/payload.ts, a process each), with arguments of ${TYPICAL_PAYLOAD_BYTES} bytes on every job less without; resident: +${(typical.rssPerJob - none.rssPerJob).toFixed(0)} B (${none.rssPerJob.toFixed(0)} -> ${typical.rssPerJob.toFixed(0)}), which keeps what ingest's passing garbage took; baseline: the same jobs without arguments`,
  ]);
}
for (const search of payloadFigures.search?.results ?? []) {
  rows.push([
    `payload search at ${fmtCount(payloadFigures.search!.jobs)} jobs: ${search.name}, p99`,
    fmtMs(search.p99),
    fmtMs(search.baselineP99),
    times(search.p99, search.baselineP99),
    `< 200 ms${scale === '' ? '' : '*'}, or partial`,
    verdict(search.p99 < 200 || search.partial === search.runs),
    `in-process, one page of 50 (p50 ${fmtMs(search.p50)}, max ${fmtMs(search.max)}); ${search.found} on the page, total ${fmtCount(search.total)}; ${search.partial} of ${search.runs} runs stopped by the budget (partial); baseline: the same page without the payload terms`,
  ]);
}

if (restart !== null) {
  rows.push([
    `restart with ${fmtCount(jobs)} jobs`,
    fmtMs(restart.restartMs),
    restartBaselineMs === null ? '' : fmtMs(restartBaselineMs),
    restartBaselineMs === null ? '' : times(restart.restartMs, restartBaselineMs),
    `< 1 s${scale === '' ? '' : '*'}`,
    verdict(restart.restartMs < 1_000),
    `spawn to /api/health 200 + recovered${restart.profile === null ? '' : ` (recovery ${fmtMs(restart.profile.recoveryMs)}; profile below)`}; shutdown before it ${fmtMs(restart.shutdownMs)}; baseline: the same service's first start, empty DATA_DIR`,
  ]);
}
if (stall !== null) {
  rows.push([
    `snapshot stall at ${fmtCount(jobs)} jobs`,
    stall.problem === null ? fmtMs(stall.maxGapMs) : 'n/a',
    fmtMs(stall.idleMaxGapMs),
    stall.problem === null ? times(stall.maxGapMs, stall.idleMaxGapMs) : '',
    `< 50 ms${scale === '' ? '' : '*'}`,
    verdict(stall.problem === null ? stall.maxGapMs < 50 : null),
    stall.problem === null ? `longest gap between /api/health answers (${fmtCount(stall.healthAnswers)}) during a running snapshot; baseline = idle gap` : `not measured: ${stall.problem.slice(0, 120)}`,
  ]);
}
for (const stream of streams) {
  if (stream.skipped !== null) {
    rows.push([`stream delivery p99`, 'skipped', '', '', '< 100 ms @1000 subs, 50k ev/s', '', stream.skipped]);
    continue;
  }
  const targeted = stream.layout === 'spread';
  const fullLoad = stream.subscribersOpened >= 1000 && stream.achievedRate >= 0.95 * 50_000;
  const lost = stream.probesExpected - stream.probesReceived;
  rows.push([
    `stream delivery p99 (${stream.subscribersOpened} subs${stream.layout === 'single' ? ' on 1 connection' : ''}, ${fmtCount(stream.achievedRate)} ev/s)`,
    fmtMs(stream.p99),
    '',
    '',
    targeted ? '< 100 ms @1000 subs, 50k ev/s' : '',
    verdict(targeted ? (fullLoad ? stream.p99 < 100 : stream.p99 < 100 ? null : false) : null),
    `p50 ${fmtMs(stream.p50)}, max ${fmtMs(stream.max)}; ingest req p99 ${fmtMs(stream.ingestP99)}; ${streamShape(stream)}${lost > 0 ? `; ${fmtCount(lost)} of ${fmtCount(stream.probesExpected)} probes missing` : ''}${stream.streamsEnded > 0 ? `; ${stream.streamsEnded} streams cut` : ''}${targeted && !fullLoad ? ' (below the target load)' : ''}`,
  ]);
}

if (scaling !== null) for (const row of scalingRows(scaling, cpus().length)) rows.push(row as Row);

/**
 * Why the tail target is a throughput target: with every sender waiting for its answer before
 * sending again, a round of all senders' events takes (senders x batch) / throughput, which is
 * what a request waits when one core serves them in turn (Little's law).
 */
function closedLoopBound(service: IngestResult): string {
  const eventsPerRound = TAIL_SENDERS * 1_000;
  const roundMs = (eventsPerRound / service.eventsPerS) * 1000;
  const neededForTarget = eventsPerRound / 0.1;
  return (
    `ingest tail, closed loop: ${TAIL_SENDERS} senders x 1,000 events at ${fmtCount(service.eventsPerS)} events/s = ${fmtMs(roundMs)} per round, ` +
    `so p99 < 100 ms needs about ${fmtCount(neededForTarget)} events/s (${(neededForTarget / service.eventsPerS).toFixed(1)}x this run).`
  );
}

rows.push(...metricsRows);

const minutes = (performance.now() - runStarted) / 60_000;
console.log(`jobwatch load test, ${startedAt.toISOString()}`);
console.log(`machine: ${machineDescription()}`);
console.log(
  `settings: ${fmtCount(jobs)} jobs${quick ? ' (--quick)' : ''}; ingest ${settings.ingestConnections} connections x ${settings.ingestS} s; reads ${settings.readConnections} connections x ${settings.readS} s, limit 50; ` +
    `stream ${settings.subscribers} subscribers at ${fmtCount(settings.streamRate)} events/s; WORKERS=${benchWorkers()} but in the scaling rows; load generator and servers share the machine; run took ${minutes.toFixed(1)} min`,
);
console.log('');
console.log(table(['figure', 'service', 'baseline', 'ratio', 'target', 'result', 'detail'], rows));
console.log('');
if (profileRoot !== undefined) footnotes.push('--profile: the services ran under `bun --cpu-prof`; the profiler costs CPU and keeps memory, so resident memory and latencies of this run are not representative.');
if (scale !== '') footnotes.push(`* targets are stated for 1M jobs; this run had ${fmtCount(jobs)}.`);
if (ingestTimings !== null) footnotes.push(`ingest tail (${TAIL_SENDERS} senders), as the service timed it: ${ingestTimings}.`);
for (const { service, targeted } of ingestPairs) {
  if (targeted && service.cpuByThread !== null) footnotes.push(`ingest (${TAIL_SENDERS} senders), the service's CPU by thread: ${describeThreadCpu(service.cpuByThread)}.`);
  if (targeted) footnotes.push(closedLoopBound(service));
}
footnotes.push('ingest baseline: Bun.serve that only JSON.parses the same bodies; read baseline: Bun.serve answering a small JSON. Ratios: events/s as % of baseline, latencies as multiples of it.');
if (loadInfo !== null) footnotes.push(`load phase: ${fmtCount(jobs)} jobs, ${fmtCount(loadInfo.events)} events in ${fmtMs(loadInfo.ms)} (${fmtCount(loadInfo.events / (loadInfo.ms / 1000))} events/s at FSYNC=no, 2 requests in flight; not a target figure).`);
const memoryNotMet = [memory.loaded, memory.afterRestart].some((rss) => rss !== null && memory.empty !== null && (rss - memory.empty) / jobs >= MEMORY_TARGET_BYTES);
if (memoryNotMet) {
  footnotes.push(
    growthReport !== null
      ? 'memory per job NOT MET: where the bytes go is in "Restart in-process" under the cost of growth below: heap per job when a restored store can serve (rows and lookups) against every index built, the difference being the sorted indexes. Those are heap figures (typed arrays at their allocated length), the rows above resident ones.'
      : 'memory per job NOT MET: `npx bun load/store-growth.ts --skip growth,cap` prints heap per job of a restored store with and without its sorted indexes (growth was skipped in this run).',
  );
}
if (restart !== null && restart.restartMs >= 1_000 && memory.afterRestart !== null) {
  const msPerMiB = firstTouchMsPerMiB();
  const residentMiB = memory.afterRestart / 1024 / 1024;
  footnotes.push(
    `restart NOT MET; its floor on this machine: touching fresh memory costs ${msPerMiB.toFixed(2)} ms per MiB here (measured now), so faulting in the restarted service's ${residentMiB.toFixed(0)} MiB resident takes about ${fmtMs(msPerMiB * residentMiB)} before any work: a restart under 1 s at this size needs fewer resident bytes or cheaper page faults (hugepages, bare metal).`,
  );
}
const listsNotMet = reads.some((read) => (read.scenario.kind === 'list' || read.scenario.kind === 'filter') && read.cannon.p99 >= 5);
if (listsNotMet && readBaseline !== null) {
  footnotes.push(
    `job lists NOT MET: the read baseline's own p99 is ${fmtMs(readBaseline.p99)} with the same 4 clients; a page's work in-process is the "list ... p50 / p99" columns of the cost of growth below (milliseconds below 1 at 1M). The rest of a list's p99 over HTTP is waiting behind the other clients' requests and garbage collection pauses, which the service's CPU profile (--profile) shows as time outside the list code.`,
  );
}
if (restart !== null) {
  footnotes.push(`restart: ${restart.recoveredLine.replace(LOG_PREFIX, '')}; shutdown: ${restart.snapshotLine?.replace(LOG_PREFIX, '') ?? 'no snapshot line'}.`);
  footnotes.push(
    restart.profile === null
      ? 'restart profile: not available (the service logged no `recovery phases:` line)'
      : `restart profile (where spawn to serving went; the service's log lines, timed on arrival): ${describeRestartProfile(restart.profile)}.`,
  );
}
if (stall?.snapshotLine != null) footnotes.push(`stall: ${stall.snapshotLine.replace(/^\S+ /, '')}.`);
for (const stream of streams) if (stream.skipped === null) footnotes.push(describeStream(stream));
for (const problem of problems) footnotes.push(`PROBLEM: ${problem}`);
console.log(footnotes.join('\n'));
if (growthReport !== null) console.log(`\nThe cost of growth (load/store-growth.ts --sizes ${growthSizes}; in-process, its own process):\n${growthReport}`);

if (profileRoot !== undefined) {
  for (const name of readdirSync(profileRoot).sort()) {
    for (const file of readdirSync(join(profileRoot, name)).filter((f) => f.endsWith('.cpuprofile')).sort()) {
      console.log(`\nCPU profile of the ${name} service process:`);
      console.log(summarizeProfile(join(profileRoot, name, file), 20));
    }
  }
  removeTempDir(profileRoot);
}
process.exit(0);
