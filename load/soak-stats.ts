/**
 * The soak test's bookkeeping: latencies and outcomes per request kind, collected into
 * one-second samples together with the service's resident memory, and the verdict on
 * whether memory and latency stayed flat.
 */
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
  kinds: Record<string, KindSecond>;
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
  sample(second: number, rssBytes: number | null): SecondSample {
    const kinds: Record<string, KindSecond> = {};
    for (const [kind, latencies] of this.#current) {
      if (latencies.length === 0) continue;
      const [p50, p99] = percentiles(latencies, [50, 99]);
      kinds[kind] = { count: latencies.length, p50: p50!, p99: p99! };
    }
    this.#current = new Map();
    const sample = { second, rssBytes, kinds };
    this.samples.push(sample);
    return sample;
  }
}

/** The rule the verdict applies; printed with it. */
export const FLAT_RULE = {
  rssRatio: 1.1,
  rssSlackBytes: 16 * 1024 * 1024,
  latencyRatio: 1.5,
  latencySlackMs: 2,
};

export function describeRule(warmupS: number): string {
  const { rssRatio, rssSlackBytes, latencyRatio, latencySlackMs } = FLAT_RULE;
  return (
    `rule: the first ${warmupS} s are warm-up; the rest is cut in thirds. Memory is flat when the median RSS of the last third ` +
    `<= ${rssRatio} x that of the first third + ${fmtBytes(rssSlackBytes)}. Latency of a kind is flat when the median of its ` +
    `per-second p50 and the median of its per-second p99 over the last third are each <= ${latencyRatio} x the first third's + ${latencySlackMs} ms.`
  );
}

function median(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : percentiles(values, [50])[0]!;
}

interface ThirdFigures {
  rss: number;
  p50: Record<string, number>;
  p99: Record<string, number>;
}

function figuresOf(samples: readonly SecondSample[], kinds: readonly string[]): ThirdFigures {
  const pick = (kind: string, field: 'p50' | 'p99'): number => median(samples.flatMap((s) => (s.kinds[kind] === undefined ? [] : [s.kinds[kind]![field]])));
  return {
    rss: median(samples.flatMap((s) => (s.rssBytes === null ? [] : [s.rssBytes]))),
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
  const { rssRatio, rssSlackBytes, latencyRatio, latencySlackMs } = FLAT_RULE;
  const rows: string[][] = [];
  let flat = true;
  const rssFlat = Number.isNaN(first.rss) || within(last.rss, first.rss, rssRatio, rssSlackBytes);
  flat &&= rssFlat;
  rows.push(['memory (RSS)', fmtBytes(first.rss), fmtBytes(last.rss), '', '', Number.isNaN(first.rss) ? 'not measured' : rssFlat ? 'flat' : 'GREW']);
  for (const kind of kinds) {
    const requests = measured.reduce((sum, sample) => sum + (sample.kinds[kind]?.count ?? 0), 0);
    const ok =
      within(last.p50[kind]!, first.p50[kind]!, latencyRatio, latencySlackMs) && within(last.p99[kind]!, first.p99[kind]!, latencyRatio, latencySlackMs);
    flat &&= ok;
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
    `problems (whole run): ${problems.length === 0 ? 'none' : `\n${problems.join('\n')}`}`,
    `verdict: ${flat ? 'memory and latency stayed flat' : 'NOT flat (see the rows marked GREW/ROSE)'}`,
  ].join('\n');
  return { text, flat };
}
