/**
 * The service under test: start the real server (`bun src/main.ts`) as a child process on
 * a temporary data directory, or attach to one that is already running.
 *
 *   start:  const svc = await startService({ env: { FSYNC: 'always' } })
 *   attach: BASE_URL=http://host:3000 ADMIN_EMAIL=... ADMIN_PASSWORD=... (see serviceFromEnv)
 *
 * A started service also gives its resident memory (VmRSS of the server process from
 * /proc/<pid>/status) and can be restarted on the same data directory, timing how long
 * the restart takes until /api/health answers and the `recovered:` line was logged.
 * Temporary data directories are made under os.tmpdir() and removed by cleanup() (and,
 * as a last resort, when the load process exits).
 */
import type { Subprocess } from 'bun';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { restartProfile, type RestartProfile } from './restart-profile.ts';
import { note, sleep } from './util.ts';

export const REPO_ROOT = resolve(import.meta.dir, '..');
export const LOAD_ADMIN = { email: 'load-admin@example.com', password: 'load-test-password-1234' };

export interface Session {
  baseUrl: string;
  /** `session=...`, ready for a Cookie header */
  cookie: string;
  apiKey: string;
  connectionId: string;
}

export interface StartOptions {
  /** extra environment for the server (FSYNC, DAILY_EVENT_LIMIT, SNAPSHOT_LOG_MB, ...) */
  env?: Record<string, string>;
  /** reuse a data directory (not removed by cleanup) instead of a fresh temporary one */
  dataDir?: string;
  /** print the server's log lines to stderr */
  echo?: boolean;
  /** pass --cpu-prof to bun, writing the profile into this directory */
  cpuProfDir?: string;
  /** skip login and connection creation */
  noSession?: boolean;
  label?: string;
}

export interface RestartResult {
  /** SIGTERM until the old process exited (includes its shutdown snapshot) */
  shutdownMs: number;
  /** spawn of the new process until /api/health answered 200 and `recovered:` was logged */
  restartMs: number;
  recoveredLine: string;
  snapshotLine: string | null;
  /** where restartMs went, from the new process's log lines; null when a line it needs is missing */
  profile: RestartProfile | null;
}

export interface Service extends Session {
  /** null when attached to a service this process did not start */
  readonly pid: number | null;
  readonly dataDir: string | null;
  readonly logs: string[];
  /** performance.now() when each of `logs` arrived, index for index */
  readonly logArrivalsMs: number[];
  readonly label: string;
  /** spawn until /api/health answered 200 at the first start (an empty data directory unless one was given); null when attached */
  readonly startupMs: number | null;
  /** resident set size of the server process in bytes, or null when not measurable */
  rssBytes(): number | null;
  /** waits for a log line matching `pattern` at or after line index `from` */
  waitForLog(pattern: RegExp, timeoutMs: number, from?: number): Promise<string>;
  /** SIGTERM and wait for exit; returns how long the shutdown took */
  stop(): Promise<{ shutdownMs: number; exitCode: number | null }>;
  /** stop, then start again on the same data directory (same port), with optional extra env */
  restart(env?: Record<string, string>): Promise<RestartResult>;
  /** stop if running and remove a temporary data directory */
  cleanup(): Promise<void>;
}

const liveChildren = new Set<Subprocess>();
const tempDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of liveChildren) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      note(`${signal}: stopping child processes and removing temporary data`);
      process.exit(130);
    });
  }
}

/** A temporary directory under os.tmpdir(), removed when the process exits at the latest. */
/** WORKERS of the services the load scripts start when a scenario does not set it: the environment's, else 1. */
export function benchWorkers(): string {
  return process.env.WORKERS ?? '1';
}

export function makeTempDir(prefix: string): string {
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Registers a child process so it is killed if the load process exits early. */
export function trackChild(child: Subprocess): void {
  installExitHook();
  liveChildren.add(child);
  void child.exited.then(() => liveChildren.delete(child));
}

export function rssOfPid(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat; null
 * where that cannot be read. On a shared machine CPU per request is steadier than
 * wall-clock throughput: it does not count the time the process waited for a core.
 */
export function cpuMsOfPid(pid: number, thread?: string): number | null {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
    // fields after the command name (which may hold spaces) start after the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_S : null;
  } catch {
    return null;
  }
}

/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)). */
const CLOCK_TICKS_PER_S = 100;

/**
 * CPU ms per kind of thread of a process so far: the JavaScript thread, JIT compiler
 * threads, garbage-collector helpers, Bun's thread pool (file I/O, fdatasync), other. JSC's
 * collector works partly on the JavaScript thread itself, so "gc" is a lower bound.
 */
export function cpuMsByThreadKind(pid: number): Record<ThreadKind, number> | null {
  const byKind: Record<ThreadKind, number> = { js: 0, jit: 0, gc: 0, pool: 0, other: 0 };
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      const ms = cpuMsOfPid(pid, task);
      if (ms !== null) byKind[threadKind(name, task === String(pid))] += ms;
    }
    return byKind;
  } catch {
    return null;
  }
}

