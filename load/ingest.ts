/**
 * Ingest throughput: autocannon against POST /api/ingest with pre-built, per-request
 * unique bodies (see events.ts), beside the JSON.parse-only baseline.
 *
 *   npx bun load/ingest.ts --batch 1000 --connections 8 --duration 10
 *   npx bun load/ingest.ts --batch 1,100,1000 --fsync always --no-baseline
 *   BASE_URL=http://127.0.0.1:3000 ADMIN_EMAIL=... ADMIN_PASSWORD=... npx bun load/ingest.ts
 *
 * Options: --batch (events per request; a comma list runs each), --connections (default 4),
 * --duration seconds (default 10), --warmup seconds (default 2), --fsync always|everysec|no
 * (default always; only for a service this script starts), --no-baseline, --profile (run the
 * service under `bun --cpu-prof` and print its top functions by self time; with --inclusive,
 * by total time, callees included).
 * A started service runs with DAILY_EVENT_LIMIT=0 so that the quota never answers 429.
 * Prints requests/s, events/s and latency p50/p99/max per batch size, and the service's own
 * timings line (work per request, wait for durability, group commits, event-loop stalls).
 * The tail case is `--batch 1000 --connections 8`.
 */
import { runCannon, type CannonResult } from './cannon.ts';
import { averageBytes, buildTemplates, nextSequence, stamp, type Template } from './events.ts';
import { startBaseline } from './baseline.ts';
import { newestProfile, summarizeProfile } from './profile.ts';
import { cpuMsByThreadKind, cpuMsOfPid, makeTempDir, removeTempDir, serviceFromEnv, type Session, type ThreadKind } from './service.ts';
import { flag, fmtBytes, fmtCount, fmtMs, note, num, parseArgs, str, table } from './util.ts';

export interface IngestResult {
  label: string;
  batch: number;
  connections: number;
  bodyBytes: number;
  cannon: CannonResult;
  eventsPerS: number;
  /** events the service counted as accepted during the run (null for the baseline) */
  serverAccepted: number | null;
  /** CPU ms the server process used per 1,000 events answered in the timed run (null without a pid) */
  cpuMsPer1000: number | null;
  /** the server's CPU ms in the timed run by kind of thread (JavaScript, JIT, GC helpers, thread pool) */
  cpuByThread: Record<ThreadKind, number> | null;
}

/** "js 5.1 s, jit 1.2 s, ..." with each kind's share of the process's CPU. */
export function describeThreadCpu(byKind: Record<ThreadKind, number>): string {
  const total = Object.values(byKind).reduce((sum, ms) => sum + ms, 0);
  return (Object.entries(byKind) as Array<[ThreadKind, number]>)
    .filter(([, ms]) => ms > 0)
    .map(([kind, ms]) => `${kind} ${fmtMs(ms)} (${((100 * ms) / Math.max(1, total)).toFixed(0)}%)`)
    .join(', ');
}

export interface IngestTarget {
  baseUrl: string;
  apiKey: string;
  connectionId: string;
  cookie?: string;
  /** the server's process, for its CPU time */
  pid?: number | null;
}

const templateCache = new Map<string, Template[]>();

/** Bodies for a batch size, built once per connection (building 1,000-event bodies takes a moment). */
export function templatesFor(connectionId: string, batch: number): Template[] {
  const key = `${connectionId}/${batch}`;
  let templates = templateCache.get(key);
  if (templates === undefined) {
    const count = batch >= 1000 ? 24 : batch >= 100 ? 128 : 1024;
    templates = buildTemplates({ connectionId, eventsPerBatch: batch, count, seed: batch * 31 + 1 });
    templateCache.set(key, templates);
  }
  return templates;
}

async function acceptedSoFar(target: IngestTarget): Promise<number | null> {
  if (target.cookie === undefined) return null;
  const response = await fetch(`${target.baseUrl}/api/connections`, { headers: { cookie: target.cookie } });
  if (!response.ok) return null;
  const body = (await response.json()) as { data: Array<{ id: string; usage: { used: number } }> };
  return body.data.find((c) => c.id === target.connectionId)?.usage.used ?? null;
}

