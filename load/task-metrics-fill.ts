/**
 * Fills a connection's task metrics with months of jobs directly (no HTTP, no log): the
 * data the memory and read benchmarks of task metrics measure. Each task has its own
 * typical run time (10 ms to ~10 minutes across the tasks), runs spread over two orders of
 * magnitude around it, waits from milliseconds to a minute, 5% failures; jobs arrive in time
 * order, an hour at a time, and retention's maintenance runs every hour, as live.
 */
import type { TaskMetrics } from '../actors/metrics/task-metrics.ts';

const HOUR_MS = 3_600_000;
const QUEUES = ['default', 'emails', 'billing', 'media', 'reports'];

export interface FillOptions {
  tasks: number;
  days: number;
  jobsPerTaskHour: number;
  /** the end of the filled time (now) */
  endMs: number;
  /** task names are `${prefix}${index}` */
  prefix?: string;
}

/** Fills `metrics` and returns the events recorded (a start and an end per job) and the CPU they took. */
export function fillTaskMetrics(metrics: TaskMetrics, options: FillOptions): { events: number; cpuMs: number } {
  let seed = 20_261_102;
  const random = (): number => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 4_294_967_296;
  };
  const names = Array.from({ length: options.tasks }, (_, at) => `${options.prefix ?? 'tasks.job_'}${at}`);
  const typicalMs = names.map((_, at) => 10 * Math.pow(60_000, at / Math.max(1, options.tasks - 1)));
  const hours = options.days * 24;
  const startMs = Math.floor(options.endMs / HOUR_MS) * HOUR_MS - hours * HOUR_MS;
  // a job's start and its end, each recorded at its own time (as an agent reports them)
  const hour: Array<[atMs: number, task: number, waitMs: number, runMs: number, failed: boolean | null]> = [];
  let carried: typeof hour = [];
  let events = 0;
  const cpuBefore = process.cpuUsage();
  for (let h = 0; h < hours; h++) {
    const hourEndMs = startMs + (h + 1) * HOUR_MS;
    hour.length = 0;
    for (const event of carried) hour.push(event);
    carried = [];
    for (let task = 0; task < options.tasks; task++) {
      for (let job = 0; job < options.jobsPerTaskHour; job++) {
        const runMs = Math.round(typicalMs[task]! * Math.exp((random() - 0.5) * 4.6));
        const startedMs = startMs + h * HOUR_MS + Math.floor(random() * HOUR_MS);
        const failed = random() < 0.05;
        hour.push([startedMs, task, 60_000 * random() ** 4, runMs, null]);
        const end: (typeof hour)[number] = [startedMs + runMs, task, 0, runMs, failed];
        if (end[0] < hourEndMs) hour.push(end);
        else carried.push(end);
      }
    }
    hour.sort((a, b) => a[0] - b[0]);
    for (const [atMs, task, waitMs, runMs, failed] of hour) {
      const queue = QUEUES[task % QUEUES.length]!;
      if (failed === null) metrics.recordStarted(names[task]!, queue, atMs, waitMs, atMs);
      else metrics.recordFinished(names[task]!, queue, failed ? 'failed' : 'completed', atMs, runMs, atMs);
      events++;
    }
    metrics.maintain(hourEndMs);
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { events, cpuMs: (cpu.user + cpu.system) / 1000 };
}