export type ThreadKind = 'js' | 'jit' | 'gc' | 'pool' | 'other';

function threadKind(name: string, isMain: boolean): ThreadKind {
  if (isMain) return 'js';
  if (/JIT/i.test(name)) return 'jit';
  if (/Heap|Collector|GC/i.test(name)) return 'gc';
  if (/Pool/i.test(name)) return 'pool';
  return 'other';
}

/** Reads a stream line by line into `sink` (and stderr when echo is set). */
async function pumpLines(stream: ReadableStream<Uint8Array>, sink: string[], echo: boolean, prefix: string, onLine: () => void): Promise<void> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      sink.push(line);
      if (echo) process.stderr.write(`${prefix} ${line}\n`);
      onLine();
    }
  }
  if (pending !== '') {
    sink.push(pending);
    onLine();
  }
}

export async function waitForHealth(baseUrl: string, timeoutMs: number, intervalMs = 5): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastProblem = 'no answer';
  while (performance.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/api/health`);
      if (response.ok) {
        await response.arrayBuffer();
        return;
      }
      lastProblem = `HTTP ${response.status}`;
      await response.arrayBuffer();
    } catch (error) {
      lastProblem = String(error);
    }
    await sleep(intervalMs);
  }
  throw new Error(`${baseUrl}/api/health did not answer 200 within ${timeoutMs} ms (${lastProblem})`);
}

export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`login as ${email} failed: HTTP ${response.status} ${text.slice(0, 300)}`);
  const setCookie = response.headers.getSetCookie().find((c) => c.startsWith('session='));
  if (setCookie === undefined) throw new Error('login answered without a session cookie');
  return setCookie.split(';')[0]!;
}

export async function createConnection(baseUrl: string, cookie: string, name: string): Promise<{ connectionId: string; apiKey: string }> {
  const response = await fetch(`${baseUrl}/api/connections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`creating connection '${name}' failed: HTTP ${response.status} ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { connection: { id: string }; apiKey: string };
  return { connectionId: body.connection.id, apiKey: body.apiKey };
}

export async function deleteConnection(baseUrl: string, cookie: string, connectionId: string): Promise<void> {
  const response = await fetch(`${baseUrl}/api/connections/${encodeURIComponent(connectionId)}`, { method: 'DELETE', headers: { cookie } });
  const text = await response.text();
  if (!response.ok) throw new Error(`deleting connection ${connectionId} failed: HTTP ${response.status} ${text.slice(0, 300)}`);
}

interface Spawned {
  child: Subprocess<'ignore', 'pipe', 'pipe'>;
  port: number;
  spawnedAt: number;
}

export async function startService(options: StartOptions = {}): Promise<Service> {
  installExitHook();
  const label = options.label ?? 'service';
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? makeTempDir('jobwatch-load-');
  const logs: string[] = [];
  const logArrivalsMs: number[] = [];
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  // called right after each push to `logs`, so the two stay index for index
  const lineArrived = (): void => {
    logArrivalsMs.push(performance.now());
    wake();
  };
  let env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_EMAIL: LOAD_ADMIN.email,
    ADMIN_PASSWORD: LOAD_ADMIN.password,
    COOKIE_SECURE: 'false',
    // Scripts measure the service, not its per-connection byte budgets (1M jobs pass the default memory budget).
    ...{ DAILY_INGEST_MB: '0', CONNECTION_MEMORY_MB: '0' },
    WORKERS: benchWorkers(),
    ...options.env,
  };

  const waitForLog = (pattern: RegExp, timeoutMs: number, from = 0): Promise<string> =>
    new Promise((resolvePromise, reject) => {
      const check = (): boolean => {
        for (let i = from; i < logs.length; i++) {
          if (pattern.test(logs[i]!)) {
            cleanupWaiter();
            resolvePromise(logs[i]!);
            return true;
          }
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanupWaiter();
        reject(new Error(`${label}: no log line matching ${pattern} within ${timeoutMs} ms; last lines:\n${logs.slice(-15).join('\n')}`));
      }, timeoutMs);
      const waiter = (): void => void check();
      const cleanupWaiter = (): void => {
        clearTimeout(timer);
        waiters.delete(waiter);
      };
      if (!check()) waiters.add(waiter);
    });

  const spawn = async (): Promise<Spawned> => {
    const from = logs.length;
    const cmd = [process.execPath];
    if (options.cpuProfDir !== undefined) cmd.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`);
    cmd.push('src/main.ts');
    const spawnedAt = performance.now();
    const child = Bun.spawn(cmd, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
    trackChild(child);
    void pumpLines(child.stdout, logs, options.echo === true, `[${label}]`, lineArrived);
    void pumpLines(child.stderr, logs, options.echo === true, `[${label}!]`, lineArrived);
    const exitedEarly = child.exited.then((code) => {
      throw new Error(`${label} exited with code ${code} during start-up; last lines:\n${logs.slice(-15).join('\n')}`);
    });
    const listening = waitForLog(/listening on http:\/\/[^:\s]+:\d+/, 120_000, from);
    listening.catch(() => undefined);
    exitedEarly.catch(() => undefined);
    const line = await Promise.race([listening, exitedEarly]);
    const port = Number(/listening on http:\/\/[^:\s]+:(\d+)/.exec(line)![1]);
    return { child, port, spawnedAt };
  };

  let current: Spawned | null = await spawn();
  const baseUrl = `http://127.0.0.1:${current.port}`;
  await waitForHealth(baseUrl, 30_000);
  const startupMs = performance.now() - current.spawnedAt;

  let session: Omit<Session, 'baseUrl'> = { cookie: '', apiKey: '', connectionId: '' };
  if (options.noSession !== true) {
    const cookie = await login(baseUrl, LOAD_ADMIN.email, LOAD_ADMIN.password);
    const connection = await createConnection(baseUrl, cookie, `load-${Date.now()}`);
    session = { cookie, ...connection };
  }

  const stop = async (): Promise<{ shutdownMs: number; exitCode: number | null }> => {
    if (current === null) return { shutdownMs: 0, exitCode: null };
    const { child } = current;
    const started = performance.now();
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const exitCode = await child.exited;
    clearTimeout(killer);
    current = null;
    return { shutdownMs: performance.now() - started, exitCode };
  };

  const service: Service = {
    baseUrl,
    ...session,
    get pid() {
      return current?.child.pid ?? null;
    },
    dataDir,
    logs,
    logArrivalsMs,
    label,
    startupMs,
    rssBytes: () => (current === null ? null : rssOfPid(current.child.pid)),
    waitForLog,
    stop,
    async restart(extraEnv = {}) {
      const from = logs.length;
      const { shutdownMs } = await stop();
      const snapshotLine = logs.slice(from).find((l) => /snapshot at seq/.test(l)) ?? null;
      env = { ...env, ...extraEnv, PORT: String(new URL(baseUrl).port) };
      const fromStart = logs.length;
      current = await spawn();
      const recovered = waitForLog(/recovered:/, 120_000, fromStart);
      recovered.catch(() => undefined);
      await waitForHealth(baseUrl, 120_000, 2);
      const healthyAtMs = performance.now();
      const recoveredLine = await recovered;
      const restartMs = performance.now() - current.spawnedAt;
      const timedLines = logs.slice(fromStart).map((line, at) => ({ line, atMs: logArrivalsMs[fromStart + at]! }));
      const profile = restartProfile(timedLines, current.spawnedAt, healthyAtMs);
      // A restart may have a fresh session secret only if the data directory lost it; log in again anyway.
      if (options.noSession !== true) service.cookie = await login(baseUrl, LOAD_ADMIN.email, LOAD_ADMIN.password);
      return { shutdownMs, restartMs, recoveredLine, snapshotLine, profile };
    },
    async cleanup() {
      await stop();
      if (ownDataDir) removeTempDir(dataDir);
    },
  };
  return service;
}