/** One ingest measurement. `templates` decide the batch size; the connectionId in them must match the key's. */
export async function measureIngest(
  target: IngestTarget,
  options: { label: string; batch: number; connections: number; durationS: number; warmupS: number; templates?: Template[] },
): Promise<IngestResult> {
  const templates = options.templates ?? templatesFor(target.connectionId, options.batch);
  // one checked request first: every event must be accepted, none skipped as a duplicate
  const check = await fetch(`${target.baseUrl}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
    body: stamp(templates[0]!, nextSequence()),
  });
  const checkText = await check.text();
  if (!check.ok) throw new Error(`${options.label}: ingest answered HTTP ${check.status}: ${checkText.slice(0, 500)}`);
  const reply = JSON.parse(checkText) as { accepted: number; rejected?: number; skipped?: number };
  if (reply.accepted !== templates[0]!.events) {
    throw new Error(`${options.label}: a ${templates[0]!.events}-event body was not fully accepted: ${checkText.slice(0, 800)}`);
  }
  let turn = 0;
  const settings = {
    label: options.label,
    url: target.baseUrl,
    method: 'POST' as const,
    path: '/api/ingest',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
    nextBody: () => stamp(templates[turn++ % templates.length]!, nextSequence()),
    connections: options.connections,
  };
  if (options.warmupS > 0) await runCannon({ ...settings, label: `${options.label} (warm-up)`, durationS: options.warmupS });
  const before = await acceptedSoFar(target);
  const cpuBefore = target.pid == null ? null : cpuMsOfPid(target.pid);
  const threadsBefore = target.pid == null ? null : cpuMsByThreadKind(target.pid);
  const cannon = await runCannon({ ...settings, durationS: options.durationS });
  const cpuAfter = target.pid == null ? null : cpuMsOfPid(target.pid);
  const threadsAfter = target.pid == null ? null : cpuMsByThreadKind(target.pid);
  const eventsAnswered = cannon.ok * templates[0]!.events;
  await new Promise((resolve) => setTimeout(resolve, 200)); // requests cut off at the end may still be applied
  const after = await acceptedSoFar(target);
  return {
    label: options.label,
    batch: options.batch,
    connections: options.connections,
    bodyBytes: averageBytes(templates),
    cannon,
    eventsPerS: cannon.rps * templates[0]!.events,
    serverAccepted: before === null || after === null ? null : after - before,
    cpuMsPer1000: cpuBefore === null || cpuAfter === null || eventsAnswered === 0 ? null : ((cpuAfter - cpuBefore) * 1000) / eventsAnswered,
    cpuByThread:
      threadsBefore === null || threadsAfter === null
        ? null
        : // a thread that ended during the run takes its CPU with it: a kind never goes below 0
          (Object.fromEntries(Object.entries(threadsAfter).map(([kind, ms]) => [kind, Math.max(0, ms - threadsBefore[kind as ThreadKind])])) as Record<ThreadKind, number>),
  };
}

export function ingestRows(results: readonly IngestResult[]): string[][] {
  return results.map((r) => [
    r.label,
    String(r.batch),
    fmtBytes(r.bodyBytes),
    String(r.connections),
    fmtCount(r.cannon.rps),
    fmtCount(r.eventsPerS),
    fmtMs(r.cannon.p50),
    fmtMs(r.cannon.p99),
    fmtMs(r.cannon.max),
    r.cpuMsPer1000 === null ? '' : fmtMs(r.cpuMsPer1000),
    r.cannon.non2xx + r.cannon.errors > 0 ? `${r.cannon.non2xx} non-2xx, ${r.cannon.errors} err` : 'ok',
  ]);
}

export const INGEST_HEADER = ['scenario', 'batch', 'body', 'conns', 'req/s', 'events/s', 'p50', 'p99', 'max', 'CPU/1k ev', 'errors'];

if (import.meta.main) {
  const args = parseArgs();
  const batches = str(args, 'batch', '1000')
    .split(',')
    .map((b) => Number(b.trim()))
    .filter((b) => b >= 1 && b <= 1000);
  const connections = num(args, 'connections', 4);
  const durationS = num(args, 'duration', 10);
  const warmupS = num(args, 'warmup', 2);
  const fsync = str(args, 'fsync', 'always');
  const profileDir = flag(args, 'profile') ? makeTempDir('jobwatch-prof-') : undefined;
  const service = await serviceFromEnv({ env: { FSYNC: fsync, DAILY_EVENT_LIMIT: '0' }, label: 'service', cpuProfDir: profileDir });
  const results: IngestResult[] = [];
  const connectionId = service.connectionId;
  try {
    for (const batch of batches) {
      const target: Session = service;
      note(`ingest: batch ${batch}, ${connections} connections, ${durationS} s (+${warmupS} s warm-up)`);
      const templates = templatesFor(connectionId, batch);
      const measured = await measureIngest(target, { label: `service FSYNC=${fsync}`, batch, connections, durationS, warmupS, templates });
      results.push(measured);
      if (measured.cpuByThread !== null) note(`service CPU by thread: ${describeThreadCpu(measured.cpuByThread)}`);
      if (measured.serverAccepted !== null) {
        note(`service counted ${fmtCount(measured.serverAccepted)} accepted events during the run (client counted ${fmtCount(measured.cannon.ok * measured.batch)} in 2xx answers)`);
      }
    }
  } finally {
    await service.cleanup(); // stopped before the baseline runs, so that a --profile shows no idle time
  }
  // the service's own account of the runs (work per request, durability wait, group commits, loop stalls)
  const timings = service.logs.find((line) => line.includes('ingest timings:'));
  if (timings !== undefined) note(timings.replace(/^.*ingest timings: /, 'service timings (all runs): '));
  if (!flag(args, 'no-baseline')) {
    const baseline = await startBaseline();
    try {
      for (const batch of batches) {
        note(`baseline: batch ${batch}, same settings`);
        const templates = templatesFor(connectionId, batch);
        results.push(await measureIngest({ baseUrl: baseline.baseUrl, apiKey: 'baseline', connectionId, pid: baseline.pid }, { label: 'baseline JSON.parse', batch, connections, durationS, warmupS, templates }));
      }
    } finally {
      await baseline.stop();
    }
  }
  results.sort((a, b) => b.batch - a.batch);
  console.log(table(INGEST_HEADER, ingestRows(results)));
  if (profileDir !== undefined) {
    const profile = newestProfile(profileDir);
    console.log(profile === null ? 'no CPU profile was written' : summarizeProfile(profile, num(args, 'top', 30), flag(args, 'inclusive')));
    removeTempDir(profileDir);
  }
}
