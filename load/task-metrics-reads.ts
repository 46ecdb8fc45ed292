/**
 * Read latency of task metrics: a data directory is prepared in this process (an admin, a
 * connection with one task's 90 days, 60 jobs an hour, and one with 200 tasks' 90 days at
 * 2 jobs a task an hour), written as a snapshot, and the real service started on it. Then
 * autocannon asks for that task's run time over 90 days hour by hour (2,160 points), its
 * counts day by day, and the tasks table over 90 days of both connections.
 *
 *   npx bun load/task-metrics-reads.ts [--read-duration 3] [--read-connections 4]
 */
import { ManualClock } from '../actors/clock.ts';
import { Engine, type EngineRecord } from '../actors/engine.ts';
import { AccountService } from '../actors/services/account-service.ts';
import { ConnectionService } from '../actors/services/connection-service.ts';
import { TeamService } from '../actors/services/team-service.ts';
import { Access } from '../actors/accounts/access.ts';
import { openDurableStore } from '../persistence/durable-store.ts';
import { FileStorage } from '../persistence/file-storage.ts';
import { runCannon, type CannonResult } from './cannon.ts';
import { fillTaskMetrics } from './task-metrics-fill.ts';
import { LOAD_ADMIN, makeTempDir, removeTempDir, startService } from './service.ts';
import { fmtMs, note, num, parseArgs } from './util.ts';

const DAY_MS = 86_400_000;

export interface TaskMetricsRead {
  label: string;
  /** the target read (one task over 90 days) */
  targeted: boolean;
  cannon: CannonResult;
}

/** A data directory holding the two connections' task metrics in its snapshot. */
async function prepareDataDir(nowMs: number): Promise<{ dataDir: string; oneTask: string; manyTasks: string }> {
  const dataDir = makeTempDir('jobwatch-task-metrics-');
  const store = await openDurableStore({ dir: `${dataDir}/log`, storage: new FileStorage(), fsync: 'no', log: () => undefined });
  const engine = new Engine({ clock: new ManualClock(nowMs), log: store, limits: { dailyEventLimit: 0, dedupKeysMax: 100_000, maxJobsPerConnection: 1_000_000, retentionMs: DAY_MS } });
  await store.recover({ snapshotChunk: () => undefined, record: (record) => engine.evolve(record as EngineRecord) });
  const admin = await new AccountService(engine, DAY_MS, 'task-metrics-bench-secret').addUser(LOAD_ADMIN.email, LOAD_ADMIN.password, true);
  await new TeamService(engine).createFirstTeam(admin.id, 'bench');
  const connections = new ConnectionService(engine);
  const asAdmin = new Access(admin, engine.accounts);
  const oneTask = (await connections.create(asAdmin, 'one task', undefined)).connection.id;
  const manyTasks = (await connections.create(asAdmin, '200 tasks', undefined)).connection.id;
  const one = fillTaskMetrics(engine.connection(oneTask)!.taskMetrics, { tasks: 1, days: 90, jobsPerTaskHour: 60, endMs: nowMs, prefix: 'reports.nightly_' });
  const many = fillTaskMetrics(engine.connection(manyTasks)!.taskMetrics, { tasks: 200, days: 90, jobsPerTaskHour: 2, endMs: nowMs });
  note(`task metrics: filled ${one.events + many.events} events in ${fmtMs(one.cpuMs + many.cpuMs)} CPU`);
  await store.writeSnapshot(engine.takeSnapshot());
  await store.close();
  return { dataDir, oneTask, manyTasks };
}

export async function measureTaskMetricsReads(options: { connections: number; durationS: number; warmupS: number }): Promise<TaskMetricsRead[]> {
  const nowMs = Date.now();
  const { dataDir, oneTask, manyTasks } = await prepareDataDir(nowMs);
  const service = await startService({ dataDir, env: { DAILY_EVENT_LIMIT: '0' }, label: 'task-metrics' });
  try {
    const from = new Date(nowMs - 90 * DAY_MS).toISOString();
    const scenarios: Array<[label: string, path: string, targeted: boolean]> = [
      ['metrics series: 1 task, runtime, 90 d by the hour (2,160 points)', `/api/metrics/series?connectionId=${oneTask}&task=reports.nightly_0&measure=runtime&from=${from}&step=1h`, true],
      ['metrics series: 1 task, counts, 90 d by the day', `/api/metrics/series?connectionId=${oneTask}&task=reports.nightly_0&measure=counts&from=${from}&step=1d`, true],
      ['metrics tasks: 1 task, 90 d beside the 90 d before', `/api/metrics/tasks?connectionId=${oneTask}&from=${from}&spark=runP95`, true],
      ['metrics tasks: 200 tasks, 90 d beside the 90 d before', `/api/metrics/tasks?connectionId=${manyTasks}&from=${from}&spark=runP95`, false],
    ];
    const results: TaskMetricsRead[] = [];
    for (const [label, path, targeted] of scenarios) {
      const cannon = await runCannon({ label, url: service.baseUrl, path, headers: { cookie: service.cookie }, ...options });
      results.push({ label, targeted, cannon });
    }
    return results;
  } finally {
    await service.cleanup();
    removeTempDir(dataDir);
  }
}

if (import.meta.main) {
  const args = parseArgs();
  const reads = await measureTaskMetricsReads({ connections: num(args, 'read-connections', 4), durationS: num(args, 'read-duration', 3), warmupS: 0.5 });
  for (const { label, cannon } of reads) console.log(`${label}: p99 ${fmtMs(cannon.p99)}, p50 ${fmtMs(cannon.p50)}, ${cannon.rps.toFixed(0)} req/s, ${cannon.non2xx + cannon.errors} errors`);
}
