/**
 * Read latency at scale: load N jobs, then autocannon on job list pages (limit 50) for
 * every sortBy in both orders, two filters matching about 1% of jobs, a second page by
 * cursor, job detail, queues with metrics, and workers; beside a baseline small GET.
 *
 *   npx bun load/reads.ts --jobs 1000000 --connections 4 --duration 3
 *   npx bun load/reads.ts --jobs 100k --duration 2 --no-baseline
 *
 * The load phase ingests as fast as it can with DAILY_EVENT_LIMIT=0, FSYNC=no and
 * snapshots held off (SNAPSHOT_LOG_MB=1000000, SNAPSHOT_INTERVAL_MINUTES=1440): it builds
 * the data set, it is not a measurement of durable ingest (load/ingest.ts is). Jobs span
 * the last 6 hours; about 3 events per job (queued, active, completed/failed/retrying;
 * 3% stay queued, 4% active). Options: --jobs (default 1,000,000), --connections
 * (default 4), --duration seconds per scenario (default 3), --load-concurrency (default 2),
 * --no-baseline, --profile (CPU profile of the service, top functions printed at the end).
 */
import { runCannon, type CannonResult } from './cannon.ts';
import { JobGenerator, jobsForEvents, RARE_COMBINATION, RARE_TASK_SEARCH } from './events.ts';
import { startBaseline } from './baseline.ts';
import { newestProfile, summarizeProfile } from './profile.ts';
import { makeTempDir, removeTempDir, serviceFromEnv, type Service, type Session } from './service.ts';
import { flag, fmtBytes, fmtCount, fmtMs, note, num, parseArgs, sleep, table } from './util.ts';

export const JOB_SORT_KEYS = ['createdAt', 'name', 'state', 'durationMs', 'queue', 'startedAt', 'worker'] as const;

/** Server settings for the load phase (see the header). */
export function loadPhaseEnv(jobs: number): Record<string, string> {
  return {
    FSYNC: 'no',
    DAILY_EVENT_LIMIT: '0',
    // the tenant byte budgets (256 MB a day, 1 GB retained by default) refuse a million jobs' events
    DAILY_INGEST_MB: '0',
    CONNECTION_MEMORY_MB: '0',
    SNAPSHOT_LOG_MB: '1000000',
    SNAPSHOT_INTERVAL_MINUTES: '1440',
    MAX_JOBS_PER_CONNECTION: String(Math.max(1_000_000, jobs * 2)),
  };
}

export interface LoadResult {
  jobs: number;
  events: number;
  ms: number;
}

/** Ingests `jobs` new jobs as fast as the service takes them; every event must be accepted. */
export async function loadJobs(session: Session, jobs: number, concurrency = 2, eventsPerBatch = 1000): Promise<LoadResult> {
  const generator = new JobGenerator(session.connectionId, jobs);
  const jobsPerBatch = jobsForEvents(eventsPerBatch);
  const started = performance.now();
  let nextReport = 0.1;
  const inFlight = new Set<Promise<void>>();
  const send = async (body: string, events: number): Promise<void> => {
    const response = await fetch(`${session.baseUrl}/api/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session.apiKey}` },
      body,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`load: ingest answered HTTP ${response.status}: ${text.slice(0, 500)}`);
    const reply = JSON.parse(text) as { accepted: number };
    if (reply.accepted !== events) throw new Error(`load: only ${reply.accepted} of ${events} events accepted: ${text.slice(0, 800)}`);
  };
  while (!generator.done) {
    const { body, events } = generator.nextBody(jobsPerBatch);
    const request = send(body, events).finally(() => inFlight.delete(request));
    inFlight.add(request);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (generator.jobsGenerated / jobs >= nextReport) {
      const seconds = (performance.now() - started) / 1000;
      note(`load: ${fmtCount(generator.jobsGenerated)} jobs (${fmtCount(generator.events)} events) in ${seconds.toFixed(1)} s, ${fmtCount(generator.events / seconds)} events/s`);
      nextReport += 0.1;
    }
  }
  await Promise.all(inFlight);
  return { jobs, events: generator.events, ms: performance.now() - started };
}

