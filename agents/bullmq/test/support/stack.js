/**
 * Real processes for the agent's end-to-end tests: a redis-server on a free port with a
 * temporary directory, the BullMQ app's worker and producer (the fixtures, under node),
 * jobwatch, and the agent under node as a user runs it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ChildOutput } from './child.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, login, makeDataDir, removeDir, startJobwatch } from './jobwatch.js';

const AGENT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const AGENT_BIN = join(AGENT_ROOT, 'bin', 'jobwatch-bullmq.js');
const FIXTURES = join(AGENT_ROOT, 'test', 'fixtures');
const run = promisify(execFile);

if (!existsSync(join(AGENT_ROOT, 'node_modules', 'bullmq'))) {
  throw new Error('agents/bullmq/node_modules is missing: run `npm install --omit=dev` in agents/bullmq (the root postinstall does it)');
}

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** @param {string} label */
export function tempDir(label) {
  return mkdtempSync(join(tmpdir(), `jobwatch-bullmq-${label}-`));
}

/** @param {string[]} command @param {Record<string, string>} env */
function spawnProcess(command, env) {
  return new ChildOutput(command, { cwd: AGENT_ROOT, env: { ...process.env, ...env } });
}

/**
 * `stream-node-max-entries 10`: BullMQ trims its streams with `MAXLEN ~`, which only drops
 * whole nodes; small nodes let a test trim a short stream.
 * @param {string} dir
 */
export async function startRedis(dir) {
  const port = await freePort();
  const server = spawnProcess(
    ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--stream-node-max-entries', '10'],
    {},
  );
  await server.waitFor(/Ready to accept connections/, 15_000);
  /** @param {string[]} args */
  const cli = async (...args) => (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
  return { port, url: `redis://127.0.0.1:${port}`, process: server, cli };
}
/** @typedef {Awaited<ReturnType<typeof startRedis>>} RedisServer */

/** The app's worker process: one BullMQ Worker per queue of QUEUES. @param {string} redisUrl @param {Record<string, string>} [env] */
export async function startWorker(redisUrl, env = {}) {
  const worker = spawnProcess([process.execPath, join(FIXTURES, 'worker.mjs')], { REDIS_URL: redisUrl, ...env });
  await worker.waitFor(/^ready/m, 20_000);
  return worker;
}

/** @typedef {{ queue: string, name: string, data?: Record<string, unknown>, opts?: Record<string, unknown> }} JobSpec */

/**
 * Adds jobs through BullMQ's Queue.add, as the app would; returns their BullMQ ids.
 * @param {string} redisUrl @param {JobSpec[]} jobs @param {Record<string, string>} [env]
 * @returns {Promise<string[]>}
 */
export async function produce(redisUrl, jobs, env = {}) {
  const { stdout } = await run(process.execPath, [join(FIXTURES, 'produce.mjs'), JSON.stringify(jobs)], { cwd: AGENT_ROOT, env: { ...process.env, REDIS_URL: redisUrl, ...env } });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '[]');
}

/**
 * Adds a flow through BullMQ's FlowProducer, as the app would (BullMQ's FlowJob:
 * `{name, queueName, data, opts, children}`); returns each job's `<queue>:<id>`, parent
 * first, depth first.
 * @param {string} redisUrl @param {Record<string, unknown>} flow
 * @returns {Promise<string[]>}
 */
export async function produceFlow(redisUrl, flow) {
  const { stdout } = await run(process.execPath, [join(FIXTURES, 'flow.mjs'), JSON.stringify(flow)], { cwd: AGENT_ROOT, env: { ...process.env, REDIS_URL: redisUrl } });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '[]');
}

/** `jobwatch-bullmq` as a user runs it. @param {{ redisUrl: string, jobwatchUrl: string, apiKey: string, spoolDir: string, extra?: string[] }} options */
export function startAgent(options) {
  return spawnProcess(
    [process.execPath, AGENT_BIN, '--redis', options.redisUrl, '--url', options.jobwatchUrl, '--api-key', options.apiKey, '--spool-dir', options.spoolDir, '--discover-interval', '1', ...(options.extra ?? [])],
    {},
  );
}

/**
 * Redis, jobwatch with a signed-in admin and a connection, the app's worker and the agent
 * (with `agentArgs` besides the usual ones). `beforeAgent` runs once Redis and the worker
 * are up, before the agent starts.
 * @param {string} label
 * @param {Record<string, string>} workerEnv
 * @param {(redisUrl: string) => Promise<unknown>} [beforeAgent]
 * @param {string[]} [agentArgs]
 */
export async function startStack(label, workerEnv, beforeAgent = async () => undefined, agentArgs = []) {
  const dir = tempDir(label);
  const dataDir = makeDataDir(label);
  const redis = await startRedis(dir);
  // jobwatch masks no key: what a test finds masked, the agent masked
  const service = await startJobwatch({ dataDir, env: { REDACT_KEYS: 'none' } });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, `bullmq-${label}`);
  const worker = await startWorker(redis.url, workerEnv);
  await beforeAgent(redis.url);
  const startOwnAgent = () => startAgent({ redisUrl: redis.url, jobwatchUrl: stack.service.baseUrl, apiKey: connection.apiKey, spoolDir: join(dir, 'spool'), extra: agentArgs });
  const stack = {
    dir,
    dataDir,
    redis,
    service,
    worker,
    cookie,
    connection,
    /** @type {ChildOutput} */
    agent: /** @type {any} */ (undefined),
    startAgent: startOwnAgent,
    /** Stops every process of the stack (the ones a test put in its place too) and removes its directories. */
    async stop() {
      for (const each of [stack.agent, stack.worker, stack.service, redis.process]) await each?.stop(5_000).catch(() => each?.kill());
      removeDir(dir);
      removeDir(dataDir);
    },
  };
  stack.agent = startOwnAgent();
  return stack;
}
/** @typedef {Awaited<ReturnType<typeof startStack>>} Stack */
