/**
 * The BullMQ agent end to end: a real redis-server, a BullMQ app (worker and producer
 * processes under node), jobwatch, and `jobwatch-bullmq` under node. Each test checks
 * what jobwatch shows through its HTTP API. The tests share one set of processes and
 * build on each other in order (restarts and outages in the later ones).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, getJson, ingest, login, startService, type ServiceProcess } from '../../blackbox/service-process.ts';
import { jobEvent } from '../../support/events.ts';
import { eventually, jobDetail, listedJobs, produce, startAgent, startStack, startWorker, type RedisServer, type Stack } from './harness.ts';
import { hostname } from 'node:os';

const TEST_MS = 60_000;
let dir: string;
let dataDir: string;
let redis: RedisServer;
let service: ServiceProcess;
let stack: Stack;
let agent: ServiceProcess;
let cookie: string;
let connection: { id: string; apiKey: string };
let servicePort: number;

const agentLog = () => agent?.output ?? '';
const runAgent = () => startAgent({ redisUrl: redis.url, jobwatchUrl: service.baseUrl, apiKey: connection.apiKey, spoolDir: join(dir, 'spool') });

const bullmqJobs = () => listedJobs(service.baseUrl, cookie);
const detail = (externalId: string) => jobDetail(service.baseUrl, cookie, externalId);

/** Waits until each job is in jobwatch in the given state; returns their details. */
async function untilStates(expected: Record<string, string>, timeoutMs = 25_000): Promise<Record<string, any>> {
  await eventually(
    `jobs in states ${JSON.stringify(expected)}`,
    async () => {
      const jobs = await bullmqJobs();
      const wrong = Object.entries(expected).filter(([id, state]) => jobs.get(id)?.state !== state);
      if (wrong.length > 0) throw new Error(`not yet: ${wrong.map(([id]) => `${id}=${jobs.get(id)?.state}`).join(', ')}`);
      return true;
    },
    timeoutMs,
    agentLog,
  );
  const details: Record<string, any> = {};
  for (const id of Object.keys(expected)) details[id] = await detail(id);
  return details;
}

async function action(jobId: string, kind: 'revoke' | 'retry') {
  const response = await fetch(`${service.baseUrl}/api/jobs/${jobId}/${kind}`, { method: 'POST', headers: { cookie } });
  expect(response.status).toBe(200);
}

/** The states a job went through (an entry with a note, a revoke's or retry's, may repeat the state before it). */
const historyOf = (job: any): string[] => job.stateHistory.map((entry: any) => entry.state).filter((state: string, index: number, all: string[]) => state !== all[index - 1]);
const notesOf = (job: any): string[] => job.stateHistory.flatMap((entry: any) => (entry.note === undefined ? [] : [entry.note]));

beforeAll(async () => {
  stack = await startStack('e2e', { QUEUES: 'mail,reports,trimmed', WORKER_NAME: 'w1', CONCURRENCY: '5' }, (redisUrl) =>
    // a job from before the agent existed: the first start reads it from the state sets
    produce(redisUrl, [{ queue: 'mail', name: 'before-agent', data: {}, opts: { jobId: 'early' } }]),
  );
  ({ dir, dataDir, redis, service, agent, cookie, connection } = stack);
  servicePort = service.port;
  await agent.waitFor(/queue mail: first seen; 1 jobs \(1 completed\)/, 20_000);
}, TEST_MS);

afterAll(async () => {
  if (!stack) return; // the set-up failed before anything started
  Object.assign(stack, { agent, service });
  await stack.stop();
});

