/**
 * Soak: the real service under a steady mixed load for a long time, to see that memory and
 * latency stay flat (no leak, no slow build-up) and that nothing fails along the way.
 *
 *   npm run soak                          # 10 minutes
 *   npx bun load/soak.ts --minutes 30
 *   npx bun load/soak.ts --quick          # 45 s with a 10 s warm-up: a quick check that it runs
 *
 * Every 100 ms it sends its share of: ingest (pre-built Celery batches, see events.ts),
 * reads (job list pages by several sorts and state filters, job detail, queues, workers),
 * actions (revoke an active job, retry a failed one: 409 for a job that moved on is
 * expected), and an agent poll + ack once a second. Dashboard streams stay open the whole
 * time, reading every event, and each reconnects with Last-Event-ID now and then (a
 * `reset` there is counted as a problem). Requests of a kind beyond 16 in flight are not
 * sent but counted. Every second it takes the service's RSS and each kind's p50/p99.
 * The service keeps at most --max-jobs jobs (MAX_JOBS_PER_CONNECTION) and --dedup-keys
 * duplicate-detection keys (DEDUP_KEYS_MAX), small enough that both are full within the
 * warm-up at the default rate: after it the data set stops growing, and so should memory
 * and the work per request.
 *
 * At the end it prints first third against last third after the warm-up, the rule it
 * applied, and every problem counted (network errors, 5xx, unexpected 4xx, streams ended
 * by the server, resets); the exit code is 1 when anything was not flat or went wrong.
 * Options: --minutes (10), --warmup seconds (60), --rate events/s (1000), --batch (100),
 * --reads per s (20), --actions per s (4), --streams (4), --reconnect seconds (15),
 * --max-jobs (10000), --dedup-keys (30000), --fsync (always), --trace (print every second), --quick.
 * Loopback only: it starts the service on 127.0.0.1 with a temporary data directory
 * (or attaches to BASE_URL, see service.ts; RSS is then not measured).
 */
import { buildTemplates, nextSequence, stamp, type Template } from './events.ts';
import { serviceFromEnv, type Service } from './service.ts';
import { SoakStreams } from './soak-streams.ts';
import { MachineSampler, SoakRecorder, verdict, type SecondSample } from './soak-stats.ts';
import { flag, fmtBytes, fmtCount, fmtMs, machineDescription, note, num, parseArgs, sleep, str } from './util.ts';

const TICK_MS = 100;
const IN_FLIGHT_MAX = 16;
const REQUEST_TIMEOUT_MS = 10_000;

interface SoakOptions {
  durationS: number;
  warmupS: number;
  eventsPerS: number;
  batch: number;
  readsPerS: number;
  actionsPerS: number;
  streams: number;
  reconnectS: number;
  maxJobs: number;
  dedupKeys: number;
  trace: boolean;
}

/** Fires requests of one kind at a steady rate, at most IN_FLIGHT_MAX at once. */
class Pacer {
  #owed = 0;
  #inFlight = 0;
  readonly #all = new Set<Promise<void>>();

  constructor(
    private readonly kind: string,
    private readonly perSecond: number,
    private readonly recorder: SoakRecorder,
    private readonly send: () => Promise<void>,
  ) {}

  tick(): void {
    this.#owed += (this.perSecond * TICK_MS) / 1000;
    for (; this.#owed >= 1; this.#owed -= 1) {
      if (this.#inFlight >= IN_FLIGHT_MAX) {
        this.recorder.problem(this.kind, 'not sent (too many in flight)');
        continue;
      }
      this.#inFlight++;
      const request = this.send().finally(() => {
        this.#inFlight--;
        this.#all.delete(request);
      });
      this.#all.add(request);
    }
  }

