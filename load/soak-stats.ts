/**
 * The soak test's bookkeeping: latencies and outcomes per request kind, collected into
 * one-second samples together with the service's resident memory, and the verdict on
 * whether memory and latency stayed flat.
 */
import { readFileSync } from 'node:fs';
import { fmtBytes, fmtCount, fmtMs, percentiles, table } from './util.ts';

export interface KindSecond {
  count: number;
  p50: number;
  p99: number;
}

export interface SecondSample {
  /** seconds since the start of the run */
  second: number;
  rssBytes: number | null;
  /** CPU the service used in this second, in % of one core */
  serviceCpuPercent: number | null;
  /** the machine's 1-minute load average: how busy the (shared) machine was */
  loadAverage: number | null;
  kinds: Record<string, KindSecond>;
}

/** Linux's USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on every common kernel). */
const CLOCK_TICKS_PER_S = 100;

/** Reads the service's CPU time and the machine's load average once a second. */
export class MachineSampler {
  #lastTicks: number | null;
  #lastAtMs = performance.now();

  constructor(private readonly pid: number | null) {
    this.#lastTicks = this.#cpuTicks();
  }

  next(): { serviceCpuPercent: number | null; loadAverage: number | null } {
    const ticks = this.#cpuTicks();
    const nowMs = performance.now();
    const serviceCpuPercent =
      ticks === null || this.#lastTicks === null ? null : ((ticks - this.#lastTicks) / CLOCK_TICKS_PER_S / ((nowMs - this.#lastAtMs) / 1000)) * 100;
    this.#lastTicks = ticks;
    this.#lastAtMs = nowMs;
    return { serviceCpuPercent, loadAverage: readLoadAverage() };
  }

