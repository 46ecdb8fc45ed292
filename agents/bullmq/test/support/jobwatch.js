/**
 * jobwatch itself for the agent's end-to-end tests: the service of this repository, run as
 * its start script runs it (`bun src/main.ts` from the repository root, with the Bun the
 * root's `npm install` brings), on a free loopback port with its own data directory, and
 * the few calls of its HTTP API the tests make (sign in, create a connection, read, ingest).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildOutput } from './child.js';
import { sleep } from './wait.js';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../../../..', import.meta.url)));
export const ADMIN_EMAIL = 'ops@example.test';
export const ADMIN_PASSWORD = 'correct-horse-battery';
const BUN = join(REPO_ROOT, 'node_modules', '.bin', 'bun');

/** @param {string} label */
export function makeDataDir(label) {
  return mkdtempSync(join(tmpdir(), `jobwatch-bullmq-service-${label}-`));
}

/** @param {string} dir */
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** jobwatch as a child process; `port` and `baseUrl` once it listens. */
export class JobwatchProcess extends ChildOutput {
  /** @param {string[]} command @param {NodeJS.ProcessEnv} env @param {string} dataDir */
  constructor(command, env, dataDir) {
    super(command, { cwd: REPO_ROOT, env });
    this.dataDir = dataDir;
    this.port = 0;
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.port}`;
  }
}

/**
 * Starts jobwatch on `dataDir` and waits until /api/health is ok. Only PATH and HOME come
 * from the environment running the tests: none of the service's own variables leak in.
 * @param {{ dataDir: string, env?: Record<string, string> }} options
 */
export async function startJobwatch(options, readyTimeoutMs = 30_000) {
  if (!existsSync(BUN)) throw new Error(`${BUN} is missing: run \`npm install\` in the repository root (it brings Bun, which runs jobwatch)`);
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: options.dataDir,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    ...options.env,
  };
  const service = new JobwatchProcess([BUN, 'src/main.ts'], env, options.dataDir);
  try {
    const match = await service.waitFor(/listening on http:\/\/[^\s:]+:(\d+)/, readyTimeoutMs);
    service.port = Number(match[1]);
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      try {
        const response = await fetch(`${service.baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
        if (response.status === 200 && /** @type {{ status?: string }} */ (await response.json()).status === 'ok') return service;
      } catch {
        // not ready yet
      }
      if (service.exitCode !== null) throw new Error(`jobwatch exited (${service.exitCode}) before it was healthy; output:\n${service.output}`);
      if (Date.now() > deadline) throw new Error(`/api/health not ok within ${readyTimeoutMs} ms; output:\n${service.output}`);
      await sleep(50);
    }
  } catch (error) {
    await service.kill();
    throw error;
  }
}

/** @param {Response} response */
async function json(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${response.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
}

/** Signs in; returns the `session=...` cookie pair. @param {string} baseUrl @param {string} email @param {string} password */
export async function login(baseUrl, email, password) {
  const response = await fetch(`${baseUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (response.status !== 200) throw new Error(`login as ${email} failed: ${response.status} ${JSON.stringify(await json(response))}`);
  const pair = response.headers
    .getSetCookie()
    .map((header) => header.split(';')[0]?.trim() ?? '')
    .find((each) => each.startsWith('session='));
  if (!pair || pair === 'session=') throw new Error(`login set no session cookie: ${JSON.stringify(response.headers.getSetCookie())}`);
  return pair;
}

/** @param {string} baseUrl @param {string} cookie @param {string} name @returns {Promise<{ id: string, apiKey: string }>} */
export async function createConnection(baseUrl, cookie, name) {
  const response = await fetch(`${baseUrl}/api/connections`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ name }) });
  const body = await json(response);
  if (response.status !== 201) throw new Error(`create connection failed: ${response.status} ${JSON.stringify(body)}`);
  return { id: body.connection.id, apiKey: body.apiKey };
}

/** @param {string} baseUrl @param {string} path @param {string} cookie @returns {Promise<{ status: number, body: any }>} */
export async function getJson(baseUrl, path, cookie) {
  const response = await fetch(`${baseUrl}${path}`, { headers: { cookie } });
  return { status: response.status, body: await json(response) };
}

/** Sends events as an agent does. @param {string} baseUrl @param {string} apiKey @param {unknown[]} events @returns {Promise<{ status: number, body: any }>} */
export async function ingest(baseUrl, apiKey, events) {
  const response = await fetch(`${baseUrl}/api/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ events }) });
  return { status: response.status, body: await json(response) };
}

/**
 * A valid job event (a Celery one unless `extra` says otherwise); tests override only what they are about.
 * @param {string} connectionId @param {number} atMs @param {Record<string, unknown>} [job] @param {Record<string, unknown>} [extra]
 */
export function jobEvent(connectionId, atMs, job = {}, extra = {}) {
  return {
    type: 'job_state_change',
    timestamp: new Date(atMs).toISOString(),
    framework: 'celery',
    connectionId,
    job: { externalId: 'task-1', name: 'tasks.add', queue: 'default', state: 'queued', ...job },
    ...extra,
  };
}

/** Every BullMQ job jobwatch lists, by externalId (all pages). @param {string} baseUrl @param {string} cookie */
export async function listedJobs(baseUrl, cookie) {
  /** @type {Map<string, any>} */
  const all = new Map();
  /** @type {string | null} */
  let cursor = null;
  do {
    const page = await getJson(baseUrl, `/api/jobs?framework=bullmq&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, cookie);
    if (page.status !== 200) throw new Error(`GET /api/jobs -> ${page.status}`);
    for (const job of page.body.data) all.set(job.externalId, job);
    cursor = page.body.pagination.nextCursor;
  } while (cursor);
  return all;
}

/** A job's detail (`GET /api/jobs/{id}`) by its externalId, or null while jobwatch has no such job. @param {string} baseUrl @param {string} cookie @param {string} externalId */
export async function jobDetail(baseUrl, cookie, externalId) {
  const job = (await listedJobs(baseUrl, cookie)).get(externalId);
  if (!job) return null;
  return (await getJson(baseUrl, `/api/jobs/${job.id}`, cookie)).body;
}
