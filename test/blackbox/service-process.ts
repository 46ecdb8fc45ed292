/**
 * Black-box harness: runs the real service as a child process (`bun src/main.ts`, what the
 * package's start script runs), talks to it only over HTTP, reads its log from
 * stdout/stderr, and looks at the data directory only as files. Nothing of the service
 * is imported.
 *
 * Processes are spawned with the bun binary that runs the tests (`process.execPath`),
 * not through `npx`/`npm`: a signal sent to such a wrapper does not reach the service,
 * so a SIGKILL would leave the real process running. `viaScript: true` runs
 * `bun run start` (the package script), which does forward SIGTERM; its pid is then the
 * wrapper's, and `servicePid()` reads the service's own from DATA_DIR/LOCK.
 */
import type { Subprocess } from 'bun';
import { afterAll, afterEach } from 'bun:test';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { fnv1a32 } from '../../actors/partition-of.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dir, '..', '..');
export const ADMIN_EMAIL = 'ops@example.test';
export const ADMIN_PASSWORD = 'correct-horse-battery';
/** Per-test limit: bun's default of 5 s is too short for tests that start processes on a busy machine. */
export const TEST_TIMEOUT_MS = 45_000;

/** Variables of the service that must not leak in from the environment running the tests. */
const SERVICE_VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'ADMIN_EMAIL', 'ADMIN_PASSWORD', 'DAILY_EVENT_LIMIT', 'RETENTION_HOURS', 'FSYNC',
  'MAX_JOBS_PER_CONNECTION', 'COOKIE_SECURE', 'SESSION_SECRET', 'SESSION_TTL_HOURS', 'DEDUP_KEYS_MAX',
  'SNAPSHOT_LOG_MB', 'SNAPSHOT_INTERVAL_MINUTES', 'TRUSTED_PROXIES',
  'PUBLIC_URL', 'BODY_TIMEOUT_SECONDS', 'IN_FLIGHT_REQUESTS_PER_CONNECTION', 'IN_FLIGHT_MB_PER_CONNECTION', 'METRICS_TOKEN', 'LOG_FORMAT', 'LOG_LEVEL',
  'CLUSTER_NATS_URL', 'CLUSTER_NODE_ID', 'CLUSTER_REPLICAS', 'CLUSTER_LEASE_MS', 'CLUSTER_SECRET', 'CLUSTER_ADVERTISE_URL', 'CLUSTER_STANDBYS',
  'ALERT_EVAL_SECONDS', 'ALERT_WEBHOOK_ALLOW_PRIVATE',
];

const live = new Set<ServiceProcess>();
/** Wrappers whose service may outlive them (kept after the wrapper exits, for cleanup). */
const wrapped = new Set<ServiceProcess>();

/** WORKERS of the services the tests start: the variable the tests run with, 1 when unset. */
export function testWorkers(): string {
  return process.env.WORKERS ?? '1';
}

export function makeDataDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `jobwatch-blackbox-${label}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface SpawnOptions {
  dataDir: string;
  /** Set or (with undefined) remove variables; PORT=0 and HOST=127.0.0.1 unless given. */
  env?: Record<string, string | undefined>;
  /** Run the package script (`bun run start`) instead of `bun src/main.ts`. */
  viaScript?: boolean;
  /** Run another command instead, e.g. `['npm', 'start']` or the CLI; its pid may not be the service's. */
  command?: string[];
}

export class ServiceProcess {
  private text = '';
  private waiters: Array<() => void> = [];
  private readonly exited: Promise<number>;
  private pumps: Promise<void>[];
  port = 0;
  exitCode: number | null = null;
  /** When run through a wrapper (`bun run start`, `npm start`): the service's own pid, from LOCK. */
  wrappedPid: number | undefined;

  constructor(
    readonly proc: Subprocess<'ignore', 'pipe', 'pipe'>,
    readonly dataDir: string,
  ) {
    live.add(this);
    this.pumps = [this.pump(proc.stdout), this.pump(proc.stderr)];
    this.exited = proc.exited.then(async (code) => {
      // a grandchild left running (an `npm start` wrapper that exited) keeps the pipes open
      await Promise.race([Promise.all(this.pumps), Bun.sleep(2_000)]);
      this.exitCode = code;
      live.delete(this);
      this.notify();
      return code;
    });
  }

  get pid(): number {
    return this.proc.pid;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Everything the process printed so far, stdout and stderr in arrival order. */
  get output(): string {
    return this.text;
  }

  /** The pid written into DATA_DIR/LOCK: the service itself, also when run through a wrapper. */
  servicePid(): number {
    return Number.parseInt(readFileSync(join(this.dataDir, 'LOCK'), 'utf8'), 10);
  }

  /** Resolves with the first match of `pattern` in the output; rejects on exit or timeout. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.text.match(pattern);
      if (match) return match;
      if (this.exitCode !== null) throw new Error(`process exited (${this.exitCode}) before printing ${pattern}; output:\n${this.text}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}; output:\n${this.text}`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  async waitForExit(timeoutMs = 20_000): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`process ${this.pid} did not exit within ${timeoutMs} ms; output:\n${this.text}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM (clean shutdown) and wait; falls back to SIGKILL if it hangs. */
  async stop(timeoutMs = 20_000): Promise<number> {
    if (this.exitCode !== null) return this.exitCode;
    this.proc.kill('SIGTERM');
    try {
      return await this.waitForExit(timeoutMs);
    } catch (error) {
      this.proc.kill('SIGKILL');
      await this.exited;
      throw error;
    }
  }

  /** SIGKILL: the process gets no chance to flush, snapshot or unlock (nor does a wrapped service left behind). */
  async kill(): Promise<number> {
    if (this.wrappedPid !== undefined && isProcessAlive(this.wrappedPid)) process.kill(this.wrappedPid, 'SIGKILL');
    if (this.exitCode !== null) return this.exitCode;
    this.proc.kill('SIGKILL');
    return this.waitForExit();
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.text += decoder.decode(value, { stream: true });
        this.notify();
      }
    } catch {
      // the pipe closed with the process
    }
    this.text += decoder.decode();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

