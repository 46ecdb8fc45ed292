/**
 * What metrics cost on the ingest path, measured in one process where a shared machine's
 * noise hurts least: two copies of the service's app (src/app.ts, each on its own
 * temporary data directory), one with metrics (as with METRICS_TOKEN set) and one without,
 * fed the same realistic bodies (load/events.ts) through `app.handle` in alternating
 * blocks, so a burst of load elsewhere hits both sides alike. No HTTP and no load
 * generator run beside it. Which side is built first shifts the result by a percent or
 * two (heap layout, JIT), so it runs both orders. Prints each side's median time per
 * request, the median of the paired block ratios per order and their mean, and what the
 * observer calls alone cost per request.
 *
 *   npx bun load/metrics-cost.ts [--batch 100] [--blocks 60] [--block 20] [--fsync no]
 */
import { ManualClock } from '../actors/clock.ts';
import { AccountService } from '../actors/services/account-service.ts';
import { ConnectionService } from '../actors/services/connection-service.ts';
import { JobActionService } from '../actors/services/job-action-service.ts';
import { LiveUpdates } from '../actors/live/live-updates.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { LIVE_UPDATES_DEFAULTS } from '../src/live-defaults.ts';
import { ServiceMetrics } from '../src/metrics/service-metrics.ts';
import { AlertService } from '../actors/services/alert-service.ts';
import { TaskMetricsService } from '../actors/services/task-metrics-service.ts';
import { createAlertEdge } from '../src/alerts/alert-edge.ts';
import { NOT_OBSERVED, type ServiceObserver } from '../src/metrics/service-observer.ts';
import { openEngine } from '../src/open-engine.ts';
import { buildTemplates, nextSequence, stamp } from './events.ts';
import { makeTempDir, removeTempDir } from './service.ts';
import { fmtMs, num, parseArgs, str } from './util.ts';
import { TeamService } from '../actors/services/team-service.ts';
import { UserService } from '../actors/services/user-service.ts';
import { AuditService } from '../actors/services/audit-service.ts';
import { Access } from '../actors/accounts/access.ts';

const args = parseArgs();
const batch = num(args, 'batch', 100);
const blocks = num(args, 'blocks', 60);
const perBlock = num(args, 'block', 20);
const fsync = str(args, 'fsync', 'no');