  async drain(): Promise<void> {
    await Promise.allSettled([...this.#all]);
  }
}

/** Ids seen in list pages, for detail reads and actions. */
class IdPool {
  #ids: string[] = [];
  #turn = 0;
  refill(ids: string[]): void {
    if (ids.length > 0) this.#ids = ids;
  }
  next(): string | undefined {
    return this.#ids.length === 0 ? undefined : this.#ids[this.#turn++ % this.#ids.length];
  }
}

/** One timed request; statuses in `expected` (besides 2xx) are not problems. */
async function timed(recorder: SoakRecorder, kind: string, url: string, init: RequestInit, expected: readonly number[] = []): Promise<string | null> {
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    recorder.record(kind, performance.now() - started, response.status);
    if (response.status >= 500) recorder.problem(kind, 'HTTP 5xx');
    else if (response.status >= 400 && !expected.includes(response.status)) recorder.problem(kind, 'unexpected HTTP 4xx');
    return response.ok ? text : null;
  } catch {
    recorder.record(kind, performance.now() - started, 0);
    recorder.problem(kind, 'network error or timeout');
    return null;
  }
}

function buildPacers(service: Service, options: SoakOptions, recorder: SoakRecorder): Pacer[] {
  const { baseUrl, cookie, apiKey, connectionId } = service;
  const dashboard = { cookie };
  const agent = { authorization: `Bearer ${apiKey}` };
  const templates: Template[] = buildTemplates({ connectionId, eventsPerBatch: options.batch, count: 64 });
  let nextTemplate = 0;
  const revocable = new IdPool();
  const retryable = new IdPool();
  const anyJob = new IdPool();
  const idsOf = (text: string | null): string[] => (text === null ? [] : (JSON.parse(text) as { data: { id: string }[] }).data.map((job) => job.id));
  const lists: Array<[string, IdPool]> = [
    ['/api/jobs?limit=50&sortBy=createdAt&sortOrder=desc', anyJob],
    ['/api/jobs?limit=50&sortBy=durationMs&sortOrder=desc', anyJob],
    ['/api/jobs?limit=50&sortBy=name&sortOrder=asc', anyJob],
    ['/api/jobs?limit=100&state=active', revocable],
    ['/api/jobs?limit=100&state=failed', retryable],
  ];
  let readTurn = 0;
  let actionTurn = 0;

  const ingest = async (): Promise<void> => {
    // a copy: stamp() writes into the shared template, which the next request reuses
    const body = Buffer.from(stamp(templates[nextTemplate++ % templates.length]!, nextSequence()));
    await timed(recorder, 'ingest', `${baseUrl}/api/ingest`, { method: 'POST', headers: { ...agent, 'content-type': 'application/json' }, body });
  };
  const read = async (): Promise<void> => {
    const turn = readTurn++ % (lists.length + 3);
    if (turn < lists.length) {
      const [path, pool] = lists[turn]!;
      pool.refill(idsOf(await timed(recorder, 'list', `${baseUrl}${path}`, { headers: dashboard })));
      return;
    }
    const detailId = anyJob.next();
    if (turn === lists.length && detailId !== undefined) {
      await timed(recorder, 'detail', `${baseUrl}/api/jobs/${detailId}`, { headers: dashboard }, [404]); // evicted meanwhile
    } else if (turn === lists.length + 1) {
      await timed(recorder, 'queues', `${baseUrl}/api/queues?timeRange=1h`, { headers: dashboard });
    } else {
      await timed(recorder, 'workers', `${baseUrl}/api/workers`, { headers: dashboard });
    }
  };
  const act = async (): Promise<void> => {
    const revoke = actionTurn++ % 2 === 0;
    const id = (revoke ? revocable : retryable).next();
    if (id === undefined) return;
    // 409: the job changed state since the list was read; 404: it was evicted
    await timed(recorder, 'action', `${baseUrl}/api/jobs/${id}/${revoke ? 'revoke' : 'retry'}`, { method: 'POST', headers: dashboard }, [404, 409]);
  };
  const pollAgent = async (): Promise<void> => {
    const text = await timed(recorder, 'agent', `${baseUrl}/api/agent/commands?limit=100`, { headers: agent });
    const ids = text === null ? [] : (JSON.parse(text) as { data: { id: string }[] }).data.map((command) => command.id);
    if (ids.length === 0) return;
    const body = JSON.stringify({ ids });
    await timed(recorder, 'agent', `${baseUrl}/api/agent/commands/ack`, { method: 'POST', headers: { ...agent, 'content-type': 'application/json' }, body });
  };
  return [
    new Pacer('ingest', options.eventsPerS / options.batch, recorder, ingest),
    new Pacer('read', options.readsPerS, recorder, read),
    new Pacer('action', options.actionsPerS, recorder, act),
    new Pacer('agent', 1, recorder, pollAgent),
  ];
}

function traceLine(sample: SecondSample): string {
  const kinds = Object.entries(sample.kinds)
    .map(([kind, k]) => `${kind} ${k.count} ${fmtMs(k.p50)}/${fmtMs(k.p99)}`)
    .join(', ');
  const cpu = sample.serviceCpuPercent === null ? 'n/a' : `${sample.serviceCpuPercent.toFixed(0)}%`;
  return `t=${sample.second}s rss ${fmtBytes(sample.rssBytes)} cpu ${cpu} load ${sample.loadAverage ?? 'n/a'} | ${kinds}`;
}

async function soak(service: Service, options: SoakOptions): Promise<boolean> {
  const recorder = new SoakRecorder();
  const pacers = buildPacers(service, options, recorder);
  const streams = new SoakStreams(service, recorder, options.streams);
  await streams.open();
  const machine = new MachineSampler(service.pid);
  const started = performance.now();
  const ticks = Math.round((options.durationS * 1000) / TICK_MS);
  const ticksPerSecond = 1000 / TICK_MS;
  const reconnectEveryTicks = Math.max(1, Math.round((options.reconnectS * ticksPerSecond) / Math.max(1, options.streams)));
  for (let tick = 1; tick <= ticks; tick++) {
    const wait = started + tick * TICK_MS - performance.now();
    if (wait > 0) await sleep(wait);
    for (const pacer of pacers) pacer.tick();
    if (tick % reconnectEveryTicks === 0) streams.reconnectNext();
    if (tick % ticksPerSecond !== 0) continue;
    const sample = recorder.sample(tick / ticksPerSecond, service.rssBytes(), machine.next());
    if (options.trace) console.log(traceLine(sample));
    else if (sample.second % 10 === 0) note(traceLine(sample));
  }
  await Promise.all(pacers.map((pacer) => pacer.drain()));
  await streams.close();
  const seriousLines = service.logs.filter((line) => /unhandled error|FATAL|live update failed|^\s+at /.test(line));
  for (let i = 0; i < seriousLines.length; i++) recorder.problem('service log', 'unhandled error, failure or stack trace');
  const result = verdict(recorder, options.warmupS);
  const statuses = [...recorder.statusCounts].sort().map(([key, count]) => `${key}: ${count}`).join(', ');
  console.log(`soak: ${options.durationS} s on ${machineDescription()}`);
  console.log(
    `load: ${fmtCount(options.eventsPerS)} events/s in batches of ${options.batch}, ${options.readsPerS} reads/s, ${options.actionsPerS} actions/s, ` +
      `1 agent poll/s, ${options.streams} streams (each resumes every ${options.reconnectS} s); ` +
      `at most ${fmtCount(options.maxJobs)} jobs and ${fmtCount(options.dedupKeys)} dedup keys kept`,
  );
  console.log(`streams: ${streams.summary()}`);
  console.log(`answers: ${statuses}`);
  console.log(`service log: ${service.logs.length} lines, ${seriousLines.length} with an unhandled error, a failure or a stack trace`);
  console.log(result.text);
  return result.flat && recorder.problems.size === 0;
}

if (import.meta.main) {
  const args = parseArgs();
  const quick = flag(args, 'quick');
  const options: SoakOptions = {
    durationS: Math.round(num(args, 'minutes', quick ? 0.75 : 10) * 60),
    warmupS: num(args, 'warmup', quick ? 10 : 60),
    eventsPerS: num(args, 'rate', 1000),
    batch: num(args, 'batch', 100),
    readsPerS: num(args, 'reads', 20),
    actionsPerS: num(args, 'actions', 4),
    streams: num(args, 'streams', 4),
    reconnectS: num(args, 'reconnect', 15),
    maxJobs: num(args, 'max-jobs', quick ? 3_000 : 10_000),
    dedupKeys: num(args, 'dedup-keys', quick ? 5_000 : 30_000),
    trace: flag(args, 'trace'),
  };
  if (options.durationS <= options.warmupS) throw new Error(`--minutes must leave time after the ${options.warmupS} s warm-up`);
  const env = {
    FSYNC: str(args, 'fsync', 'always'),
    DAILY_EVENT_LIMIT: '0',
    MAX_JOBS_PER_CONNECTION: String(options.maxJobs),
    DEDUP_KEYS_MAX: String(options.dedupKeys),
  };
  const service = await serviceFromEnv({ env, label: 'service' });
  let ok = false;
  try {
    ok = await soak(service, options);
  } finally {
    await service.cleanup();
  }
  process.exit(ok ? 0 : 1);
}