/** Attaches to a running service: BASE_URL, ADMIN_EMAIL, ADMIN_PASSWORD; creates a fresh connection. */
export async function attachService(baseUrl: string, email: string, password: string): Promise<Service> {
  const base = baseUrl.replace(/\/+$/, '');
  await waitForHealth(base, 10_000);
  const cookie = await login(base, email, password);
  const connection = await createConnection(base, cookie, `load-${Date.now()}`);
  const unsupported = (what: string) => () => Promise.reject(new Error(`${what} is not possible on an attached service (BASE_URL)`));
  return {
    baseUrl: base,
    cookie,
    ...connection,
    pid: null,
    dataDir: null,
    logs: [],
    logArrivalsMs: [],
    label: 'attached',
    startupMs: null,
    rssBytes: () => null,
    waitForLog: unsupported('reading the log'),
    stop: async () => ({ shutdownMs: 0, exitCode: null }),
    restart: unsupported('restarting'),
    cleanup: async () => undefined,
  };
}

/** BASE_URL set: attach (needs ADMIN_EMAIL and ADMIN_PASSWORD); otherwise start a fresh service. */
export async function serviceFromEnv(options: StartOptions = {}): Promise<Service> {
  const baseUrl = process.env.BASE_URL;
  if (baseUrl !== undefined && baseUrl !== '') {
    const email = process.env.ADMIN_EMAIL;
    const password = process.env.ADMIN_PASSWORD;
    if (email === undefined || password === undefined) throw new Error('BASE_URL needs ADMIN_EMAIL and ADMIN_PASSWORD to log in');
    note(`attaching to ${baseUrl} (server settings such as FSYNC are whatever it was started with)`);
    return attachService(baseUrl, email, password);
  }
  const service = await startService(options);
  note(`started ${service.label} pid ${service.pid} on ${service.baseUrl} (${Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`).join(' ') || 'defaults'})`);
  return service;
}
