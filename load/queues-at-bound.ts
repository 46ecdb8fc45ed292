/**
 * GET /api/queues (and /api/health beside it) with one connection at its tenant bounds:
 * 1,000 queues, each with a finished job (so its metric rings exist) and 1,000 live
 * workers listing 256 queues each (the per-worker maximum), no snapshot consumers, so
 * every queue's `consumers` comes from the workers. Prints p50/p99 per scenario.
 *
 *   npx bun load/queues-at-bound.ts --queues 1000 --workers 1000 --duration 3
 *   BASE_URL=http://127.0.0.1:3000 ADMIN_EMAIL=... ADMIN_PASSWORD=... npx bun load/queues-at-bound.ts
 *
 * Worker events are stamped 4 minutes ahead (inside the default 5-minute clock tolerance)
 * so the workers stay live, and counted as consumers, for the whole measurement.
 */
import { runCannon, type CannonResult } from './cannon.ts';
import { serviceFromEnv, type Session } from './service.ts';
import { fmtMs, note, num, parseArgs, table } from './util.ts';

const QUEUES_PER_WORKER = 256;

async function ingest(session: Session, events: unknown[]): Promise<void> {
  const response = await fetch(`${session.baseUrl}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${session.apiKey}` },
    body: JSON.stringify({ events }),
  });
  const reply = (await response.json()) as { accepted: number; errors?: unknown[] };
  if (!response.ok || reply.accepted !== events.length) throw new Error(`ingest: ${response.status} ${JSON.stringify(reply).slice(0, 500)}`);
}

async function fill(session: Session, queues: number, workers: number): Promise<void> {
  const nowMs = Date.now();
  const base = { framework: 'celery', connectionId: session.connectionId };
  const queueName = (i: number) => `queue-${String(i).padStart(4, '0')}`;
  const jobs = Array.from({ length: queues }, (_, i) => ({
    ...base,
    type: 'job_state_change',
    timestamp: new Date(nowMs - 1000).toISOString(),
    job: { externalId: `job-${i}`, name: 'tasks.work', queue: queueName(i), state: i % 10 === 0 ? 'failed' : 'completed', startedAt: new Date(nowMs - 2000).toISOString(), completedAt: new Date(nowMs - 1000).toISOString() },
  }));
  for (let start = 0; start < jobs.length; start += 1000) await ingest(session, jobs.slice(start, start + 1000));
  const aheadMs = nowMs + 4 * 60_000;
  const workerEvents = Array.from({ length: workers }, (_, w) => ({
    ...base,
    type: 'worker_state_change',
    timestamp: new Date(aheadMs).toISOString(),
    worker: { externalId: `worker-${w}`, hostname: `host-${w % 50}`, state: 'online', queues: Array.from({ length: Math.min(QUEUES_PER_WORKER, queues) }, (_, k) => queueName((w * 7 + k) % queues)) },
  }));
  for (let start = 0; start < workerEvents.length; start += 100) await ingest(session, workerEvents.slice(start, start + 100));
}

const args = parseArgs();
const queues = num(args, 'queues', 1000);
const workers = num(args, 'workers', 1000);
const durationS = num(args, 'duration', 3);
const connections = num(args, 'connections', 2);
const service = await serviceFromEnv({ env: { DAILY_EVENT_LIMIT: '0', FSYNC: 'no' } });
try {
  note(`filling: ${queues} queues, ${workers} workers x ${Math.min(QUEUES_PER_WORKER, queues)} queues each`);
  await fill(service, queues, workers);
  const results: CannonResult[] = [];
  for (const path of ['/api/queues', '/api/queues?limit=1&sortBy=consumers', '/api/queues?sortBy=consumers&sortOrder=desc', '/api/queues?sortBy=throughput&timeRange=7d', '/api/health']) {
    results.push(await runCannon({ label: path, url: service.baseUrl, path, headers: { cookie: service.cookie }, connections, durationS, warmupS: 1 }));
  }
  console.log(table(['scenario', 'req/s', 'p50', 'p99', 'non-2xx'], results.map((r) => [r.label, r.rps.toFixed(0), fmtMs(r.p50), fmtMs(r.p99), String(r.non2xx)])));
} finally {
  await service.cleanup();
}
