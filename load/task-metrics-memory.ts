/**
 * The memory of a connection's task metrics: 200 tasks (in 5 queues) over 90 days of
 * hourly buckets (the minute tier holds its last 48 hours, the day tier every day), 20
 * jobs a task an hour, filled in this process and measured as heap growth after a full
 * collection; beside it, what the same series take in a snapshot. Prints one JSON line
 * (load/bench.ts runs it in a process of its own so that nothing else is on the heap).
 *
 *   npx bun load/task-metrics-memory.ts [--tasks 200] [--days 90] [--jobs-per-hour 20]
 */
import { encodeValue } from '../persistence/record-codec.ts';
import { TASK_METRICS_DEFAULTS } from '../actors/metrics/metric-tiers.ts';
import { TaskMetrics } from '../actors/metrics/task-metrics.ts';
import { fillTaskMetrics } from './task-metrics-fill.ts';
import { num, parseArgs } from './util.ts';

const args = parseArgs();
const tasks = num(args, 'tasks', 200);
const days = num(args, 'days', 90);
const jobsPerTaskHour = num(args, 'jobs-per-hour', 20);

Bun.gc(true);
const heapBefore = process.memoryUsage().heapUsed;
const metrics = new TaskMetrics(TASK_METRICS_DEFAULTS);
const started = performance.now();
const { events, cpuMs } = fillTaskMetrics(metrics, { tasks, days, jobsPerTaskHour, endMs: Date.now() });
const fillMs = performance.now() - started;
Bun.gc(true);
const heapBytes = process.memoryUsage().heapUsed - heapBefore;
const snapshotBytes = encodeValue(metrics.toSnapshot()).byteLength;
console.log(JSON.stringify({ tasks, days, jobsPerTaskHour, events, heapBytes, estimateBytes: metrics.byteSize, snapshotBytes, cpuUsPerEvent: (cpuMs * 1000) / events, fillMs, series: metrics.seriesCount }));
