/**
 * Scale-out: what more shards carry. For each shard count a fresh service (WORKERS=n,
 * FSYNC=always, DAILY_EVENT_LIMIT=0) gets many connections, as many on each shard, one
 * sender of 1,000-event bodies per connection, all at once; events/s beside the same run's
 * 1 shard (WORKERS=1, one thread, as before shards), and the CPU the HTTP thread (the
 * process's main thread, which routes every request to its shard) spends per 1,000 events.
 *
 *   npx bun load/scaling.ts                          # 1, 2 and 4 shards (what `npm run bench` runs)
 *   npx bun load/scaling.ts --shards 1,2,4,8,16 --generators 4
 *   npx bun load/scaling.ts --quick                  # shorter runs
 *   npx bun load/scaling.ts --one-connection         # also one connection at 1 shard and at the most shards
 *
 * The load generator runs on the same machine: --generators n spreads the senders over n
 * processes of this script (default: a quarter of the cores, at least 1), so it does not
 * become the bound on a big machine. Options: --shards list, --connections n per run
 * (default 2 x the most shards, at least 16), --duration s (default 10; --quick 5), --warmup s
 * (default 5; --quick 3: each shard's thread compiles its hot code for itself, so a run with
 * more shards needs the longer warm-up), --generators n. Targets: 2 shards >= 1.6x of 1 (a 2-core machine,
 * the generator included), 8 shards >= 6x of 1 (16 cores), the HTTP thread under 2 ms of
 * CPU per 1,000 routed events, one connection's rate >= 0.9x of 1 shard's.
 */
import { cpus } from 'node:os';
import { runCannon, type CannonResult } from './cannon.ts';
import { nextSequence, stamp } from './events.ts';
import { templatesFor } from './ingest.ts';
import { LOAD_ADMIN, cpuMsOfPid, createConnection, deleteConnection, login, startService, type Service } from './service.ts';
import { flag, fmtCount, fmtMs, machineDescription, note, num, parseArgs, str, table } from './util.ts';
import { shardOf } from '../src/shards/shard-runtime.ts';

const BATCH = 1000;

export interface ScalingTarget {
  baseUrl: string;
  apiKey: string;
  connectionId: string;
}

export interface ScalingRun {
  shards: number;
  connections: number;
  eventsPerS: number;
  p50: number;
  p99: number;
  failed: number;
  /** CPU of the process's main thread (the HTTP thread) per 1,000 events answered; with 1 shard it does everything */
  httpThreadCpuMsPer1000: number | null;
  /** CPU of the whole process per 1,000 events answered */
  processCpuMsPer1000: number | null;
}

export interface ScalingOptions {
  shards: number[];
  connections: number;
  durationS: number;
  warmupS: number;
  generators: number;
  /** a run with one connection at each of these shard counts too */
  oneConnectionAt?: number[];
}

interface SenderResult {
  eventsPerS: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
}

/** One sender (autocannon, one socket) per target, all at once, for `durationS`. */
async function sendAll(targets: ScalingTarget[], durationS: number): Promise<SenderResult[]> {
  const results = await Promise.all(
    targets.map((target) => {
      const templates = templatesFor(target.connectionId, BATCH);
      let turn = 0;
      return runCannon({
        label: `scaling ${target.connectionId}`,
        url: target.baseUrl,
        method: 'POST',
        path: '/api/ingest',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
        nextBody: () => stamp(templates[turn++ % templates.length]!, nextSequence()),
        connections: 1,
        durationS,
      });
    }),
  );
  return results.map((result: CannonResult) => ({ eventsPerS: result.rps * BATCH, p50: result.p50, p99: result.p99, ok: result.ok, failed: result.non2xx + result.errors }));
}

/** The senders split over `generators` processes of this script (one: this process). */
async function generate(targets: ScalingTarget[], durationS: number, generators: number): Promise<SenderResult[]> {
  if (generators <= 1) return sendAll(targets, durationS);
  const groups = Array.from({ length: generators }, (_, g) => targets.filter((_, i) => i % generators === g)).filter((group) => group.length > 0);
  const children = groups.map((group) =>
    Bun.spawn([process.execPath, import.meta.path, '--send', JSON.stringify({ targets: group, durationS })], { stdout: 'pipe', stderr: 'inherit' }),
  );
  const outputs = await Promise.all(children.map(async (child) => ({ text: await new Response(child.stdout).text(), code: await child.exited })));
  return outputs.flatMap(({ text, code }) => {
    if (code !== 0) throw new Error(`a load generator exited with code ${code}`);
    return JSON.parse(text.trim().split('\n').at(-1)!) as SenderResult[];
  });
}