async function side(withMetrics: boolean) {
  const dir = makeTempDir('metrics-cost');
  const config = loadConfig({ DATA_DIR: dir, FSYNC: fsync, DAILY_EVENT_LIMIT: '0', DAILY_INGEST_MB: '0', ADMIN_PASSWORD: 'a-long-enough-password' });
  const metrics = withMetrics ? { service: new ServiceMetrics(), token: 'cost-measurement-token' } : undefined;
  const opened = await openEngine(config, { log: () => {}, logObserver: metrics?.service });
  const { engine } = opened;
  const accounts = new AccountService(engine, config.sessionTtlMs, opened.sessionSecret);
  const connections = new ConnectionService(engine);
  const live = new LiveUpdates(engine, new ManualClock(Date.now()), {
    ...LIVE_UPDATES_DEFAULTS,
    hub: { ...LIVE_UPDATES_DEFAULTS.hub, ringBufferBytesMax: config.streamResumeBufferBytesMax },
    streamsPerUserMax: 1,
    resumeGraceMs: 0,
  });
  const alerts = new AlertService(engine);
  const teams = new TeamService(engine);
  const app = createApp({
    engine, accounts, connections, teams, users: new UserService(engine, config.passwordLinkTtlMs), audit: new AuditService(engine), live, config, metrics, alerts,
    alertDelivery: createAlertEdge({ engine, alerts, config, observer: NOT_OBSERVED, log: () => {} }),
    jobActions: new JobActionService(engine, connections),
    taskMetrics: new TaskMetricsService(engine, connections),
    logError: (line) => console.error(line),
    backup: () => Promise.reject(new Error('no backups here')),
  });
  const admin = (await accounts.ensureAdmin('ops@example.test', config.adminPassword))!;
  await teams.createFirstTeam(admin.id, 'cost');
  const user = engine.accounts.userByEmail(admin.email)!;
  const { connection, apiKey } = await connections.create(new Access(user, engine.accounts), 'cost', undefined);
  const templates = buildTemplates({ connectionId: connection.id, eventsPerBatch: batch, count: 32, seed: 5 });
  const send = async (): Promise<void> => {
    const body = stamp(templates[nextSequence() % templates.length]!, nextSequence());
    const response = await app.handle(
      new Request('http://localhost/api/ingest', { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body }),
    );
    if (response.status !== 200) throw new Error(`ingest answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const close = async () => {
    live.close();
    await opened.close();
    removeTempDir(dir);
  };
  return { send, close };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The calls one ingest request adds with metrics on: its answer, one group commit, one sync. */
function observerNsPerRequest(observer: ServiceObserver, n: number): number {
  const reply = { accepted: batch - 2, rejected: 1, skipped: 1, truncated: 0 };
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    observer.ingestAnswered(performance.now(), reply);
    observer.batchWritten(1, 400 * batch, 0.2);
    observer.synced(1.5);
  }
  return ((performance.now() - started) / n) * 1e6;
}

/** Paired blocks on two fresh sides; which side is built first shifts the result by a percent or two, so both orders run. */
async function pairedRun(offFirst: boolean): Promise<{ offMs: number; onMs: number; ratio: number }> {
  const off = offFirst ? await side(false) : undefined;
  const on = await side(true);
  const offSide = off ?? (await side(false));
  for (let i = 0; i < perBlock * 2; i++) await Promise.all([offSide.send(), on.send()]); // warm-up
  const timeBlock = async (target: typeof on): Promise<number> => {
    const started = performance.now();
    for (let i = 0; i < perBlock; i++) await target.send();
    return (performance.now() - started) / perBlock;
  };
  const timesOff: number[] = [];
  const timesOn: number[] = [];
  const ratios: number[] = [];
  for (let block = 0; block < blocks; block++) {
    // alternate which side goes first, so neither always runs right after the other
    for (const target of block % 2 === 0 ? [offSide, on] : [on, offSide]) (target === offSide ? timesOff : timesOn).push(await timeBlock(target));
    ratios.push(timesOn.at(-1)! / timesOff.at(-1)!);
  }
  await offSide.close();
  await on.close();
  return { offMs: median(timesOff), onMs: median(timesOn), ratio: median(ratios) };
}

console.log(`batch ${batch}, ${blocks} blocks of ${perBlock} requests per side, FSYNC=${fsync}`);
const runs = [await pairedRun(true), await pairedRun(false)];
for (const [index, run] of runs.entries()) {
  console.log(
    `${index === 0 ? 'off side built first' : 'on side built first '}: off ${fmtMs(run.offMs)}, on ${fmtMs(run.onMs)} per request (medians); ` +
      `on / off, median of paired blocks: ${(run.ratio * 100 - 100).toFixed(2)}%, of the medians: ${((run.onMs / run.offMs) * 100 - 100).toFixed(2)}%`,
  );
}
console.log(`on / off, mean of both orders: ${(((runs[0]!.ratio + runs[1]!.ratio) / 2) * 100 - 100).toFixed(2)}%`);
const observerOn = median([0, 1, 2].map(() => observerNsPerRequest(new ServiceMetrics(), 200_000)));
const observerOff = median([0, 1, 2].map(() => observerNsPerRequest(NOT_OBSERVED, 200_000)));
const offMedian = (runs[0]!.offMs + runs[1]!.offMs) / 2;
console.log(
  `observer calls alone: ${observerOn.toFixed(0)} ns per request with metrics, ${observerOff.toFixed(0)} ns without ` +
    `= ${(((observerOn - observerOff) / 1e6 / offMedian) * 100).toFixed(3)}% of a request`,
);
process.exit(0);