function serviceEnv(options: SpawnOptions): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete env[name];
  // WORKERS as the tests were run with (`WORKERS=4 npm test`), else one shard: never the machine's cores
  Object.assign(env, { PORT: '0', HOST: '127.0.0.1', DATA_DIR: options.dataDir, WORKERS: testWorkers() }, options.env ?? {});
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) clean[name] = value;
  return clean;
}

/** Starts the process and returns at once (no readiness wait). */
export function spawnService(options: SpawnOptions): ServiceProcess {
  const command = options.command ?? (options.viaScript ? [process.execPath, 'run', 'start'] : [process.execPath, 'src/main.ts']);
  const proc = Bun.spawn(command, { cwd: REPO_ROOT, env: serviceEnv(options), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  return new ServiceProcess(proc, options.dataDir);
}

/** Starts the process, parses the port from the `listening on` line and polls /api/health until ok. */
export async function startService(options: SpawnOptions, readyTimeoutMs = 30_000): Promise<ServiceProcess> {
  const service = spawnService(options);
  try {
    return await waitUntilServing(service, readyTimeoutMs);
  } catch (error) {
    await service.kill().catch(() => undefined);
    throw error;
  }
}

/** For a process already spawned: the `listening on` line, then /api/health ok (in cluster mode: its replica recovered and following). */
export async function waitUntilServing(service: ServiceProcess, readyTimeoutMs = 30_000): Promise<ServiceProcess> {
  const match = await service.waitFor(/listening on http:\/\/[^\s:]+:(\d+)/, readyTimeoutMs);
  service.port = Number(match[1]);
  const lockPid = service.servicePid();
  if (lockPid !== service.pid) {
    service.wrappedPid = lockPid;
    wrapped.add(service);
  }
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    try {
      const response = await fetch(`${service.baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
      const body = (await response.json()) as { status?: string; role?: string };
      // a cluster node listens before its replica recovered (answering 503): serving means a replica that follows
      if (response.status === 200 && body.status === 'ok' && (body.role === undefined || body.role === 'node')) return service;
    } catch {
      // not ready yet
    }
    if (service.exitCode !== null) throw new Error(`process exited (${service.exitCode}) before it was healthy; output:\n${service.output}`);
    if (Date.now() > deadline) throw new Error(`/api/health not ok within ${readyTimeoutMs} ms; output:\n${service.output}`);
    await Bun.sleep(50);
  }
}

/** Kills every process this module started that is still running (for afterEach/afterAll). */
export async function killAllServices(): Promise<void> {
  await Promise.all([...live, ...wrapped].map((service) => service.kill().catch(() => undefined)));
  wrapped.clear();
}

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

// ---------------------------------------------------------------------------------------
// HTTP client

export interface Connection {
  id: string;
  apiKey: string;
}

export interface IngestResult {
  status: number;
  body: { accepted?: number; rejected?: number; skipped?: number; truncated?: number; usage?: unknown; error?: unknown };
}

export interface JobItem {
  id: string;
  externalId: string;
  name: string;
  state: string;
  connectionId: string;
  [field: string]: unknown;
}

async function json(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${response.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
}

/** Logs in and returns the `session=...` cookie pair. */
export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`login as ${email} failed: ${response.status} ${JSON.stringify(await json(response))}`);
  const pair = response.headers
    .getSetCookie()
    .map((header) => header.split(';')[0]!.trim())
    .find((each) => each.startsWith('session='));
  if (!pair || pair === 'session=') throw new Error(`login set no session cookie: ${JSON.stringify(response.headers.getSetCookie())}`);
  return pair;
}

export async function createConnection(baseUrl: string, cookie: string, name: string): Promise<Connection> {
  const response = await fetch(`${baseUrl}/api/connections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name }),
  });
  const body = await json(response);
  if (response.status !== 201) throw new Error(`create connection failed: ${response.status} ${JSON.stringify(body)}`);
  return { id: body.connection.id, apiKey: body.apiKey };
}

