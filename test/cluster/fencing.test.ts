/**
 * A paused owner (SIGSTOP past its lease) must not write after it resumes: the standby
 * takes the lease, replays and appends its owner marker, so the old owner's next
 * append carries an expected last sequence the subject has moved past and JetStream
 * refuses it. The old owner answers 503, logs `fenced`, and exits; the refused event is
 * nowhere, and the new owner keeps serving.
 */
import { afterAll, expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  cleanUpServices,
  createConnection,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  spawnService,
  startService,
  waitUntilServing,
} from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { nodeEnv } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

test('an owner paused past its lease is fenced by the log when it resumes, says so, and exits', async () => {
  nats = await startNatsCluster();
  const dirA = makeDataDir('cluster-paused');
  const dirB = makeDataDir('cluster-successor');
  dirs.push(dirA, dirB);
  const a = await startService({ dataDir: dirA, env: nodeEnv(nats.url, 'node-a') });
  const b = spawnService({ dataDir: dirB, env: nodeEnv(nats.url, 'node-b') });
  await b.waitFor(/waiting for the lease held by node-a/);
  const cookie = await login(a.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(a.baseUrl, cookie, 'fencing');
  expect((await ingest(a.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'before-pause', 10))).status).toBe(200);

  a.proc.kill('SIGSTOP');
  try {
    await waitUntilServing(b, 30_000);
    // sent while A is still stopped, so it is waiting in A's socket when A resumes
    const late = ingest(a.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'after-pause', 10), AbortSignal.timeout(20_000)).catch(
      (error: unknown) => ({ status: 0, body: { error: String(error) } }),
    );
    await Bun.sleep(200);
    a.proc.kill('SIGCONT');
    const answer = await late;
    expect(answer.status).toBe(503);
  } finally {
    a.proc.kill('SIGCONT');
  }
  await a.waitFor(/fenced: jobwatch\.log\.p\.0 has moved past seq \d+/);
  expect(await a.waitForExit()).not.toBe(0);

  const jobs = (await listAllJobs(b.baseUrl, cookie, 100)).map((job) => job.externalId);
  expect(jobs.filter((id) => id.startsWith('before-pause'))).toHaveLength(10);
  expect(jobs.filter((id) => id.startsWith('after-pause'))).toEqual([]);
  expect((await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'on-b', 10))).status).toBe(200);
}, 60_000);
