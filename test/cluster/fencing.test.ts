/**
 * A paused writer (SIGSTOP past its lease) must not write a partition after it resumes:
 * the other node takes the partition's lease and appends its owner marker, so the old
 * writer's next append carries an expected last sequence the subject has moved past and
 * JetStream refuses it. The old writer answers 503, logs `fenced`, and exits; the refused
 * event is nowhere, and the new writer keeps serving. Fencing is per partition: the
 * partitions the paused node did not write never moved.
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
} from '../blackbox/service-process.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { startNodes, waitForAssignment } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

test('a partition writer paused past its lease is fenced by the log when it resumes, says so, and exits', async () => {
  nats = await startNatsCluster();
  const nodes = await startNodes(nats.url, ['node-a', 'node-b'], dirs);
  const cookie = await login(nodes[0]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(nodes[0]!.baseUrl, cookie, 'fencing');
  const key = `p.${partitionOf(connection.id, 16)}`;
  const before = await waitForAssignment(nodes.map((node) => node.baseUrl));
  // a: the node writing the connection's partition; b: the other
  const a = nodes[before.get(key)!]!;
  const b = nodes[1 - before.get(key)!]!;
  expect((await ingest(a.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'before-pause', 10))).status).toBe(200);

  a.proc.kill('SIGSTOP');
  try {
    await b.waitFor(new RegExp(`took over the lease ${key.replace('.', '\\.')} \\(epoch \\d+\\) from node-`), 30_000);
    await waitForAssignment([b.baseUrl], { timeoutMs: 30_000 });
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
  expect(await a.waitForExit()).not.toBe(0);
  // refused by the log (fenced) or, if its lease renewal came first, halted on the lost lease: never written
  expect(a.output).toMatch(new RegExp(`fenced: jobwatch\\.log\\.${key.replace('.', '\\.')} has moved past seq \\d+|lost the lease`));
  const jobs = (await listAllJobs(b.baseUrl, cookie, 100)).map((job) => job.externalId);
  expect(jobs.filter((id) => id.startsWith('before-pause'))).toHaveLength(10);
  expect(jobs.filter((id) => id.startsWith('after-pause'))).toEqual([]);
  // A's membership key came back for a moment when it resumed (it leaves the membership as it halts): B may have handed a partition back and retaken it, 503s meanwhile, retried as an SDK does
  const retryUntil = Date.now() + 15_000;
  for (;;) {
    const status = (await ingest(b.baseUrl, connection.apiKey, batchOfJobs(connection.id, 'on-b', 10))).status;
    if (status === 200) break;
    expect(status).toBe(503);
    if (Date.now() > retryUntil) throw new Error('B did not accept an ingest within 15 s of A exiting');
    await Bun.sleep(100);
  }
  console.log(`fencing: ${a.output.includes('fenced:') ? 'the resumed writer was refused by the log (fenced)' : 'the resumed writer halted on its lost lease before writing'}`);
}, 60_000);
