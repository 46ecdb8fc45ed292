/**
 * autocannon, run inside this process, with latencies taken from every response at
 * sub-millisecond resolution (autocannon's own histogram rounds to whole milliseconds,
 * too coarse for a 5 ms target).
 */
import autocannon, { type RequestParams } from 'autocannon';
import { note, percentiles } from './util.ts';

export interface CannonOptions {
  label: string;
  url: string;
  method?: 'GET' | 'POST';
  path?: string;
  headers?: Record<string, string>;
  /** called once per request, in the timed loop: keep it to a buffer lookup */
  nextBody?: () => Buffer;
  /** called once per request: rotate among paths (e.g. job ids) */
  nextPath?: () => string;
  connections: number;
  durationS: number;
  /** untimed run before the measured one, same settings */
  warmupS?: number;
}

export interface CannonResult {
  label: string;
  /** responses with a 2xx status */
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  /** 2xx responses per second */
  rps: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
  statusCodes: Record<string, number>;
}

async function runOnce(options: CannonOptions, durationS: number, collect: boolean): Promise<CannonResult> {
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  const { nextBody, nextPath } = options;
  const dynamic = nextBody !== undefined || nextPath !== undefined;
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: durationS,
    timeout: 30,
    requests: [
      {
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: options.headers ?? {},
        ...(dynamic
          ? {
              setupRequest: (request: RequestParams) => {
                const next: RequestParams = { ...request };
                if (nextBody !== undefined) next.body = nextBody();
                if (nextPath !== undefined) next.path = nextPath();
                return next;
              },
            }
          : {}),
      },
    ],
  });
  let firstError: unknown = null;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (collect && statusCode >= 200 && statusCode < 300) samples.push(responseTime);
  });
  instance.on('reqError', (error: unknown) => {
    firstError ??= error;
  });
  const result = await instance;
  if (firstError !== null) note(`${options.label}: request error: ${String(firstError)}`);
  const [p50, p99, max] = percentiles(samples, [50, 99, 100]);
  const ok = result['2xx'];
  return {
    label: options.label,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    rps: ok / Math.max(0.001, result.duration),
    p50: p50!,
    p99: p99!,
    max: max!,
    mean: samples.length === 0 ? Number.NaN : samples.reduce((a, b) => a + b, 0) / samples.length,
    statusCodes,
  };
}

export async function runCannon(options: CannonOptions): Promise<CannonResult> {
  if (options.warmupS !== undefined && options.warmupS > 0) await runOnce(options, options.warmupS, false);
  const result = await runOnce(options, options.durationS, true);
  if (result.non2xx > 0 || result.errors > 0) {
    note(`${options.label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts; status codes ${JSON.stringify(result.statusCodes)}`);
  }
  return result;
}

/** One request up front, so a broken scenario fails loudly instead of measuring error pages. */
export async function probeRequest(url: string, init: RequestInit = {}): Promise<{ status: number; body: string }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text() };
}