  #cpuTicks(): number | null {
    if (this.pid === null) return null;
    try {
      // the command name (field 2) may hold spaces; fields after its closing parenthesis are fixed
      const fields = readFileSync(`/proc/${this.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]); // utime + stime
    } catch {
      return null;
    }
  }
}

function readLoadAverage(): number | null {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/** Why a request did not go as it should; every key is counted separately. */
export type Problem = 'network error or timeout' | 'HTTP 5xx' | 'unexpected HTTP 4xx' | 'stream ended by the server' | 'stream resumed with reset' | 'not sent (too many in flight)'
  | 'unhandled error, failure or stack trace';

export class SoakRecorder {
  readonly samples: SecondSample[] = [];
  readonly problems = new Map<string, number>();
  readonly statusCounts = new Map<string, number>();
  #current = new Map<string, number[]>();

  /** A completed request of `kind` that took `ms`, answered `status` (0: no answer). */
  record(kind: string, ms: number, status: number): void {
    const key = `${kind} ${status === 0 ? 'no answer' : status}`;
    this.statusCounts.set(key, (this.statusCounts.get(key) ?? 0) + 1);
    if (status === 0) return;
    let latencies = this.#current.get(kind);
    if (latencies === undefined) this.#current.set(kind, (latencies = []));
    latencies.push(ms);
  }

  problem(kind: string, what: Problem): void {
    const key = `${kind}: ${what}`;
    this.problems.set(key, (this.problems.get(key) ?? 0) + 1);
  }

  /** Closes the current second. */
  sample(second: number, rssBytes: number | null, machine: { serviceCpuPercent: number | null; loadAverage: number | null }): SecondSample {
    const kinds: Record<string, KindSecond> = {};
    for (const [kind, latencies] of this.#current) {
      if (latencies.length === 0) continue;
      const [p50, p99] = percentiles(latencies, [50, 99]);
      kinds[kind] = { count: latencies.length, p50: p50!, p99: p99! };
    }
    this.#current = new Map();
    const sample = { second, rssBytes, ...machine, kinds };
    this.samples.push(sample);
    return sample;
  }
}

/**
 * The rule the verdict applies; printed with it. p99 gets more room than p50: a kind with
 * a few requests a second has a per-second p99 that is its slowest request, and the
 * machine is shared. Service CPU per request (CPU time in a second over the requests
 * answered in it) is judged too: at a steady mix, a service doing more work per request
 * is slowing down whatever the machine does, while a starved one does the same work later.
 */
export const FLAT_RULE = {
  rssRatio: 1.1,
  rssSlackBytes: 16 * 1024 * 1024,
  cpuRatio: 1.25,
  cpuSlackMs: 0.1,
  p50Ratio: 1.5,
  p50SlackMs: 2,
  p99Ratio: 2,
  p99SlackMs: 5,
};

export function describeRule(warmupS: number): string {
  const { rssRatio, rssSlackBytes, cpuRatio, cpuSlackMs, p50Ratio, p50SlackMs, p99Ratio, p99SlackMs } = FLAT_RULE;
  return (
    `rule: the first ${warmupS} s are warm-up; the rest is cut in thirds and medians of the per-second figures compared, last third against first. ` +
    `Memory is flat when RSS <= ${rssRatio}x + ${fmtBytes(rssSlackBytes)}; service CPU per request when <= ${cpuRatio}x + ${cpuSlackMs} ms; ` +
    `the latency of a kind when p50 <= ${p50Ratio}x + ${p50SlackMs} ms and p99 <= ${p99Ratio}x + ${p99SlackMs} ms.`
  );
}

function median(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : percentiles(values, [50])[0]!;
}

interface ThirdFigures {
  rss: number;
  cpu: number;
  cpuMsPerRequest: number;
  load: number;
  p50: Record<string, number>;
  p99: Record<string, number>;
}

function figuresOf(samples: readonly SecondSample[], kinds: readonly string[]): ThirdFigures {
  const pick = (kind: string, field: 'p50' | 'p99'): number => median(samples.flatMap((s) => (s.kinds[kind] === undefined ? [] : [s.kinds[kind]![field]])));
  return {
    rss: median(samples.flatMap((s) => (s.rssBytes === null ? [] : [s.rssBytes]))),
    cpu: median(samples.flatMap((s) => (s.serviceCpuPercent === null ? [] : [s.serviceCpuPercent]))),
    cpuMsPerRequest: median(samples.flatMap((s) => {
      const requests = Object.values(s.kinds).reduce((sum, kind) => sum + kind.count, 0);
      return s.serviceCpuPercent === null || requests === 0 ? [] : [(s.serviceCpuPercent * 10) / requests];
    })),
    load: median(samples.flatMap((s) => (s.loadAverage === null ? [] : [s.loadAverage]))),
    p50: Object.fromEntries(kinds.map((kind) => [kind, pick(kind, 'p50')])),
    p99: Object.fromEntries(kinds.map((kind) => [kind, pick(kind, 'p99')])),
  };
}

const within = (last: number, first: number, ratio: number, slack: number): boolean => !(last > first * ratio + slack);

export interface Verdict {
  text: string;
  flat: boolean;
}

/** The end-of-run report: one row per kind and memory, first third against last third. */
export function verdict(recorder: SoakRecorder, warmupS: number): Verdict {
  const measured = recorder.samples.filter((sample) => sample.second > warmupS);
  if (measured.length < 3) return { text: `only ${measured.length} s measured after the ${warmupS} s warm-up: no verdict`, flat: false };
  const third = Math.floor(measured.length / 3);
  const kinds = [...new Set(measured.flatMap((sample) => Object.keys(sample.kinds)))].sort();
  const first = figuresOf(measured.slice(0, third), kinds);
  const last = figuresOf(measured.slice(measured.length - third), kinds);
  const { rssRatio, rssSlackBytes, cpuRatio, cpuSlackMs, p50Ratio, p50SlackMs, p99Ratio, p99SlackMs } = FLAT_RULE;
  const rows: string[][] = [];
  let flat = true;
  const rssFlat = Number.isNaN(first.rss) || within(last.rss, first.rss, rssRatio, rssSlackBytes);
  flat &&= rssFlat;
  rows.push(['memory (RSS)', fmtBytes(first.rss), fmtBytes(last.rss), '', '', Number.isNaN(first.rss) ? 'not measured' : rssFlat ? 'flat' : 'GREW']);
  const percent = (value: number): string => (Number.isNaN(value) ? 'n/a' : `${value.toFixed(0)}%`);
  const cpuFlat = Number.isNaN(first.cpuMsPerRequest) || within(last.cpuMsPerRequest, first.cpuMsPerRequest, cpuRatio, cpuSlackMs);
  flat &&= cpuFlat;
  rows.push(['service CPU (of one core)', percent(first.cpu), percent(last.cpu), '', '', 'for reading']);
  rows.push([
    'service CPU per request',
    fmtMs(first.cpuMsPerRequest),
    fmtMs(last.cpuMsPerRequest),
    '',
    '',
    Number.isNaN(first.cpuMsPerRequest) ? 'not measured' : cpuFlat ? 'flat' : 'ROSE',
  ]);
  rows.push(['machine load (1 min)', first.load.toFixed(1), last.load.toFixed(1), '', '', 'for reading']);
  let latencyRose = false;
  for (const kind of kinds) {
    const requests = measured.reduce((sum, sample) => sum + (sample.kinds[kind]?.count ?? 0), 0);
    const ok =
      within(last.p50[kind]!, first.p50[kind]!, p50Ratio, p50SlackMs) && within(last.p99[kind]!, first.p99[kind]!, p99Ratio, p99SlackMs);
    flat &&= ok;
    latencyRose ||= !ok;
    rows.push([
      `${kind} (${fmtCount(requests / measured.length)}/s)`,
      fmtMs(first.p50[kind]),
      fmtMs(last.p50[kind]),
      fmtMs(first.p99[kind]),
      fmtMs(last.p99[kind]),
      ok ? 'flat' : 'ROSE',
    ]);
  }
  const problems = [...recorder.problems].map(([key, count]) => `  ${key}: ${count}`);
  const text = [
    `${measured.length} s measured (${third} s per third)`,
    table(['kind (requests/s)', 'RSS or p50, first third', 'last third', 'p99, first third', 'last third', ''], rows),
    describeRule(warmupS),
    ...(latencyRose && cpuFlat && !Number.isNaN(first.cpu)
      ? [
          `note: latency rose while the service's CPU per request stayed flat (machine load ${first.load.toFixed(1)} -> ${last.load.toFixed(1)}): ` +
            'the service (or this load process) most likely waited for a CPU held by other processes; run again before believing it',
        ]
      : []),
    `problems (whole run): ${problems.length === 0 ? 'none' : `\n${problems.join('\n')}`}`,
    `verdict: ${flat ? 'memory, CPU and latency stayed flat' : 'NOT flat (see the rows marked GREW/ROSE)'}`,
  ].join('\n');
  return { text, flat };
}
