/**
 * What one evaluation of a connection's alert rules costs, and whether it grows with the
 * jobs kept: the same 100 rules (20 of each kind) over the same queues, workers and
 * active jobs, on a connection holding few jobs and on one holding many. Evaluation reads
 * the queue metrics' buckets, the depths, the workers, the per-task and per-state indexes,
 * never all jobs, so the ratio should stay near 1. In-process (the engine, an in-memory
 * log, the injected clock), so a shared machine's noise hurts least; prints each side's
 * median time per evaluation and the ratio, measured in the same run.
 *
 *   npx bun load/alert-evaluation-cost.ts [--small 10000] [--large 200000] [--runs 200]
 */
import { ManualClock } from '../actors/clock.ts';
import { Engine, inMemoryLog } from '../actors/engine.ts';
import { decideEvaluation } from '../actors/alerts/alert-evaluation.ts';
import { ALERT_KINDS, type AlertKind } from '../actors/alerts/alert-model.ts';
import type { ConnectionActor } from '../actors/connection/connection-actor.ts';
import { fmtMs, num, parseArgs } from './util.ts';

const args = parseArgs();
const small = num(args, 'small', 10_000);
const large = num(args, 'large', 200_000);
const runs = num(args, 'runs', 200);
const QUEUES = 10;
const TASKS = 20;
const WORKERS = 50;
const ACTIVE = 200;
const T0 = Date.parse('2026-11-25T12:00:00Z');

async function connectionWith(jobs: number): Promise<{ engine: Engine; actor: ConnectionActor; clock: ManualClock }> {
  const clock = new ManualClock(T0);
  const engine = new Engine({ clock, log: inMemoryLog, limits: { dailyEventLimit: 0, dedupKeysMax: 1_000, maxJobsPerConnection: 10_000_000, retentionMs: 7 * 86_400_000, connectionMemoryBytesMax: 0, dailyIngestBytesMax: 0, queuesPerConnectionMax: 1_000, workersPerConnectionMax: 1_000 } });
  const userRecord = engine.accounts.decideCreateUser('bench@example.test', 'not-a-real-hash', true, T0);
  await engine.commit(userRecord);
  const user = engine.accounts.userByEmail('bench@example.test')!;
  const created = engine.accounts.decideCreateConnection(user.id, 'bench', 'sk_bench', T0);
  await engine.commit(created);
  if (created.t !== 'connection.created') throw new Error('unreachable');
  const actor = engine.connection(created.connection.id)!;
  const event = (index: number, state: string, atMs: number) => ({
    type: 'job_state_change',
    timestamp: new Date(atMs).toISOString(),
    framework: 'celery',
    connectionId: actor.connectionId,
    job: { externalId: `job-${index}`, name: `tasks.t${index % TASKS}`, queue: `q${index % QUEUES}`, state, completedAt: state === 'active' ? undefined : new Date(atMs).toISOString(), startedAt: new Date(atMs - 1_000).toISOString() },
  });
  for (let start = 0; start < jobs; start += 1_000) {
    const events = [];
    for (let index = start; index < Math.min(jobs, start + 1_000); index++) {
      // spread over the last six hours; every tenth failed; the newest ACTIVE still running
      const atMs = T0 - 6 * 3_600_000 + Math.floor((index / jobs) * 6 * 3_600_000);
      events.push(event(index, index >= jobs - ACTIVE ? 'active' : index % 10 === 0 ? 'failed' : 'completed', atMs));
    }
    const { record } = actor.decideIngest(events, T0);
    if (record === null) throw new Error('nothing accepted');
    await engine.commit(record);
  }
  const workers = Array.from({ length: WORKERS }, (_, index) => ({
    type: 'worker_state_change', timestamp: new Date(T0).toISOString(), framework: 'celery', connectionId: actor.connectionId,
    worker: { externalId: `w${index}`, hostname: 'host', state: 'online', queues: [`q${index % QUEUES}`] },
  }));
  await engine.commit(actor.decideIngest(workers, T0).record!);
  const kindFields = (kind: AlertKind, index: number) => ({
    queue: kind === 'task_missing' ? null : `q${index % QUEUES}`,
    task: kind === 'task_missing' || kind === 'job_stuck' ? `tasks.t${index % TASKS}` : null,
    threshold: kind === 'failure_rate' ? 0.5 : kind === 'queue_depth' ? 100 : null,
  });
  for (let index = 0; index < 100; index++) {
    const kind = ALERT_KINDS[index % ALERT_KINDS.length]!;
    await engine.commit(actor.alerts.decideSaveRule(actor.connectionId, null, { name: `r${index}`, kind, windowSeconds: 3_600, channelIds: [], includePaused: false, ...kindFields(kind, index) }, T0));
  }
  return { engine, actor, clock };
}

function medianMs(actor: ConnectionActor, clock: ManualClock): number {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    clock.advance(10_000);
    const started = performance.now();
    decideEvaluation(actor, clock.nowMs());
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const sides = [await connectionWith(small), await connectionWith(large)];
// alternate, twice, so a burst of load elsewhere hits both alike; the indexes are built by the first pass
const timings: number[][] = [[], []];
for (let round = 0; round < 4; round++) for (const [index, side] of sides.entries()) timings[index]!.push(medianMs(side.actor, side.clock));
const [smallMs, largeMs] = timings.map((values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!) as [number, number];
console.log(`alert evaluation, 100 rules (20 per kind), ${QUEUES} queues, ${WORKERS} workers, ${ACTIVE} active jobs`);
console.log(`  ${small.toLocaleString()} jobs: ${fmtMs(smallMs)} per evaluation`);
console.log(`  ${large.toLocaleString()} jobs: ${fmtMs(largeMs)} per evaluation`);
console.log(`  ratio (many / few jobs): ${(largeMs / smallMs).toFixed(2)}`);
