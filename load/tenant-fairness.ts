/**
 * Fairness between tenants: what a second tenant's dashboard sees while three clients of
 * another tenant send 5 MB bodies, against the same measured without the flood in the
 * same run. The engine serves every connection on one event loop, so a request that holds
 * the loop holds everyone's; the target is p99 < 100 ms for the other tenant (50 ms under
 * the `string` flood). Then the same for alerts (alert-fairness.ts): how late the second
 * tenant's firing alert arrives, alone and while the first floods "send a test" to a
 * receiver that never answers.
 *
 *   npx bun load/tenant-fairness.ts              # 8 s per phase
 *   npx bun load/tenant-fairness.ts --quick      # 4 s per phase
 *   npx bun load/tenant-fairness.ts --duration 15 --floods nested,keys
 *   npx bun load/tenant-fairness.ts --floods string --no-alerts
 *
 * One service (temporary DATA_DIR, FSYNC=always, unlimited daily events). Tenant B (its
 * own user and connection, a few hundred jobs) reads on a fixed schedule: every 10 ms
 * GET /api/jobs?limit=50 with its session and GET /api/health, each timed from when it
 * was due (see readFor). Each phase reads for --duration seconds: first alone (the baseline), then while 3
 * senders of tenant A, each in a child process of this script (so their JSON work never
 * delays the reader; at the lowest CPU priority, so that they do not take the cores from
 * the service and the reader), send 5 MB bodies back to back with A's API key:
 *
 * - nested:  5 MB of nested arrays (refused: too deep)
 * - keys:    one event whose extensions hold 400,000 keys (refused: too many members)
 * - batch:   1,000 valid events of about 5 KB each (a stacktrace each), every one new
 * - widest:  75 valid events whose extensions are as wide as 64 KB allows (about 6,000 keys
 *            each): the heaviest parse the contract admits (the events are refused one by
 *            one for their extensions' size only if they exceed it; these do not)
 * - string:  one valid event and a 5 MB string beside the events array (refused: more than
 *            the envelope may carry), the shape whose walk held the loop 30-60 ms a body
 *
 * Printed: per phase and route the reader's p50/p99/max and requests done, the ratio of
 * p99 to the baseline's, the flood's answers by status, and the service's RSS at the end.
 */
import { alertRows, measureAlertFairness, type AlertPhase } from './alert-fairness.ts';
import { createConnection, login, startService } from './service.ts';
import { fmtBytes, fmtMs, machineDescription, note, num, parseArgs, percentiles, str, table, flag } from './util.ts';

const FLOOD_KINDS = ['nested', 'keys', 'batch', 'widest', 'string'] as const;
type FloodKind = (typeof FLOOD_KINDS)[number];
const SENDERS = 3;
const TARGET_P99_MS = 100;
/** a refused body should cost the others next to nothing */
const TARGET_P99_MS_BY_FLOOD: Partial<Record<FloodKind, number>> = { string: 50 };
const targetOf = (phase: string): number => TARGET_P99_MS_BY_FLOOD[phase.replace('flood: ', '') as FloodKind] ?? TARGET_P99_MS;

// ---------------------------------------------------------------------------------------
// bodies (built in the sender processes)

/** `@@@@@@@@` in a body is overwritten per request, so every batch is new (no duplicate is skipped). */
const PLACEHOLDER = '@@@@@@@@';

function floodBody(kind: FloodKind, connectionId: string): string {
  const timestamp = new Date().toISOString();
  const event = (index: number, job: Record<string, unknown>) => ({
    type: 'job_state_change',
    timestamp,
    framework: 'celery',
    connectionId,
    job: { externalId: `${PLACEHOLDER}-${index}`, name: 'tasks.flood', state: 'failed', queue: 'flood', ...job },
  });
  switch (kind) {
    case 'nested': {
      const depth = 2_600_000;
      return `{"events":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    }
    case 'keys': {
      const keys = Array.from({ length: 400_000 }, (_, k) => `"k${k}":1`).join(',');
      const head = JSON.stringify(event(0, {})).slice(0, -2); // without the job's and the event's closing braces
      return `{"events":[${head},"extensions":{${keys}}}}]}`;
    }
    case 'batch': {
      const stacktrace = 'Traceback (most recent call last):\n' + '  File "/app/tasks/flood.py", line 42, in run\n    raise FloodError(value)\n'.repeat(60);
      return JSON.stringify({ events: Array.from({ length: 1000 }, (_, i) => event(i, { error: 'FloodError: value', stacktrace })) });
    }
    case 'widest': {
      const extensions = Object.fromEntries(Array.from({ length: 6_000 }, (_, k) => [`k${k}`, 0]));
      return JSON.stringify({ events: Array.from({ length: 75 }, (_, i) => event(i, { extensions })) });
    }
    case 'string':
      return JSON.stringify({ events: [event(0, {})], note: 'x'.repeat(5_000_000) });
  }
}

/** A sender process: sends `kind` bodies back to back until `--until` (epoch ms), then prints its answers by status. */
async function runSender(args: ReturnType<typeof parseArgs>): Promise<void> {
  const kind = str(args, 'sender', '') as FloodKind;
  const baseUrl = str(args, 'url', '');
  const apiKey = str(args, 'key', '');
  const until = num(args, 'until', 0);
  const text = floodBody(kind, str(args, 'connection', ''));
  const template = new TextEncoder().encode(text);
  const marks: number[] = [];
  for (let at = text.indexOf(PLACEHOLDER); at >= 0; at = text.indexOf(PLACEHOLDER, at + 1)) marks.push(at); // ASCII up to here
  const statuses: Record<string, number> = {};
  let sequence = 0;
  while (Date.now() < until) {
    const stamp = new TextEncoder().encode(String(process.pid * 100_000 + sequence++).padStart(8, '0').slice(-8));
    for (const at of marks) template.set(stamp, at);
    let status: string;
    try {
      const response = await fetch(`${baseUrl}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: template,
        signal: AbortSignal.timeout(60_000),
      });
      await response.arrayBuffer();
      status = String(response.status);
    } catch (error) {
      status = (error as Error).name;
    }
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  process.stdout.write(`${JSON.stringify({ bytes: template.length, statuses })}\n`);
}

