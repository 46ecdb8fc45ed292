/**
 * The BullMQ agent end to end: a real redis-server, a BullMQ app (worker and producer
 * processes under node), jobwatch, and `jobwatch-bullmq` under node. Each test checks
 * what jobwatch shows through its HTTP API. The tests share one set of processes and
 * build on each other in order (restarts and outages in the later ones).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { assertFields } from './support/fields.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, getJson, ingest, jobDetail, jobEvent, listedJobs, login, startJobwatch } from './support/jobwatch.js';
import { produce, startAgent, startStack, startWorker } from './support/stack.js';
import { eventually, sleep } from './support/wait.js';
import { hostname } from 'node:os';

const TEST_MS = 60_000;
let dir;
let dataDir;
let redis;
let service;
let stack;
let agent;
let cookie;
let connection;
let servicePort;

const agentLog = () => agent?.output ?? '';
const runAgent = () => startAgent({ redisUrl: redis.url, jobwatchUrl: service.baseUrl, apiKey: connection.apiKey, spoolDir: join(dir, 'spool') });

const bullmqJobs = () => listedJobs(service.baseUrl, cookie);
const detail = (externalId) => jobDetail(service.baseUrl, cookie, externalId);

/** Waits until each job is in jobwatch in the given state; returns their details. */
async function untilStates(expected, timeoutMs = 25_000) {
  await eventually(
    `jobs in states ${JSON.stringify(expected)}`,
    async () => {
      const jobs = await bullmqJobs();
      const wrong = Object.entries(expected).filter(([id, state]) => jobs.get(id)?.state !== state);
      if (wrong.length > 0) throw new Error(`not yet: ${wrong.map(([id]) => `${id}=${jobs.get(id)?.state}`).join(', ')}`);
      return true;
    },
    timeoutMs,
    agentLog
  );
  const details = {};
  for (const id of Object.keys(expected)) details[id] = await detail(id);
  return details;
}

async function action(jobId, kind) {
  const response = await fetch(`${service.baseUrl}/api/jobs/${jobId}/${kind}`, { method: 'POST', headers: { cookie } });
  assert.equal(response.status, 200);
}

/** The states a job went through (an entry with a note, a revoke's or retry's, may repeat the state before it). */
const historyOf = (job) => job.stateHistory.map((entry) => entry.state).filter((state, index, all) => state !== all[index - 1]);
const notesOf = (job) => job.stateHistory.flatMap((entry) => entry.note === undefined ? [] : [entry.note]);

before(async () => {
  stack = await startStack('e2e', { QUEUES: 'mail,reports,trimmed', WORKER_NAME: 'w1', CONCURRENCY: '5' }, (redisUrl) =>
  // a job from before the agent existed: the first start reads it from the state sets
  produce(redisUrl, [{ queue: 'mail', name: 'before-agent', data: {}, opts: { jobId: 'early' } }])
  );
  ({ dir, dataDir, redis, service, agent, cookie, connection } = stack);
  servicePort = service.port;
  await agent.waitFor(/queue mail: first seen; 1 jobs \(1 completed\)/, 20_000);
}, { timeout: TEST_MS });

after(async () => {
  if (!stack) return; // the set-up failed before anything started
  Object.assign(stack, { agent, service });
  await stack.stop();
});