async function getJson<T>(session: Session, path: string): Promise<T> {
  const response = await fetch(`${session.baseUrl}${path}`, { headers: { cookie: session.cookie } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

interface JobPage {
  data: Array<{ id: string }>;
  pagination: { nextCursor: string | null; total: number };
}

/**
 * Reads that build every sorted index a restart left for later (the service builds them when
 * first read, or while idle): a list by each sort key, and a job's detail for the per-name
 * index. Memory "after a restart" must count them, as memory after loading does.
 */
export async function buildEveryIndex(session: Session): Promise<void> {
  for (const sortBy of JOB_SORT_KEYS) await getJson<JobPage>(session, `/api/jobs?limit=1&sortBy=${sortBy}`);
  const [first] = (await getJson<JobPage>(session, '/api/jobs?limit=1')).data;
  if (first !== undefined) await getJson<unknown>(session, `/api/jobs/${first.id}`);
}

export interface ReadScenario {
  label: string;
  path: string;
  /** paths to rotate through instead of `path` */
  paths?: string[];
  kind: 'list' | 'filter' | 'detail' | 'queues' | 'workers';
  /** for filters: matching jobs / all jobs */
  share?: number;
}

/** The scenarios, with their filters checked against the loaded data first. */
export async function readScenarios(session: Session): Promise<ReadScenario[]> {
  const all = await getJson<JobPage>(session, '/api/jobs?limit=1');
  const total = all.pagination.total;
  const scenarios: ReadScenario[] = [];
  for (const sortBy of JOB_SORT_KEYS) {
    for (const sortOrder of ['asc', 'desc'] as const) {
      scenarios.push({ label: `jobs sortBy=${sortBy} ${sortOrder}`, path: `/api/jobs?limit=50&sortBy=${sortBy}&sortOrder=${sortOrder}`, kind: 'list' });
    }
  }
  const searchPath = `/api/jobs?limit=50&search=${RARE_TASK_SEARCH}`;
  const comboPath = `/api/jobs?limit=50&state=${RARE_COMBINATION.state}&queue=${RARE_COMBINATION.queue}`;
  for (const [label, path] of [
    [`jobs search=${RARE_TASK_SEARCH}`, searchPath],
    [`jobs state=${RARE_COMBINATION.state}&queue=${RARE_COMBINATION.queue}`, comboPath],
  ] as const) {
    const page = await getJson<JobPage>(session, path);
    scenarios.push({ label, path, kind: 'filter', share: page.pagination.total / Math.max(1, total) });
  }
  const first = await getJson<JobPage>(session, '/api/jobs?limit=50&sortBy=createdAt&sortOrder=desc');
  if (first.pagination.nextCursor !== null) {
    scenarios.push({
      label: 'jobs createdAt desc, page 2 (cursor)',
      path: `/api/jobs?limit=50&sortBy=createdAt&sortOrder=desc&cursor=${encodeURIComponent(first.pagination.nextCursor)}`,
      kind: 'list',
    });
  }
  // job detail over ids from several parts of the data set
  const ids: string[] = [];
  for (const sortBy of ['createdAt', 'name', 'durationMs', 'worker'] as const) {
    for (const sortOrder of ['asc', 'desc'] as const) {
      const page = await getJson<JobPage>(session, `/api/jobs?limit=100&sortBy=${sortBy}&sortOrder=${sortOrder}`);
      ids.push(...page.data.map((job) => job.id));
    }
  }
  const uniqueIds = [...new Set(ids)];
  if (uniqueIds.length > 0) {
    scenarios.push({ label: `job detail (${uniqueIds.length} ids)`, path: `/api/jobs/${uniqueIds[0]}`, paths: uniqueIds.map((id) => `/api/jobs/${id}`), kind: 'detail' });
  }
  scenarios.push({ label: 'queues timeRange=24h', path: '/api/queues?timeRange=24h', kind: 'queues' });
  scenarios.push({ label: 'workers', path: '/api/workers', kind: 'workers' });
  return scenarios;
}

export interface ReadResult {
  scenario: ReadScenario;
  cannon: CannonResult;
}

export async function measureReads(
  session: Session,
  scenarios: readonly ReadScenario[],
  options: { connections: number; durationS: number; warmupS: number },
): Promise<ReadResult[]> {
  const results: ReadResult[] = [];
  for (const scenario of scenarios) {
    const paths = scenario.paths;
    let turn = 0;
    const cannon = await runCannon({
      label: scenario.label,
      url: session.baseUrl,
      path: scenario.path,
      headers: { cookie: session.cookie },
      ...(paths !== undefined ? { nextPath: () => paths[turn++ % paths.length]! } : {}),
      connections: options.connections,
      durationS: options.durationS,
      warmupS: options.warmupS,
    });
    results.push({ scenario, cannon });
  }
  return results;
}

export async function measureBaselineGet(baseUrl: string, options: { connections: number; durationS: number; warmupS: number }): Promise<CannonResult> {
  return runCannon({ label: 'baseline GET', url: baseUrl, path: '/api/health', ...options });
}

/** Resident memory once it has settled: the lowest of a few readings over `ms`. */
export async function settledRss(service: Service, ms = 3_000): Promise<number | null> {
  let lowest: number | null = null;
  for (let waited = 0; waited <= ms; waited += 500) {
    const rss = service.rssBytes();
    if (rss !== null && (lowest === null || rss < lowest)) lowest = rss;
    await sleep(500);
  }
  return lowest;
}

if (import.meta.main) {
  const args = parseArgs();
  const jobs = Math.round(num(args, 'jobs', 1_000_000));
  const options = { connections: num(args, 'connections', 4), durationS: num(args, 'duration', 3), warmupS: num(args, 'warmup', 0.5) };
  const profileDir = flag(args, 'profile') ? makeTempDir('jobwatch-prof-') : undefined;
  const service = await serviceFromEnv({ env: loadPhaseEnv(jobs), label: 'service', cpuProfDir: profileDir });
  const baseline = flag(args, 'no-baseline') ? null : await startBaseline();
  try {
    const rssEmpty = await settledRss(service, 1_000);
    note(`loading ${fmtCount(jobs)} jobs`);
    const load = await loadJobs(service, jobs, num(args, 'load-concurrency', 2));
    note(`loaded ${fmtCount(load.jobs)} jobs (${fmtCount(load.events)} events) in ${fmtMs(load.ms)}: ${fmtCount(load.events / (load.ms / 1000))} events/s`);
    const rssLoaded = await settledRss(service);
    const scenarios = await readScenarios(service);
    const results = await measureReads(service, scenarios, options);
    const ceiling = baseline === null ? null : await measureBaselineGet(baseline.baseUrl, options);
    const rows = results.map(({ scenario, cannon }) => [
      scenario.label + (scenario.share !== undefined ? ` (${(scenario.share * 100).toFixed(2)}% of jobs)` : ''),
      fmtCount(cannon.rps),
      fmtMs(cannon.p50),
      fmtMs(cannon.p99),
      fmtMs(cannon.max),
      ceiling === null ? '' : `${(cannon.p99 / ceiling.p99).toFixed(1)}x`,
    ]);
    if (ceiling !== null) rows.push(['baseline GET (Bun.serve, small JSON)', fmtCount(ceiling.rps), fmtMs(ceiling.p50), fmtMs(ceiling.p99), fmtMs(ceiling.max), '1.0x']);
    console.log(`${fmtCount(jobs)} jobs, ${options.connections} connections, ${options.durationS} s per scenario`);
    console.log(table(['scenario', 'req/s', 'p50', 'p99', 'max', 'p99 vs baseline'], rows));
    if (rssEmpty !== null && rssLoaded !== null) {
      console.log(`resident memory: empty ${fmtBytes(rssEmpty)}, with ${fmtCount(jobs)} jobs ${fmtBytes(rssLoaded)}: ${((rssLoaded - rssEmpty) / jobs).toFixed(0)} B per job`);
    }
  } finally {
    await baseline?.stop();
    await service.cleanup();
  }
  if (profileDir !== undefined) {
    const profile = newestProfile(profileDir);
    console.log(profile === null ? 'no CPU profile was written' : summarizeProfile(profile, num(args, 'top', 30)));
    removeTempDir(profileDir);
  }
}