// ---------------------------------------------------------------------------------------
// the reader

interface Timings {
  jobs: number[];
  health: number[];
  errors: number;
}

/**
 * Open loop: a pair of requests every READ_INTERVAL_MS on a fixed schedule, each timed from
 * when it was due, whether or not the ones before it were answered. A reader that waited
 * for each answer would sample a 3-second stall once among thousands of fast answers, and
 * the p99 would not show it.
 */
const READ_INTERVAL_MS = 10;

async function readFor(baseUrl: string, cookie: string, durationMs: number): Promise<Timings> {
  const timings: Timings = { jobs: [], health: [], errors: 0 };
  const timed = async (path: string, headers: Record<string, string>, dueAt: number, into: number[]) => {
    try {
      const response = await fetch(`${baseUrl}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
      if (response.status !== 200) timings.errors++;
    } catch {
      timings.errors++;
    }
    into.push(performance.now() - dueAt);
  };
  const startedAt = performance.now();
  const pending: Promise<void>[] = [];
  for (let tick = 0; tick * READ_INTERVAL_MS < durationMs; tick++) {
    const dueAt = startedAt + tick * READ_INTERVAL_MS;
    const wait = dueAt - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    pending.push(timed('/api/jobs?limit=50', { cookie }, dueAt, timings.jobs), timed('/api/health', {}, dueAt, timings.health));
  }
  await Promise.all(pending);
  return timings;
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const args = parseArgs();
  if (typeof args.sender === 'string') return runSender(args);
  const durationMs = num(args, 'duration', flag(args, 'quick') ? 4 : 8) * 1000;
  const kinds = str(args, 'floods', FLOOD_KINDS.join(','))
    .split(',')
    .map((each) => each.trim())
    .filter((each): each is FloodKind => (FLOOD_KINDS as readonly string[]).includes(each));

  const alertsToo = !flag(args, 'no-alerts');
  // alerts: evaluated every second, and the receivers are on loopback
  const service = await startService({ env: { FSYNC: 'always', DAILY_EVENT_LIMIT: '0', ALERT_EVAL_SECONDS: '1', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true' }, label: 'fairness' });
  note(`service pid ${service.pid} on ${service.baseUrl}; ${machineDescription()}`);
  const rows: Row[] = [];
  const floods: string[] = [];
  let alertPhases: AlertPhase[] = [];
  try {
    const { cookieB, connectionB } = await seedTenantB(service.baseUrl, service.cookie);
    await readFor(service.baseUrl, cookieB, 500); // warm-up

    const phase = async (name: string, flood: FloodKind | null): Promise<void> => {
      note(`phase ${name}: ${durationMs / 1000} s`);
      const senders = flood === null ? [] : Array.from({ length: SENDERS }, () => spawnSender(flood, service.baseUrl, service.apiKey, service.connectionId, Date.now() + durationMs + 1_000));
      if (flood !== null) await Bun.sleep(1_000); // the senders built their bodies and are sending
      const timings = await readFor(service.baseUrl, cookieB, durationMs);
      const answers = await Promise.all(senders);
      const rss = service.rssBytes();
      for (const route of ['jobs', 'health'] as const) {
        const [p50, p99] = percentiles(timings[route], [50, 99]);
        const max = Math.max(...timings[route]);
        rows.push({ phase: name, route: route === 'jobs' ? 'GET /api/jobs' : 'GET /api/health', requests: timings[route].length, p50: p50!, p99: p99!, max, rss: route === 'jobs' ? rss : null });
      }
      if (timings.errors > 0) floods.push(`${name}: ${timings.errors} of tenant B's requests failed`);
      if (flood !== null) {
        const statuses: Record<string, number> = {};
        for (const answer of answers) for (const [status, count] of Object.entries(answer.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
        floods.push(`${name}: ${SENDERS} senders of ${fmtBytes(answers[0]?.bytes ?? 0)} bodies, answers ${Object.entries(statuses).map(([s, c]) => `${s} x${c}`).join(', ')}`);
      }
    };
    await phase('baseline (no flood)', null);
    for (const kind of kinds) await phase(`flood: ${kind}`, kind);
    if (alertsToo) alertPhases = await measureAlertFairness({ baseUrl: service.baseUrl, cookie: service.cookie }, { baseUrl: service.baseUrl, cookie: cookieB, ...connectionB });
  } finally {
    await service.cleanup();
  }

  printReport(rows, floods, alertPhases, durationMs);
}

/** Tenant B: its own user, connection and 500 finished jobs, whose reads the floods must not slow. */
async function seedTenantB(baseUrl: string, adminCookie: string): Promise<{ cookieB: string; connectionB: Awaited<ReturnType<typeof createConnection>> }> {
  const userB = { email: 'tenant-b@example.com', password: 'tenant-b-password-1234' };
  const created = await fetch(`${baseUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: adminCookie },
    body: JSON.stringify(userB),
  });
  if (created.status !== 201) throw new Error(`creating tenant B's user: ${created.status} ${await created.text()}`);
  const cookieB = await login(baseUrl, userB.email, userB.password);
  const connectionB = await createConnection(baseUrl, cookieB, 'tenant-b');
  const seeded = await fetch(`${baseUrl}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${connectionB.apiKey}` },
    body: JSON.stringify({
      events: Array.from({ length: 500 }, (_, i) => ({
        type: 'job_state_change',
        timestamp: new Date().toISOString(),
        framework: 'celery',
        connectionId: connectionB.connectionId,
        job: { externalId: `b-${i}`, name: 'tasks.tenant_b', state: 'completed', queue: 'default' },
      })),
    }),
  });
  if (seeded.status !== 200) throw new Error(`seeding tenant B: ${seeded.status} ${await seeded.text()}`);
  return { cookieB, connectionB };
}

type Row = { phase: string; route: string; requests: number; p50: number; p99: number; max: number; rss: number | null };

/** The table of tenant B's reads per phase against the baseline of the same run, then the alert delays. */
function printReport(rows: Row[], floods: string[], alertPhases: AlertPhase[], durationMs: number): void {
  const baselineP99 = new Map(rows.filter((row) => row.phase.startsWith('baseline')).map((row) => [row.route, row.p99]));
  const lines = rows.map((row) => {
    const baseline = row.phase.startsWith('baseline');
    return [
      row.phase,
      row.route,
      String(row.requests),
      fmtMs(row.p50),
      fmtMs(row.p99),
      fmtMs(row.max),
      baseline ? '' : `${(row.p99 / baselineP99.get(row.route)!).toFixed(1)}x`,
      baseline ? '' : `${row.p99 < targetOf(row.phase) ? 'met' : 'NOT met'} (< ${targetOf(row.phase)} ms)`,
      row.rss === null ? '' : fmtBytes(row.rss),
    ];
  });
  console.log(`\ntenant fairness: tenant B's reads while ${SENDERS} clients of tenant A send 5 MB bodies (${durationMs / 1000} s per phase)`);
  console.log(`machine: ${machineDescription()} (shared with other work: the ratios to the baseline of the same run are the comparable figures)\n`);
  console.log(table(['phase', 'route', 'requests', 'p50', 'p99', 'max', 'p99 vs baseline', 'target', 'service RSS'], lines));
  console.log('');
  for (const line of floods) console.log(line);
  if (alertPhases.length > 0) {
    console.log(`\ntenant B's firing alert, from the ingest that fires it to its receiver (ALERT_EVAL_SECONDS=1: up to 1 s is the wait for the evaluation)\n`);
    console.log(table(["tenant A's sends", 'alerts', 'delay p50', 'delay max', 'never came (60 s)', "A's test answers"], alertRows(alertPhases)));
  }
}

function spawnSender(kind: FloodKind, baseUrl: string, apiKey: string, connectionId: string, until: number): Promise<{ bytes: number; statuses: Record<string, number> }> {
  // at the lowest CPU priority: on a small machine three busy senders would otherwise take the
  // cores from the service and the reader, and the figure would measure that instead of the service
  const child = Bun.spawn(['nice', '-n', '19', process.execPath, import.meta.path, '--sender', kind, '--url', baseUrl, '--key', apiKey, '--connection', connectionId, '--until', String(until)], {
    stdout: 'pipe',
    stderr: 'inherit',
  });
  return new Response(child.stdout).text().then((text) => {
    try {
      return JSON.parse(text.trim().split('\n').pop() ?? '') as { bytes: number; statuses: Record<string, number> };
    } catch {
      return { bytes: 0, statuses: { 'sender failed': 1 } };
    }
  });
}

await main();