describe('jobwatch-bullmq against a real BullMQ app', () => {
  test('success, failure with retries and backoff, delayed, progress, removeOnComplete and one job id in two queues', async () => {
    const [ok, flaky, broken, later, sharedMail, sharedReports] = await produce(redis.url, [
      { queue: 'mail', name: 'send-welcome', data: { sleepMs: 30 }, opts: { removeOnComplete: true } },
      { queue: 'mail', name: 'send-digest', data: { failAttempts: 1, progress: [25, 75] }, opts: { attempts: 3, backoff: { type: 'fixed', delay: 300 } } },
      { queue: 'mail', name: 'send-broken', data: { failAttempts: 9 }, opts: { attempts: 2, backoff: { type: 'fixed', delay: 100 } } },
      { queue: 'mail', name: 'send-later', data: {}, opts: { delay: 1500 } },
      { queue: 'mail', name: 'shared-in-mail', data: {}, opts: { jobId: 'shared-1' } },
      { queue: 'reports', name: 'shared-in-reports', data: {}, opts: { jobId: 'shared-1' } },
    ]);
    const jobs = await untilStates({
      'mail:early': 'completed',
      [`mail:${ok}`]: 'completed',
      [`mail:${flaky}`]: 'completed',
      [`mail:${broken}`]: 'failed',
      [`mail:${later}`]: 'completed',
      [`mail:${sharedMail}`]: 'completed',
      [`reports:${sharedReports}`]: 'completed',
    });
    expect(jobs['mail:early'].extensions.reconciled).toBe(true);
    // removeOnComplete: the hash is gone, what was read when it was added and started remains
    expect(await redis.cli('EXISTS', `bull:mail:${ok}`)).toBe('0');
    expect(jobs[`mail:${ok}`]).toMatchObject({ name: 'send-welcome', queue: 'mail', framework: 'bullmq', attempt: 1, maxRetries: 0 });
    expect(historyOf(jobs[`mail:${ok}`])).toEqual(['queued', 'active', 'completed']);
    // one run, from its start to its end; the worker slept 30 ms in it (a timer may fire a millisecond early)
    const welcome = jobs[`mail:${ok}`];
    expect(welcome.durationMs).toBe(Date.parse(welcome.completedAt) - Date.parse(welcome.startedAt));
    expect(welcome.durationMs).toBeGreaterThanOrEqual(29);

    const digest = jobs[`mail:${flaky}`];
    expect(historyOf(digest)).toEqual(['queued', 'active', 'retrying', 'queued', 'active', 'completed']);
    expect(digest).toMatchObject({ attempt: 2, maxRetries: 2, progress: 0.75 });
    expect(digest.workerId).toMatch(/^w1@127\.0\.0\.1:\d+$/);

    const failed = jobs[`mail:${broken}`];
    expect(failed).toMatchObject({ attempt: 2, maxRetries: 1, error: 'planned failure 2' });
    expect(failed.stacktrace).toContain('Error: planned failure 2');
    expect(historyOf(failed)).toEqual(['queued', 'active', 'retrying', 'queued', 'active', 'failed']);

    const delayed = jobs[`mail:${later}`];
    expect(historyOf(delayed)[0]).toBe('scheduled');
    expect(delayed.scheduledFor).not.toBeNull();
    // Redis's clock: the job started when the delay ran out, not before
    expect(Date.parse(delayed.startedAt)).toBeGreaterThanOrEqual(Date.parse(delayed.scheduledFor) - 5);

    expect(jobs[`mail:${sharedMail}`].name).toBe('shared-in-mail');
    expect(jobs[`reports:${sharedReports}`].name).toBe('shared-in-reports');
    expect(jobs[`mail:${sharedMail}`].id).not.toBe(jobs[`reports:${sharedReports}`].id);
  }, TEST_MS);

  test('a delayed job shows when it will run while it waits, in its detail and on the scheduled list', async () => {
    const beforeMs = Date.now();
    const [waiting] = await produce(redis.url, [{ queue: 'mail', name: 'send-in-a-while', data: {}, opts: { delay: 12_000 } }]);
    const afterMs = Date.now();
    const { [`mail:${waiting}`]: scheduled } = await untilStates({ [`mail:${waiting}`]: 'scheduled' });
    expect(scheduled.scheduledFor).not.toBeNull();
    // BullMQ's time: Redis's clock when the job was added, plus its delay (Redis runs on this machine)
    expect(Date.parse(scheduled.scheduledFor)).toBeGreaterThanOrEqual(beforeMs + 12_000 - 1_000);
    expect(Date.parse(scheduled.scheduledFor)).toBeLessThanOrEqual(afterMs + 12_000 + 1_000);
    expect(historyOf(scheduled)).toEqual(['scheduled']);
    const list = await getJson(service.baseUrl, '/api/jobs?framework=bullmq&state=scheduled&limit=100', cookie);
    expect(list.body.data.find((job: any) => job.externalId === `mail:${waiting}`)?.scheduledFor).toBe(scheduled.scheduledFor);
  }, TEST_MS);

  test('workers come from the Redis client list and queues from the state sets', async () => {
    // one BullMQ Worker per queue in the app's worker process
    const workers = await eventually('three bullmq workers', async () => {
      const { body } = await getJson(service.baseUrl, '/api/workers?framework=bullmq', cookie);
      return body.data.length === 3 ? body.data : null;
    });
    expect(workers.map((w: any) => w.queues[0]).sort()).toEqual(['mail', 'reports', 'trimmed']);
    const mailWorker = workers.find((w: any) => w.queues[0] === 'mail');
    expect(mailWorker.state).not.toBe('offline');
    expect(mailWorker.metadata.workerName).toBe('w1');
    // the worker and the agent both reach Redis over loopback: the worker runs here, named by this host
    expect(mailWorker.hostname).toBe(hostname());
    expect(mailWorker.processedTotal).toBeGreaterThan(0);
    // a waiting and a prioritized job in a queue nobody consumes: depth 2, no consumers
    await produce(redis.url, [{ queue: 'parked', name: 'nobody-runs-me', data: {} }, { queue: 'parked', name: 'urgent', opts: { priority: 5 } }]);
    const parked = await eventually('queue parked with depth 2 (waiting + prioritized)', async () => {
      const { body } = await getJson(service.baseUrl, '/api/queues?framework=bullmq', cookie);
      return body.data.find((q: any) => q.name === 'parked' && q.depth === 2);
    }, 20_000, agentLog);
    expect(parked.consumers).toBe(0);
    const { body } = await getJson(service.baseUrl, '/api/queues?framework=bullmq', cookie);
    expect(body.data.find((q: any) => q.name === 'mail').consumers).toBe(1);
  }, TEST_MS);

  test('the framework filter separates BullMQ jobs from Celery ones', async () => {
    const reply = await ingest(service.baseUrl, connection.apiKey, [jobEvent(connection.id, Date.now(), { externalId: 'celery-task-1' })]);
    expect(reply.body.accepted).toBe(1);
    const celery = await getJson(service.baseUrl, '/api/jobs?framework=celery', cookie);
    expect(celery.body.data.map((job: any) => job.externalId)).toEqual(['celery-task-1']);
    const bullmq = await getJson(service.baseUrl, '/api/jobs?framework=bullmq&limit=100', cookie);
    expect(bullmq.body.data.length).toBeGreaterThan(5);
    expect(bullmq.body.data.every((job: any) => job.framework === 'bullmq')).toBe(true);
  }, TEST_MS);

  test('revoke removes a waiting and a prioritized job from BullMQ; a running job is acknowledged as not cancelled, with the reason', async () => {
    const jobs = await bullmqJobs();
    const waiting = [...jobs.values()].find((job) => job.name === 'nobody-runs-me');
    const prioritized = [...jobs.values()].find((job) => job.queue === 'parked' && job.name === 'urgent');
    expect(waiting.state).toBe('queued');
    expect(prioritized.state).toBe('queued');
    const [running] = await produce(redis.url, [{ queue: 'mail', name: 'long-run', data: { sleepMs: 3000 } }]);
    await untilStates({ [`mail:${running}`]: 'active' });
    const runningJob = (await bullmqJobs()).get(`mail:${running}`);
    for (const job of [waiting, prioritized, runningJob]) await action(job.id, 'revoke');
    const bullmqId = (job: any) => job.externalId.slice('parked:'.length);
    await eventually('both parked jobs gone from Redis', async () => (await redis.cli('EXISTS', `bull:parked:${bullmqId(waiting)}`, `bull:parked:${bullmqId(prioritized)}`)) === '0', 20_000, agentLog);
    const outcome = await eventually('the running job\'s revoke acknowledged', async () => (await detail(`mail:${running}`))?.lastCommand?.status === 'failed' && (await detail(`mail:${running}`)), 20_000, agentLog);
    expect(outcome.lastCommand.reason).toContain('cannot be cancelled from outside its worker');
    expect((await detail(waiting.externalId)).lastCommand).toMatchObject({ type: 'revoke', status: 'done' });
    // the job ran on in BullMQ, and jobwatch shows what BullMQ did: never cancelled, the refusal in its history
    const ended = await untilStates({ [`mail:${running}`]: 'completed', [waiting.externalId]: 'cancelled', [prioritized.externalId]: 'cancelled' });
    expect(historyOf(ended[`mail:${running}`])).toEqual(['queued', 'active', 'completed']);
    expect(notesOf(ended[`mail:${running}`])).toEqual(['revoke requested', `revoke refused: ${outcome.lastCommand.reason}`]);
    expect(historyOf(ended[waiting.externalId])).toEqual(['queued', 'cancelled']);
  }, TEST_MS);

  test('retry re-queues a failed job in BullMQ, which runs it again', async () => {
    const [once] = await produce(redis.url, [{ queue: 'mail', name: 'fails-once', data: { failAttempts: 1 }, opts: { attempts: 1 } }]);
    await untilStates({ [`mail:${once}`]: 'failed' });
    await action((await bullmqJobs()).get(`mail:${once}`).id, 'retry');
    const jobs = await untilStates({ [`mail:${once}`]: 'completed' });
    expect(jobs[`mail:${once}`].lastCommand).toMatchObject({ type: 'retry', status: 'done' });
    expect(historyOf(jobs[`mail:${once}`])).toEqual(['queued', 'active', 'failed', 'retrying', 'queued', 'active', 'completed']);
    expect(jobs[`mail:${once}`].attempt).toBe(2);
  }, TEST_MS);

  test('stopped and restarted, the agent resumes from its checkpoint: nothing missing, nothing reconciled', async () => {
    expect(await agent.stop()).toBe(0);
    const ids = await produce(redis.url, Array.from({ length: 5 }, (_, n) => ({ queue: 'mail', name: `while-away-${n}`, data: {} })));
    await eventually('the jobs done in BullMQ', async () => (await redis.cli('ZCARD', 'bull:mail:completed')) !== '0' && (await redis.cli('LLEN', 'bull:mail:wait')) === '0');
    agent = runAgent();
    await agent.waitFor(/queue mail: resuming its event stream after \d+-\d+/);
    const jobs = await untilStates(Object.fromEntries(ids.map((id) => [`mail:${id}`, 'completed'])));
    for (const job of Object.values(jobs)) {
      expect(historyOf(job)).toEqual(['queued', 'active', 'completed']);
      expect(job.extensions.reconciled).toBeUndefined();
    }
    expect(agent.output).not.toContain('first seen');
  }, TEST_MS);

  test('stopped while the stream was trimmed past its checkpoint, the agent reconciles the queue and says so', async () => {
    const env = { MAX_LEN_EVENTS: '10' };
    await produce(redis.url, [{ queue: 'trimmed', name: 'first', data: {} }], env);
    await untilStates({ 'trimmed:1': 'completed' });
    await eventually('the checkpoint saved', async () => agent.output.includes('trimmed') && true);
    expect(await agent.stop()).toBe(0);
    const ids = await produce(redis.url, Array.from({ length: 40 }, (_, n) => ({ queue: 'trimmed', name: `burst-${n}`, data: {} })), env);
    await eventually('the burst done in BullMQ', async () => (await redis.cli('ZCARD', 'bull:trimmed:completed')) === '41');
    agent = runAgent();
    const logged = await agent.waitFor(/queue trimmed: events after \d+-\d+ were trimmed from the stream .* reconciled from the state sets: (\d+) jobs \((\d+) completed\)/);
    expect(Number(logged[2])).toBe(41);
    const jobs = await untilStates(Object.fromEntries(ids.map((id) => [`trimmed:${id}`, 'completed'])));
    expect(Object.values(jobs).every((job) => job.name.startsWith('burst-'))).toBe(true);
    // the app's own setting is untouched: the agent never writes queue metadata
    expect(await redis.cli('HGET', 'bull:trimmed:meta', 'opts.maxLenEvents')).toBe('10');
  }, TEST_MS);

  test('while jobwatch is down the agent spools, and delivers everything when it is back', async () => {
    await service.stop();
    const ids = await produce(redis.url, Array.from({ length: 3 }, (_, n) => ({ queue: 'mail', name: `during-outage-${n}`, data: {} })));
    await agent.waitFor(/flush failed: jobwatch unreachable/);
    await eventually('events in the spool', async () => /\d+ events waiting/.test(agent.output) && true);
    service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, PORT: String(servicePort) } });
    cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    await untilStates(Object.fromEntries(ids.map((id) => [`mail:${id}`, 'completed'])), 40_000);
    expect(agent.output).toMatch(/jobwatch reachable again after [\d.]+s; sending the spooled events in order/);
  }, TEST_MS);

  test('a worker killed with kill -9 goes offline; its job stalls back to queued and another worker finishes it', async () => {
    const doomed = await startWorker(redis.url, dir, { QUEUES: 'fragile', WORKER_NAME: 'doomed', LOCK_MS: '1500', STALLED_MS: '500' });
    const [id] = await produce(redis.url, [{ queue: 'fragile', name: 'hangs-in-doomed', data: { hangIn: 'doomed' } }]);
    const running = await untilStates({ [`fragile:${id}`]: 'active' });
    expect(running[`fragile:${id}`].workerId).toMatch(/^doomed@/);
    await doomed.kill();
    const offline = await eventually('the doomed worker offline', async () => {
      const { body } = await getJson(service.baseUrl, '/api/workers?framework=bullmq&state=offline', cookie);
      return body.data.find((w: any) => w.metadata.workerName === 'doomed');
    }, 20_000, agentLog);
    expect(offline.queues).toEqual(['fragile']);
    // the agent said so itself, not only jobwatch's 6 s rule
    expect(agent.output).toMatch(/worker doomed@\S+ on queue fragile disconnected: offline/);
    const rescuer = await startWorker(redis.url, dir, { QUEUES: 'fragile', WORKER_NAME: 'rescuer', LOCK_MS: '1500', STALLED_MS: '500' });
    try {
      const jobs = await untilStates({ [`fragile:${id}`]: 'completed' }, 30_000);
      const job = jobs[`fragile:${id}`];
      expect(historyOf(job)).toEqual(['queued', 'active', 'queued', 'active', 'completed']);
      expect(job.workerId).toMatch(/^rescuer@/);
      expect(job.attempt).toBe(1);
    } finally {
      await rescuer.stop();
    }
  }, TEST_MS);

  test('a job whose progress is 40 nested arrays, among 95 others: every job is shown finished, nothing refused or dropped', async () => {
    const bulkWorker = await startWorker(redis.url, dir, { QUEUES: 'bulk', WORKER_NAME: 'bulk', CONCURRENCY: '10' });
    try {
      let nested: unknown = 1;
      for (let level = 0; level < 40; level++) nested = [nested];
      const ids = await produce(redis.url, Array.from({ length: 96 }, (_, n) => ({ queue: 'bulk', name: n === 48 ? 'deep-progress' : `bulk-${n}`, data: n === 48 ? { progress: [nested], stepMs: 0 } : {} })));
      await untilStates(Object.fromEntries(ids.map((id) => [`bulk:${id}`, 'completed'])), 40_000);
      expect(agent.output).not.toMatch(/refused|dropped/);
    } finally {
      await bulkWorker.stop();
    }
  }, TEST_MS);

  test('a queue name that would forge a log line is written escaped', async () => {
    // BullMQ refuses ':' in a queue name, not a newline or an escape sequence
    const forged = 'forge\nFORGED ERROR jobwatch refused every event\u001b[0m';
    await produce(redis.url, [{ queue: forged, name: 'nobody-runs-me' }]);
    await agent.waitFor(/found 1 new queue under prefix bull: forge\\nFORGED ERROR jobwatch refused every event\\x1b\[0m/);
    expect(agent.output.split('\n').filter((line) => line.startsWith('FORGED'))).toEqual([]);
  }, TEST_MS);

  test('a queue whose name is longer than jobwatch keeps is not watched, and the log says so once', async () => {
    const long = `long-${'q'.repeat(300)}`;
    await produce(redis.url, [{ queue: long, name: 'too-long-queue' }]);
    await agent.waitFor(/queue "long-q+"\.\.\. \(305 characters\) under prefix bull is not watched: jobwatch keeps queue names of at most 255 characters/);
    await Bun.sleep(2500); // two more scans
    expect(agent.output.match(/\(305 characters\)/g)).toHaveLength(1);
    expect((await bullmqJobs()).has(`${long}:1`)).toBe(false);
  }, TEST_MS);

  test('the spool directory and its files are the agent\'s alone (0700, 0600)', async () => {
    const spool = join(dir, 'spool');
    await eventually('the status file written', async () => existsSync(join(spool, 'status-bull.json')));
    const modeOf = (path: string) => statSync(path).mode & 0o777;
    expect(modeOf(spool)).toBe(0o700);
    expect(modeOf(join(spool, 'batches'))).toBe(0o700);
    expect(modeOf(join(spool, 'checkpoints-bull.json'))).toBe(0o600);
    expect(modeOf(join(spool, 'status-bull.json'))).toBe(0o600);
  }, TEST_MS);
});
