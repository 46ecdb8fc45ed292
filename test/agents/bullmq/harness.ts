/**
 * Real processes for the BullMQ agent's end-to-end tests: a redis-server on a free port
 * with a temporary directory, the BullMQ app's worker and producer under node (the
 * fixtures), jobwatch itself, and the agent under node, as a user runs it. Output of each
 * is kept for the assertions and for failure messages.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, login, makeDataDir, removeDir, REPO_ROOT, ServiceProcess, startService } from '../../blackbox/service-process.ts';

export const AGENT_BIN = join(REPO_ROOT, 'agents', 'bullmq', 'bin', 'jobwatch-bullmq.js');
const FIXTURES = join(import.meta.dir, 'fixtures');
export const NODE = Bun.which('node') ?? 'node';

if (!existsSync(join(REPO_ROOT, 'agents', 'bullmq', 'node_modules', 'bullmq'))) {
  throw new Error('agents/bullmq/node_modules is missing: run `npm install --prefix agents/bullmq --omit=dev` (the root postinstall does it)');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `jobwatch-bullmq-${label}-`));
}

/** A child process whose output is captured (the blackbox harness's process wrapper). */
export function spawnProcess(command: string[], env: Record<string, string>, dir: string): ServiceProcess {
  const proc = Bun.spawn(command, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  return new ServiceProcess(proc, dir);
}

export interface RedisServer {
  port: number;
  url: string;
  process: ServiceProcess;
  cli(...args: string[]): Promise<string>;
}

/** `stream-node-max-entries 10`: BullMQ trims its streams with `MAXLEN ~`, which only drops whole nodes; small nodes let a test trim a short stream. */
export async function startRedis(dir: string): Promise<RedisServer> {
  const port = await freePort();
  const server = spawnProcess(
    ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--stream-node-max-entries', '10'],
    {},
    dir,
  );
  await server.waitFor(/Ready to accept connections/, 15_000);
  const cli = async (...args: string[]) => {
    const proc = Bun.spawn(['redis-cli', '-p', String(port), ...args], { stdout: 'pipe', stderr: 'pipe' });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    return out.trim();
  };
  return { port, url: `redis://127.0.0.1:${port}`, process: server, cli };
}

/** The app's worker process: one BullMQ Worker per queue. */
export async function startWorker(redisUrl: string, dir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const worker = spawnProcess([NODE, join(FIXTURES, 'worker.mjs')], { REDIS_URL: redisUrl, ...env }, dir);
  await worker.waitFor(/^ready/m, 20_000);
  return worker;
}

export interface JobSpec {
  queue: string;
  name: string;
  data?: Record<string, unknown>;
  opts?: Record<string, unknown>;
}

/** Adds jobs through BullMQ's Queue.add, as the app would; returns their BullMQ ids. */
export async function produce(redisUrl: string, jobs: JobSpec[], env: Record<string, string> = {}): Promise<string[]> {
  const proc = Bun.spawn([NODE, join(FIXTURES, 'produce.mjs'), JSON.stringify(jobs)], { cwd: REPO_ROOT, env: { ...process.env, REDIS_URL: redisUrl, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`producer failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!);
}

/** Adds a flow through BullMQ's FlowProducer, as the app would; returns each job's `<queue>:<id>`, parent first (depth first). */
export async function produceFlow(redisUrl: string, flow: Record<string, unknown>): Promise<string[]> {
  const proc = Bun.spawn([NODE, join(FIXTURES, 'flow.mjs'), JSON.stringify(flow)], { cwd: REPO_ROOT, env: { ...process.env, REDIS_URL: redisUrl }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`flow producer failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!);
}

export function startAgent(options: { redisUrl: string; jobwatchUrl: string; apiKey: string; spoolDir: string; extra?: string[] }): ServiceProcess {
  return spawnProcess(
    [NODE, AGENT_BIN, '--redis', options.redisUrl, '--url', options.jobwatchUrl, '--api-key', options.apiKey, '--spool-dir', options.spoolDir, '--discover-interval', '1', ...(options.extra ?? [])],
    {},
    options.spoolDir,
  );
}

/** Polls `check` until it returns something truthy; fails naming `what`, the last value and the agent's log. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, log: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${String(last instanceof Error ? last.message : JSON.stringify(last)).slice(0, 2000)}\n${log().slice(-4000)}`);
    await Bun.sleep(150);
  }
}

/** Every BullMQ job jobwatch lists, by externalId (all pages). */
export async function listedJobs(baseUrl: string, cookie: string): Promise<Map<string, any>> {
  const all = new Map<string, any>();
  let cursor: string | null = null;
  do {
    const page = await getJson(baseUrl, `/api/jobs?framework=bullmq&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, cookie);
    if (page.status !== 200) throw new Error(`GET /api/jobs -> ${page.status}`);
    for (const job of page.body.data) all.set(job.externalId, job);
    cursor = page.body.pagination.nextCursor;
  } while (cursor);
  return all;
}

/** A job's detail (`GET /api/jobs/{id}`) by its externalId, or null while jobwatch has no such job. */
export async function jobDetail(baseUrl: string, cookie: string, externalId: string): Promise<any> {
  const job = (await listedJobs(baseUrl, cookie)).get(externalId);
  if (!job) return null;
  return (await getJson(baseUrl, `/api/jobs/${job.id}`, cookie)).body;
}

export interface Stack {
  dir: string;
  dataDir: string;
  redis: RedisServer;
  service: ServiceProcess;
  worker: ServiceProcess;
  agent: ServiceProcess;
  cookie: string;
  connection: { id: string; apiKey: string };
  startAgent(): ServiceProcess;
  stop(): Promise<void>;
}

/** Redis, jobwatch with a signed-in admin and a connection, the app's worker and the agent (with `agentArgs` besides the usual ones). */
export async function startStack(
  label: string,
  workerEnv: Record<string, string>,
  beforeAgent: (redisUrl: string) => Promise<unknown> = async () => undefined,
  agentArgs: string[] = [],
): Promise<Stack> {
  const dir = tempDir(label);
  const dataDir = makeDataDir(`bullmq-${label}`);
  const redis = await startRedis(dir);
  const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, `bullmq-${label}`);
  const worker = await startWorker(redis.url, dir, workerEnv);
  await beforeAgent(redis.url);
  const stack: Stack = {
    dir,
    dataDir,
    redis,
    service,
    worker,
    cookie,
    connection,
    agent: undefined as unknown as ServiceProcess,
    startAgent: () => startAgent({ redisUrl: redis.url, jobwatchUrl: stack.service.baseUrl, apiKey: connection.apiKey, spoolDir: join(dir, 'spool'), extra: agentArgs }),
    async stop() {
      for (const each of [stack.agent, stack.worker, stack.service, redis.process]) await each?.stop(5_000).catch(() => each?.kill());
      removeDir(dir);
      removeDir(dataDir);
    },
  };
  stack.agent = stack.startAgent();
  return stack;
}
