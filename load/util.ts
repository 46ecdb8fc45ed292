/** Small helpers shared by the load scripts: arguments, percentiles, formatting, machine facts. */
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';

export type Args = Record<string, string | boolean>;

/** `--key value`, `--key=value` and bare `--flag` (true). Numbers are read with `num`. */
export function parseArgs(argv: readonly string[] = process.argv.slice(2)): Args {
  const args: Args = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) {
      args[arg.slice(2, eq)] = arg.slice(eq + 1);
      continue;
    }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      args[arg.slice(2)] = next;
      i++;
    } else {
      args[arg.slice(2)] = true;
    }
  }
  return args;
}

/** A number argument; accepts `1000000`, `1_000_000`, `1e6`, `100k`, `1m`. */
export function num(args: Args, name: string, fallback: number): number {
  const raw = args[name];
  if (raw === undefined || raw === true || raw === false) return fallback;
  const text = String(raw).trim().toLowerCase().replace(/_/g, '');
  const scale = text.endsWith('k') ? 1e3 : text.endsWith('m') ? 1e6 : 1;
  const value = Number(scale === 1 ? text : text.slice(0, -1)) * scale;
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number, got '${raw}'`);
  return value;
}

export function str(args: Args, name: string, fallback: string): string {
  const raw = args[name];
  return typeof raw === 'string' ? raw : fallback;
}

export function flag(args: Args, name: string): boolean {
  return args[name] === true || args[name] === 'true' || args[name] === '1';
}

/** Percentile (nearest rank) of an unsorted sample; sorts a copy. */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): number[] {
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  if (sorted.length === 0) return ps.map(() => Number.NaN);
  return ps.map((p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Absolute wall-clock time in microseconds, comparable across processes on one machine. */
export function wallUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 'n/a';
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

export function fmtCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return 'n/a';
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(n >= 100 ? 0 : 1);
}

export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return 'n/a';
  if (Math.abs(n) >= 1024 * 1024 * 1024) return `${(n / 1024 / 1024 / 1024).toFixed(2)} GiB`;
  if (Math.abs(n) >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (Math.abs(n) >= 10 * 1024) return `${(n / 1024).toFixed(0)} KiB`;
  return `${n.toFixed(0)} B`;
}

export function machineDescription(): string {
  let model = cpus()[0]?.model ?? 'unknown cpu';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line !== undefined) model = line.split(':').slice(1).join(':').trim();
  } catch {
    // not Linux: keep os.cpus()
  }
  let memory = '';
  try {
    const total = /MemTotal:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
    if (total !== undefined) memory = `, ${(Number(total) / 1024 / 1024).toFixed(1)} GiB RAM`;
  } catch {
    // no /proc/meminfo
  }
  return `${model}, ${cpus().length} cores${memory}, ${process.platform}/${process.arch}, bun ${Bun.version}`;
}

/** Fixed-width text table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Progress to stderr, so that stdout carries only results. */
export function note(message: string): void {
  process.stderr.write(`[load ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