/**
 * `count` connections, as many on each shard as can be (connections are spread by the hash
 * of their id: one made for a shard that has its share is deleted again, so that the run
 * measures what the shards carry, not how evenly a handful of random ids fell, and the
 * team stays within its 100 connections).
 */
async function targetsOn(service: Service, count: number, shards: number): Promise<ScalingTarget[]> {
  const cookie = await login(service.baseUrl, LOAD_ADMIN.email, LOAD_ADMIN.password);
  const share = Array.from({ length: shards }, (_, index) => Math.floor(count / shards) + (index < count % shards ? 1 : 0));
  const targets: ScalingTarget[] = [];
  for (let made = 0; targets.length < count; made++) {
    if (made > 50 * count) throw new Error(`could not spread ${count} connections over ${shards} shards`);
    const connection = await createConnection(service.baseUrl, cookie, `scaling-${made}`);
    const shard = shardOf(connection.connectionId, shards);
    if (share[shard]! === 0) {
      await deleteConnection(service.baseUrl, cookie, connection.connectionId);
      continue;
    }
    share[shard]! -= 1;
    targets.push({ baseUrl: service.baseUrl, ...connection });
  }
  return targets;
}

async function measureRun(shards: number, connections: number, options: ScalingOptions): Promise<ScalingRun> {
  const service = await startService({ env: { WORKERS: String(shards), FSYNC: 'always', DAILY_EVENT_LIMIT: '0' }, label: `scaling-${shards}`, noSession: true });
  try {
    const targets = await targetsOn(service, connections, shards);
    note(`${shards} shard(s), ${connections} connection(s), one sender each: ${options.warmupS} s warm-up, then ${options.durationS} s`);
    if (options.warmupS > 0) await generate(targets, options.warmupS, options.generators);
    const pid = service.pid!;
    const mainBefore = cpuMsOfPid(pid, String(pid));
    const processBefore = cpuMsOfPid(pid);
    const results = await generate(targets, options.durationS, options.generators);
    const mainAfter = cpuMsOfPid(pid, String(pid));
    const processAfter = cpuMsOfPid(pid);
    const events = results.reduce((sum, result) => sum + result.ok, 0) * BATCH;
    const perThousand = (before: number | null, after: number | null): number | null => (before === null || after === null || events === 0 ? null : ((after - before) * 1000) / events);
    const ok = results.reduce((sum, result) => sum + result.ok, 0);
    const run: ScalingRun = {
      shards,
      connections,
      eventsPerS: results.reduce((sum, result) => sum + result.eventsPerS, 0),
      p50: results.reduce((sum, result) => sum + result.p50 * result.ok, 0) / Math.max(1, ok),
      p99: Math.max(...results.map((result) => result.p99)),
      failed: results.reduce((sum, result) => sum + result.failed, 0),
      httpThreadCpuMsPer1000: perThousand(mainBefore, mainAfter),
      processCpuMsPer1000: perThousand(processBefore, processAfter),
    };
    note(`  ${fmtCount(run.eventsPerS)} events/s, p99 ${fmtMs(run.p99)}, HTTP thread ${fmtMs(run.httpThreadCpuMsPer1000)} CPU per 1k events`);
    return run;
  } finally {
    await service.cleanup();
  }
}

export async function measureScaling(options: ScalingOptions): Promise<{ many: ScalingRun[]; one: ScalingRun[] }> {
  const many: ScalingRun[] = [];
  for (const shards of options.shards) many.push(await measureRun(shards, options.connections, options));
  const one: ScalingRun[] = [];
  for (const shards of options.oneConnectionAt ?? []) one.push(await measureRun(shards, 1, options));
  return { many, one };
}

