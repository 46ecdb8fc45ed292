/**
 * The task metrics rows of the benchmark (load/bench.ts, `--skip metrics` leaves them
 * out): the memory of 200 tasks over 90 days of hourly buckets (load/task-metrics-memory.ts,
 * in a process of its own; target under 64 MB, beside the same series' bytes in a snapshot),
 * and the read latency of one task's 90 days over HTTP (load/task-metrics-reads.ts; target
 * p99 under 20 ms, beside the baseline server's small GET in the same run).
 */
import { join } from 'node:path';
import type { CannonResult } from './cannon.ts';
import { measureBaselineGet } from './reads.ts';
import { measureTaskMetricsReads } from './task-metrics-reads.ts';
import { fmtBytes, fmtCount, fmtMs, note } from './util.ts';

export type BenchRow = [figure: string, service: string, baseline: string, ratio: string, target: string, result: string, detail: string];

const MEMORY_TARGET_BYTES = 64 * 1024 * 1024;
const READ_TARGET_MS = 20;

interface MemoryReport {
  tasks: number;
  days: number;
  jobsPerTaskHour: number;
  events: number;
  heapBytes: number;
  estimateBytes: number;
  snapshotBytes: number;
  cpuUsPerEvent: number;
}

const verdict = (met: boolean | null): string => (met === null ? '' : met ? 'met' : 'NOT MET');
const times = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(1)}x` : '');

export async function taskMetricsRows(options: { quick: boolean; baselineUrl: string; reads: { connections: number; durationS: number; warmupS: number } }): Promise<{ rows: BenchRow[]; problems: string[] }> {
  const rows: BenchRow[] = [];
  const problems: string[] = [];
  const days = options.quick ? 30 : 90;
  note(`task metrics: load/task-metrics-memory.ts --days ${days} in its own process`);
  const child = Bun.spawn([process.execPath, 'load/task-metrics-memory.ts', '--days', String(days)], { cwd: join(import.meta.dir, '..'), stdout: 'pipe', stderr: 'inherit' });
  const output = await new Response(child.stdout).text();
  if ((await child.exited) === 0) {
    const memory = JSON.parse(output.trim().split('\n').at(-1)!) as MemoryReport;
    rows.push([
      `task metrics memory: ${memory.tasks} tasks, ${memory.days} days of hourly buckets`,
      fmtBytes(memory.heapBytes),
      fmtBytes(memory.snapshotBytes),
      times(memory.heapBytes, memory.snapshotBytes),
      `< 64 MB${days === 90 ? '' : ' (at 90 days)'}`,
      verdict(days === 90 ? memory.heapBytes < MEMORY_TARGET_BYTES : null),
      `heap growth after a full collection (estimate from the arrays ${fmtBytes(memory.estimateBytes)}); ${memory.jobsPerTaskHour} jobs a task an hour, ${fmtCount(memory.events)} events recorded at ${memory.cpuUsPerEvent.toFixed(1)} us CPU each; baseline: the same series in a snapshot`,
    ]);
  } else {
    problems.push(`task metrics memory: load/task-metrics-memory.ts exited with code ${child.exitCode}`);
  }
  const reads = await measureTaskMetricsReads(options.reads);
  const baseline: CannonResult = await measureBaselineGet(options.baselineUrl, options.reads);
  for (const { label, targeted, cannon } of reads) {
    const errors = cannon.non2xx + cannon.errors;
    rows.push([
      `${label}: p99`,
      errors > 0 && cannon.ok === 0 ? 'n/a' : fmtMs(cannon.p99),
      fmtMs(baseline.p99),
      times(cannon.p99, baseline.p99),
      targeted ? `< ${READ_TARGET_MS} ms` : '',
      verdict(targeted ? errors === 0 && cannon.p99 < READ_TARGET_MS : null),
      `p50 ${fmtMs(cannon.p50)}, ${fmtCount(cannon.rps)} req/s${errors > 0 ? `, ${errors} errors ${JSON.stringify(cannon.statusCodes)}` : ''}; baseline: a small GET`,
    ]);
  }
  return { rows, problems };
}