export async function ingest(baseUrl: string, apiKey: string, events: unknown[], signal?: AbortSignal): Promise<IngestResult> {
  const response = await fetch(`${baseUrl}/api/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ events }),
    signal,
  });
  return { status: response.status, body: await json(response) };
}

export async function getJson(baseUrl: string, path: string, cookie: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { cookie } });
  return { status: response.status, body: await json(response) };
}

/** Walks GET /api/jobs page by page with the cursor; fails on a repeated id or a wrong total. */
export async function listAllJobs(baseUrl: string, cookie: string, pageSize = 100): Promise<JobItem[]> {
  const jobs: JobItem[] = [];
  const seen = new Set<string>();
  let cursor: string | null = null;
  let total: number | undefined;
  for (let page = 0; ; page++) {
    const query: string = `/api/jobs?limit=${pageSize}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { status, body } = await getJson(baseUrl, query, cookie);
    if (status !== 200) throw new Error(`GET ${query} -> ${status} ${JSON.stringify(body)}`);
    total ??= body.pagination.total as number;
    for (const job of body.data as JobItem[]) {
      if (seen.has(job.id)) throw new Error(`job ${job.id} (${job.externalId}) returned twice while walking pages`);
      seen.add(job.id);
      jobs.push(job);
    }
    cursor = body.pagination.nextCursor;
    if (cursor === null) break;
    if (page > 100_000) throw new Error('cursor walk does not end');
  }
  if (jobs.length !== total) throw new Error(`walked ${jobs.length} jobs but the first page said total ${total}`);
  return jobs;
}

export function jobEvent(connectionId: string, externalId: string, atMs = Date.now(), state = 'queued') {
  return {
    type: 'job_state_change',
    timestamp: new Date(atMs).toISOString(),
    framework: 'celery',
    connectionId,
    job: { externalId, name: 'tasks.blackbox', state, queue: 'default' },
  };
}

/** `count` events for jobs `<prefix>-0` .. `<prefix>-<count-1>`, one event per job. */
export function batchOfJobs(connectionId: string, prefix: string, count: number, atMs = Date.now()) {
  return Array.from({ length: count }, (_, index) => jobEvent(connectionId, `${prefix}-${index}`, atMs));
}

// ---------------------------------------------------------------------------------------
// Data directory files (names from persistence/file-names.ts, frame layout from frame.ts)

/**
 * The directory of a store, as docs/operations.md describes the layout: `log` for one store;
 * with shards (`shards.json`) the store of the shard keeping `connectionId`, or without one
 * the accounts' store. Read from the files, as an operator would.
 */
export function logDir(dataDir: string, connectionId?: string): string {
  const layoutFile = join(dataDir, 'shards.json');
  if (!existsSync(layoutFile)) return join(dataDir, 'log');
  const { workers, dir } = JSON.parse(readFileSync(layoutFile, 'utf8')) as { workers: number; dir: string };
  return join(dataDir, dir, connectionId === undefined ? 'accounts' : `shard-${fnv1a32(connectionId) % workers}`);
}

/** log-<20-digit first seq>.seg files of a store (see logDir), oldest first (a name sort is a seq sort). */
export function segmentFiles(dataDir: string, connectionId?: string): string[] {
  const dir = logDir(dataDir, connectionId);
  return readdirSync(dir)
    .filter((name) => /^log-\d{20}\.seg$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

export const FRAME_HEADER_BYTES = 20;

/** Start offsets and sizes of the frames of a log segment (magic u32 | length u32 | crc u32 | seq u64 | payload). */
export function frameLayout(bytes: Uint8Array): Array<{ offset: number; bytes: number }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Array<{ offset: number; bytes: number }> = [];
  for (let offset = 0; offset + FRAME_HEADER_BYTES <= bytes.length; ) {
    const size = FRAME_HEADER_BYTES + view.getUint32(offset + 4);
    if (offset + size > bytes.length) break;
    frames.push({ offset, bytes: size });
    offset += size;
  }
  return frames;
}

/** A `() => number` view of the project's seeded generator (persistence/seeded-random.ts). */
export function seededRandom(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

/** BLACKBOX_SEED from the environment replays a run; otherwise a fresh seed. */
export function testSeed(): number {
  const fromEnv = process.env.BLACKBOX_SEED;
  return fromEnv !== undefined && /^\d+$/.test(fromEnv) ? Number(fromEnv) : Math.floor(Math.random() * 2 ** 31);
}

/**
 * For a test file: stops every service a test started after each test, and removes the
 * returned list's data directories after the file. Push each directory you make onto it.
 */
export function cleanUpServices(): string[] {
  const dirs: string[] = [];
  afterEach(killAllServices);
  afterAll(() => dirs.forEach(removeDir));
  return dirs;
}