/** The rows `npm run bench` and this script print: figure, service, baseline (1 shard), ratio, target, result, detail. */
export function scalingRows({ many, one }: { many: ScalingRun[]; one: ScalingRun[] }, cores: number): string[][] {
  const base = many.find((run) => run.shards === 1);
  const rows: string[][] = [];
  const verdict = (met: boolean | null): string => (met === null ? '' : met ? 'met' : 'NOT MET');
  for (const run of many) {
    const ratio = base === undefined || base.eventsPerS === 0 ? null : run.eventsPerS / base.eventsPerS;
    const target = run.shards === 2 && cores <= 4 ? '>= 1.6x' : run.shards === 8 && cores >= 16 ? '>= 6x' : '';
    const met = target === '' || ratio === null ? null : ratio >= (run.shards === 2 ? 1.6 : 6);
    rows.push([
      `ingest, ${run.shards} shard${run.shards === 1 ? ' (one thread)' : 's'}, ${run.connections} connections: events/s`,
      fmtCount(run.eventsPerS),
      base === undefined ? '' : fmtCount(base.eventsPerS),
      ratio === null ? '' : `${ratio.toFixed(2)}x`,
      target,
      verdict(met),
      `p50 ${fmtMs(run.p50)}, p99 ${fmtMs(run.p99)}; process CPU per 1k events ${fmtMs(run.processCpuMsPer1000)}${run.failed > 0 ? `; ${run.failed} failed` : ''}`,
    ]);
  }
  for (const run of many.filter((each) => each.shards > 1)) {
    rows.push([
      `HTTP thread CPU per 1,000 routed events, ${run.shards} shards`,
      fmtMs(run.httpThreadCpuMsPer1000),
      base === undefined ? '' : fmtMs(base.httpThreadCpuMsPer1000),
      '',
      '< 2 ms',
      verdict(run.httpThreadCpuMsPer1000 === null ? null : run.httpThreadCpuMsPer1000 < 2),
      'the main thread: HTTP, routing, the accounts, the live hubs; baseline: the one thread of 1 shard doing everything',
    ]);
  }
  const oneBase = one.find((run) => run.shards === 1);
  for (const run of one.filter((each) => each.shards > 1)) {
    const ratio = oneBase === undefined || oneBase.eventsPerS === 0 ? null : run.eventsPerS / oneBase.eventsPerS;
    rows.push([
      `ingest, one connection, ${run.shards} shards: events/s`,
      fmtCount(run.eventsPerS),
      oneBase === undefined ? '' : fmtCount(oneBase.eventsPerS),
      ratio === null ? '' : `${ratio.toFixed(2)}x`,
      '>= 0.9x',
      verdict(ratio === null ? null : ratio >= 0.9),
      `a connection is bounded by its shard; p99 ${fmtMs(run.p99)}`,
    ]);
  }
  return rows;
}

export const SCALING_HEADER = ['figure', 'service', 'baseline', 'ratio', 'target', 'result', 'detail'];

if (import.meta.main) {
  const args = parseArgs();
  const sending = str(args, 'send', '');
  if (sending !== '') {
    // a load generator process of this script: send, print the results as one JSON line
    const { targets, durationS } = JSON.parse(sending) as { targets: ScalingTarget[]; durationS: number };
    console.log(JSON.stringify(await sendAll(targets, durationS)));
    process.exit(0);
  }
  const quick = flag(args, 'quick');
  const shards = str(args, 'shards', '1,2,4')
    .split(',')
    .map((each) => Number(each.trim()))
    .filter((each) => Number.isInteger(each) && each >= 1);
  if (!shards.includes(1)) shards.unshift(1);
  const most = Math.max(...shards);
  const options: ScalingOptions = {
    shards,
    connections: num(args, 'connections', Math.max(16, 2 * most)),
    durationS: num(args, 'duration', quick ? 5 : 10),
    warmupS: num(args, 'warmup', quick ? 3 : 5),
    generators: num(args, 'generators', Math.max(1, Math.floor(cpus().length / 4))),
    oneConnectionAt: flag(args, 'one-connection') ? [1, most] : [],
  };
  const startedAt = new Date();
  const measured = await measureScaling(options);
  console.log(`jobwatch scale-out, ${startedAt.toISOString()}`);
  console.log(`machine: ${machineDescription()}`);
  console.log(
    `settings: shards ${shards.join(', ')}; ${options.connections} connections, one sender of ${BATCH}-event bodies each; ${options.durationS} s after ${options.warmupS} s warm-up; ` +
      `${options.generators} load generator process(es) on the same machine; FSYNC=always`,
  );
  console.log('');
  console.log(table(SCALING_HEADER, scalingRows(measured, cpus().length)));
  process.exit(0);
}