describe('jobwatch-bullmq against a real BullMQ app', () => {
  test('success, failure with retries and backoff, delayed, progress, removeOnComplete and one job id in two queues', { timeout: TEST_MS }, async () => {
    const [ok, flaky, broken, later, sharedMail, sharedReports] = await produce(redis.url, [
    { queue: 'mail', name: 'send-welcome', data: { sleepMs: 30 }, opts: { removeOnComplete: true } },
    { queue: 'mail', name: 'send-digest', data: { failAttempts: 1, progress: [25, 75] }, opts: { attempts: 3, backoff: { type: 'fixed', delay: 300 } } },
    { queue: 'mail', name: 'send-broken', data: { failAttempts: 9 }, opts: { attempts: 2, backoff: { type: 'fixed', delay: 100 } } },
    { queue: 'mail', name: 'send-later', data: {}, opts: { delay: 1500 } },
    { queue: 'mail', name: 'shared-in-mail', data: {}, opts: { jobId: 'shared-1' } },
    { queue: 'reports', name: 'shared-in-reports', data: {}, opts: { jobId: 'shared-1' } }]
    );
    const jobs = await untilStates({
      'mail:early': 'completed',
      [`mail:${ok}`]: 'completed',
      [`mail:${flaky}`]: 'completed',
      [`mail:${broken}`]: 'failed',
      [`mail:${later}`]: 'completed',
      [`mail:${sharedMail}`]: 'completed',
      [`reports:${sharedReports}`]: 'completed'
    });
    assert.equal(jobs['mail:early'].extensions.reconciled, true);
    // removeOnComplete: the hash is gone, what was read when it was added and started remains
    assert.equal(await redis.cli('EXISTS', `bull:mail:${ok}`), '0');
    assertFields(jobs[`mail:${ok}`], { name: 'send-welcome', queue: 'mail', framework: 'bullmq', attempt: 1, maxRetries: 0 });
    assert.deepEqual(historyOf(jobs[`mail:${ok}`]), ['queued', 'active', 'completed']);
    // one run, from its start to its end; the worker slept 30 ms in it (a timer may fire a millisecond early)
    const welcome = jobs[`mail:${ok}`];
    assert.equal(welcome.durationMs, Date.parse(welcome.completedAt) - Date.parse(welcome.startedAt));
    assert.ok(welcome.durationMs >= 29);

    const digest = jobs[`mail:${flaky}`];
    assert.deepEqual(historyOf(digest), ['queued', 'active', 'retrying', 'queued', 'active', 'completed']);
    assertFields(digest, { attempt: 2, maxRetries: 2, progress: 0.75 });
    assert.match(digest.workerId, /^w1@127\.0\.0\.1:\d+$/);

    const failed = jobs[`mail:${broken}`];
    assertFields(failed, { attempt: 2, maxRetries: 1, error: 'planned failure 2' });
    assert.ok(failed.stacktrace.includes('Error: planned failure 2'));
    assert.deepEqual(historyOf(failed), ['queued', 'active', 'retrying', 'queued', 'active', 'failed']);

    const delayed = jobs[`mail:${later}`];
    assert.equal(historyOf(delayed)[0], 'scheduled');
    assert.notEqual(delayed.scheduledFor, null);
    // Redis's clock: the job started when the delay ran out, not before
    assert.ok(Date.parse(delayed.startedAt) >= Date.parse(delayed.scheduledFor) - 5);

    assert.equal(jobs[`mail:${sharedMail}`].name, 'shared-in-mail');
    assert.equal(jobs[`reports:${sharedReports}`].name, 'shared-in-reports');
    assert.notEqual(jobs[`mail:${sharedMail}`].id, jobs[`reports:${sharedReports}`].id);
  });

  test("a job's data, return value, progress object and log lines reach its detail with secrets masked by the agent; a log BullMQ trims (keepLogs) is followed without a line lost or repeated", { timeout: TEST_MS }, async () => {
    const [report, tailed] = await produce(redis.url, [
      {
        queue: 'reports',
        name: 'export-report',
        data: {
          userId: 42,
          account: { owner: 'ada', credentials: [{ password: 'hunter2', apiKey: 'k-1' }] },
          steps: [
            { log: 'loading rows', progress: { stage: 'load', percent: 25 } },
            { log: 'rendering', progress: { stage: 'render', percent: 75, auth: { token: 'tok-9' } } },
          ],
          stepMs: 150,
          returnValue: { url: 'https://files.example/r.pdf', rows: 120, signature: { secret: 's3' } },
        },
      },
      { queue: 'reports', name: 'tail-logs', data: { steps: [1, 2, 3, 4, 5, 6].map((n) => ({ log: `line ${n}`, progress: n * 10 })), stepMs: 150 }, opts: { keepLogs: 3 } },
    ]);
    const jobs = await untilStates({ [`reports:${report}`]: 'completed', [`reports:${tailed}`]: 'completed' });
    const exported = jobs[`reports:${report}`];
    // jobwatch masks nothing here (REDACT_KEYS=none): the agent did, at every depth
    assertFields(exported.args, { userId: 42 });
    assert.deepEqual(exported.args.account, { owner: 'ada', credentials: [{ password: '[redacted]', apiKey: '[redacted]' }] });
    assert.deepEqual(exported.args.steps[1].progress.auth, { token: '[redacted]' });
    assert.deepEqual(exported.result, { url: 'https://files.example/r.pdf', rows: 120, signature: { secret: '[redacted]' } });
    assert.deepEqual(exported.progressData, { stage: 'render', percent: 75, auth: { token: '[redacted]' } });
    assert.equal(exported.progress, 0.75);
    assert.deepEqual(exported.logs, ['loading rows', 'rendering']);
    assert.deepEqual(exported.truncated, []);
    assert.doesNotMatch(JSON.stringify(exported), /hunter2|k-1|tok-9|"s3"/);
    // BullMQ kept only the last 3 lines; the agent read them as they came, each once
    assert.equal(await redis.cli('LRANGE', `bull:reports:${tailed}:logs`, '0', '-1'), 'line 4\nline 5\nline 6');
    assert.deepEqual(jobs[`reports:${tailed}`].logs, ['line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6']);
  });

  test('a delayed job shows when it will run while it waits, in its detail and on the scheduled list', { timeout: TEST_MS }, async () => {
    const beforeMs = Date.now();
    const [waiting] = await produce(redis.url, [{ queue: 'mail', name: 'send-in-a-while', data: {}, opts: { delay: 12_000 } }]);
    const afterMs = Date.now();
    const { [`mail:${waiting}`]: scheduled } = await untilStates({ [`mail:${waiting}`]: 'scheduled' });
    assert.notEqual(scheduled.scheduledFor, null);
    // BullMQ's time: Redis's clock when the job was added, plus its delay (Redis runs on this machine)
    assert.ok(Date.parse(scheduled.scheduledFor) >= beforeMs + 12_000 - 1_000);
    assert.ok(Date.parse(scheduled.scheduledFor) <= afterMs + 12_000 + 1_000);
    assert.deepEqual(historyOf(scheduled), ['scheduled']);
    const list = await getJson(service.baseUrl, '/api/jobs?framework=bullmq&state=scheduled&limit=100', cookie);
    assert.equal(list.body.data.find((job) => job.externalId === `mail:${waiting}`)?.scheduledFor, scheduled.scheduledFor);
  });

  test('workers come from the Redis client list and queues from the state sets', { timeout: TEST_MS }, async () => {
    // one BullMQ Worker per queue in the app's worker process
    const workers = await eventually('three bullmq workers', async () => {
      const { body } = await getJson(service.baseUrl, '/api/workers?framework=bullmq', cookie);
      return body.data.length === 3 ? body.data : null;
    });
    assert.deepEqual(workers.map((w) => w.queues[0]).sort(), ['mail', 'reports', 'trimmed']);
    const mailWorker = workers.find((w) => w.queues[0] === 'mail');
    assert.notEqual(mailWorker.state, 'offline');
    assert.equal(mailWorker.metadata.workerName, 'w1');
    // the worker and the agent both reach Redis over loopback: the worker runs here, named by this host
    assert.equal(mailWorker.hostname, hostname());
    assert.ok(mailWorker.processedTotal > 0);
    // a waiting and a prioritized job in a queue nobody consumes: depth 2, no consumers
    await produce(redis.url, [{ queue: 'parked', name: 'nobody-runs-me', data: {} }, { queue: 'parked', name: 'urgent', opts: { priority: 5 } }]);
    const parked = await eventually('queue parked with depth 2 (waiting + prioritized)', async () => {
      const { body } = await getJson(service.baseUrl, '/api/queues?framework=bullmq', cookie);
      return body.data.find((q) => q.name === 'parked' && q.depth === 2);
    }, 20_000, agentLog);
    assert.equal(parked.consumers, 0);
    const { body } = await getJson(service.baseUrl, '/api/queues?framework=bullmq', cookie);
    assert.equal(body.data.find((q) => q.name === 'mail').consumers, 1);
  });

  test('the framework filter separates BullMQ jobs from Celery ones', { timeout: TEST_MS }, async () => {
    const reply = await ingest(service.baseUrl, connection.apiKey, [jobEvent(connection.id, Date.now(), { externalId: 'celery-task-1' })]);
    assert.equal(reply.body.accepted, 1);
    const celery = await getJson(service.baseUrl, '/api/jobs?framework=celery', cookie);
    assert.deepEqual(celery.body.data.map((job) => job.externalId), ['celery-task-1']);
    const bullmq = await getJson(service.baseUrl, '/api/jobs?framework=bullmq&limit=100', cookie);
    assert.ok(bullmq.body.data.length > 5);
    assert.equal(bullmq.body.data.every((job) => job.framework === 'bullmq'), true);
  });

  test('revoke removes a waiting and a prioritized job from BullMQ; a running job is acknowledged as not cancelled, with the reason', { timeout: TEST_MS }, async () => {
    const jobs = await bullmqJobs();
    const waiting = [...jobs.values()].find((job) => job.name === 'nobody-runs-me');
    const prioritized = [...jobs.values()].find((job) => job.queue === 'parked' && job.name === 'urgent');
    assert.equal(waiting.state, 'queued');
    assert.equal(prioritized.state, 'queued');
    const [running] = await produce(redis.url, [{ queue: 'mail', name: 'long-run', data: { sleepMs: 3000 } }]);
    await untilStates({ [`mail:${running}`]: 'active' });
    const runningJob = (await bullmqJobs()).get(`mail:${running}`);
    for (const job of [waiting, prioritized, runningJob]) await action(job.id, 'revoke');
    const bullmqId = (job) => job.externalId.slice('parked:'.length);
    await eventually('both parked jobs gone from Redis', async () => (await redis.cli('EXISTS', `bull:parked:${bullmqId(waiting)}`, `bull:parked:${bullmqId(prioritized)}`)) === '0', 20_000, agentLog);
    const outcome = await eventually('the running job\'s revoke acknowledged', async () => (await detail(`mail:${running}`))?.lastCommand?.status === 'failed' && (await detail(`mail:${running}`)), 20_000, agentLog);
    assert.ok(outcome.lastCommand.reason.includes('cannot be cancelled from outside its worker'));
    assertFields((await detail(waiting.externalId)).lastCommand, { type: 'revoke', status: 'done' });
    // the job ran on in BullMQ, and jobwatch shows what BullMQ did: never cancelled, the refusal in its history
    const ended = await untilStates({ [`mail:${running}`]: 'completed', [waiting.externalId]: 'cancelled', [prioritized.externalId]: 'cancelled' });
    assert.deepEqual(historyOf(ended[`mail:${running}`]), ['queued', 'active', 'completed']);
    assert.deepEqual(notesOf(ended[`mail:${running}`]), ['revoke requested', `revoke refused: ${outcome.lastCommand.reason}`]);
    assert.deepEqual(historyOf(ended[waiting.externalId]), ['queued', 'cancelled']);
  });

  test('retry re-queues a failed job in BullMQ, which runs it again', { timeout: TEST_MS }, async () => {
    const [once] = await produce(redis.url, [{ queue: 'mail', name: 'fails-once', data: { failAttempts: 1 }, opts: { attempts: 1 } }]);
    await untilStates({ [`mail:${once}`]: 'failed' });
    await action((await bullmqJobs()).get(`mail:${once}`).id, 'retry');
    const jobs = await untilStates({ [`mail:${once}`]: 'completed' });
    assertFields(jobs[`mail:${once}`].lastCommand, { type: 'retry', status: 'done' });
    assert.deepEqual(historyOf(jobs[`mail:${once}`]), ['queued', 'active', 'failed', 'retrying', 'queued', 'active', 'completed']);
    assert.equal(jobs[`mail:${once}`].attempt, 2);
  });

  test('a retried job running again has no duration while it runs (never a negative one), and the list shows no earlier run\'s error', { timeout: TEST_MS }, async () => {
    const [slow] = await produce(redis.url, [{ queue: 'mail', name: 'fails-then-runs-slowly', data: { failAttempts: 1, sleepMs: 2500 }, opts: { attempts: 1 } }]);
    const externalId = `mail:${slow}`;
    const failed = (await untilStates({ [externalId]: 'failed' }))[externalId];
    assertFields(failed, { attempt: 1, maxRetries: 0, manualRetries: 0, error: 'planned failure 1' });
    assert.ok(failed.durationMs >= 2400, `durationMs ${failed.durationMs}`);
    await action(failed.id, 'retry');
    // the second run sleeps 2.5 s: caught while it runs, as the list and the detail show it
    const running = await eventually(
      'the second run active',
      async () => {
        const job = (await bullmqJobs()).get(externalId);
        return job?.state === 'active' && historyOf(await detail(externalId)).includes('retrying') && job;
      },
      20_000,
      agentLog,
    );
    assertFields(running, { durationMs: null, completedAt: null, error: null });
    assert.ok(Date.parse(running.startedAt) > Date.parse(failed.completedAt));
    const done = (await untilStates({ [externalId]: 'completed' }))[externalId];
    const listed = (await bullmqJobs()).get(externalId);
    assert.equal(listed.error, null);
    assertFields(done, { attempt: 2, maxRetries: 0, manualRetries: 1, error: null, stacktrace: null });
    assert.ok(done.durationMs >= 2400, `durationMs ${done.durationMs}`);
    assert.equal(done.durationMs, Date.parse(done.completedAt) - Date.parse(done.startedAt));
  });

  test('stopped and restarted, the agent resumes from its checkpoint: nothing missing, nothing reconciled', { timeout: TEST_MS }, async () => {
    assert.equal(await agent.stop(), 0);
    const ids = await produce(redis.url, Array.from({ length: 5 }, (_, n) => ({ queue: 'mail', name: `while-away-${n}`, data: {} })));
    await eventually('the jobs done in BullMQ', async () => (await redis.cli('ZCARD', 'bull:mail:completed')) !== '0' && (await redis.cli('LLEN', 'bull:mail:wait')) === '0');
    agent = runAgent();
    await agent.waitFor(/queue mail: resuming its event stream after \d+-\d+/);
    const jobs = await untilStates(Object.fromEntries(ids.map((id) => [`mail:${id}`, 'completed'])));
    for (const job of Object.values(jobs)) {
      assert.deepEqual(historyOf(job), ['queued', 'active', 'completed']);
      assert.equal(job.extensions.reconciled, undefined);
    }
    assert.ok(!agent.output.includes('first seen'));
  });

  test('stopped while the stream was trimmed past its checkpoint, the agent reconciles the queue and says so', { timeout: TEST_MS }, async () => {
    const env = { MAX_LEN_EVENTS: '10' };
    await produce(redis.url, [{ queue: 'trimmed', name: 'first', data: {} }], env);
    await untilStates({ 'trimmed:1': 'completed' });
    await eventually('the checkpoint saved', async () => agent.output.includes('trimmed') && true);
    assert.equal(await agent.stop(), 0);
    const ids = await produce(redis.url, Array.from({ length: 40 }, (_, n) => ({ queue: 'trimmed', name: `burst-${n}`, data: {} })), env);
    await eventually('the burst done in BullMQ', async () => (await redis.cli('ZCARD', 'bull:trimmed:completed')) === '41');
    agent = runAgent();
    const logged = await agent.waitFor(/queue trimmed: events after \d+-\d+ were trimmed from the stream .* reconciled from the state sets: (\d+) jobs \((\d+) completed\)/);
    assert.equal(Number(logged[2]), 41);
    const jobs = await untilStates(Object.fromEntries(ids.map((id) => [`trimmed:${id}`, 'completed'])));
    assert.equal(Object.values(jobs).every((job) => job.name.startsWith('burst-')), true);
    // the app's own setting is untouched: the agent never writes queue metadata
    assert.equal(await redis.cli('HGET', 'bull:trimmed:meta', 'opts.maxLenEvents'), '10');
  });

  test('while jobwatch is down the agent spools, and delivers everything when it is back', { timeout: TEST_MS }, async () => {
    await service.stop();
    const ids = await produce(redis.url, Array.from({ length: 3 }, (_, n) => ({ queue: 'mail', name: `during-outage-${n}`, data: {} })));
    await agent.waitFor(/flush failed: jobwatch unreachable/);
    await eventually('events in the spool', async () => /\d+ events waiting/.test(agent.output) && true);
    service = await startJobwatch({ dataDir, env: { PORT: String(servicePort), REDACT_KEYS: 'none' } });
    cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    await untilStates(Object.fromEntries(ids.map((id) => [`mail:${id}`, 'completed'])), 40_000);
    assert.match(agent.output, /jobwatch reachable again after [\d.]+s; sending the spooled events in order/);
  });

  test('a worker killed with kill -9 goes offline; its job stalls back to queued and another worker finishes it', { timeout: TEST_MS }, async () => {
    const doomed = await startWorker(redis.url, { QUEUES: 'fragile', WORKER_NAME: 'doomed', LOCK_MS: '1500', STALLED_MS: '500' });
    const [id] = await produce(redis.url, [{ queue: 'fragile', name: 'hangs-in-doomed', data: { hangIn: 'doomed' } }]);
    const running = await untilStates({ [`fragile:${id}`]: 'active' });
    assert.match(running[`fragile:${id}`].workerId, /^doomed@/);
    await doomed.kill();
    const offline = await eventually('the doomed worker offline', async () => {
      const { body } = await getJson(service.baseUrl, '/api/workers?framework=bullmq&state=offline', cookie);
      return body.data.find((w) => w.metadata.workerName === 'doomed');
    }, 20_000, agentLog);
    assert.deepEqual(offline.queues, ['fragile']);
    // the agent said so itself, not only jobwatch's 6 s rule
    assert.match(agent.output, /worker doomed@\S+ on queue fragile disconnected: offline/);
    const rescuer = await startWorker(redis.url, { QUEUES: 'fragile', WORKER_NAME: 'rescuer', LOCK_MS: '1500', STALLED_MS: '500' });
    try {
      const jobs = await untilStates({ [`fragile:${id}`]: 'completed' }, 30_000);
      const job = jobs[`fragile:${id}`];
      assert.deepEqual(historyOf(job), ['queued', 'active', 'queued', 'active', 'completed']);
      assert.match(job.workerId, /^rescuer@/);
      assert.equal(job.attempt, 1);
    } finally {
      await rescuer.stop();
    }
  });

  test('a job whose progress is 40 nested arrays, among 95 others: every job is shown finished, nothing refused or dropped', { timeout: TEST_MS }, async () => {
    const bulkWorker = await startWorker(redis.url, { QUEUES: 'bulk', WORKER_NAME: 'bulk', CONCURRENCY: '10' });
    try {
      let nested = 1;
      for (let level = 0; level < 40; level++) nested = [nested];
      const ids = await produce(redis.url, Array.from({ length: 96 }, (_, n) => ({ queue: 'bulk', name: n === 48 ? 'deep-progress' : `bulk-${n}`, data: n === 48 ? { progress: [nested], stepMs: 0 } : {} })));
      await untilStates(Object.fromEntries(ids.map((id) => [`bulk:${id}`, 'completed'])), 40_000);
      assert.doesNotMatch(agent.output, /refused|dropped/);
    } finally {
      await bulkWorker.stop();
    }
  });

  test('a queue name that would forge a log line is written escaped', { timeout: TEST_MS }, async () => {
    // BullMQ refuses ':' in a queue name, not a newline or an escape sequence
    const forged = 'forge\nFORGED ERROR jobwatch refused every event\u001b[0m';
    await produce(redis.url, [{ queue: forged, name: 'nobody-runs-me' }]);
    await agent.waitFor(/found 1 new queue under prefix bull: forge\\nFORGED ERROR jobwatch refused every event\\x1b\[0m/);
    assert.deepEqual(agent.output.split('\n').filter((line) => line.startsWith('FORGED')), []);
  });

  test('a queue whose name is longer than jobwatch keeps is not watched, and the log says so once', { timeout: TEST_MS }, async () => {
    const long = `long-${'q'.repeat(300)}`;
    await produce(redis.url, [{ queue: long, name: 'too-long-queue' }]);
    await agent.waitFor(/queue "long-q+"\.\.\. \(305 characters\) under prefix bull is not watched: jobwatch keeps queue names of at most 255 characters/);
    await sleep(2500); // two more scans
    assert.equal(agent.output.match(/\(305 characters\)/g).length, 1);
    assert.equal((await bullmqJobs()).has(`${long}:1`), false);
  });

  test('the spool directory and its files are the agent\'s alone (0700, 0600)', { timeout: TEST_MS }, async () => {
    const spool = join(dir, 'spool');
    await eventually('the status file written', async () => existsSync(join(spool, 'status-bull.json')));
    const modeOf = (path) => statSync(path).mode & 0o777;
    assert.equal(modeOf(spool), 0o700);
    assert.equal(modeOf(join(spool, 'batches')), 0o700);
    assert.equal(modeOf(join(spool, 'checkpoints-bull.json')), 0o600);
    assert.equal(modeOf(join(spool, 'status-bull.json')), 0o600);
  });
});
