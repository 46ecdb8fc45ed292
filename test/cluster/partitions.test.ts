/**
 * Several writers, each of some partitions, on one cluster of 16 partitions, in order:
 *
 * 1. a 4th node joins three while writers keep ingesting through every node: it takes its
 *    share of the partitions, and the few others the placement over four moves move, by
 *    clean handover (each lease released by its old writer, none taken after a lapse), no
 *    answer is a 5xx other than 503 + Retry-After (retried), and nothing acknowledged is lost;
 * 2. a bulk revoke whose jobs span partitions written by two nodes, sent through a third:
 *    every id is answered, in the request's order (repeats and unknown ids included);
 *    with one of the two writers just killed (its lease not lapsed yet), its ids are
 *    answered `success: false` with the reason, and the other writer's ids succeed.
 */
import { beforeAll, expect, test } from 'bun:test';
import { partitionOf } from '../../actors/partition-of.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  startService,
  type Connection,
  type ServiceProcess,
} from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { Placement } from '../../cluster/placement.ts';
import { missingJobs, nodeEnv, partitionKeys, startNodes, startWriters, waitForAssignment, tearDownAfterAll } from './cluster-harness.ts';

const PARTITIONS = 16;
const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let nodes: ServiceProcess[] = [];
let cookie: string;
tearDownAfterAll(dirs, () => nats);

beforeAll(async () => {
  nats = await startNatsCluster();
  nodes = await startNodes(nats.url, ['node-1', 'node-2', 'node-3'], dirs, { BODY_TIMEOUT_SECONDS: '3' }, PARTITIONS);
  cookie = await login(nodes[0]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
}, 60_000);

test('a 4th node joining under load takes its partitions by clean handover (or, from a writer too slow to renew, after its lease lapsed); nothing acknowledged is lost', async () => {
  const urls = () => nodes.filter((node) => node.exitCode === null).map((node) => node.baseUrl);
  const connections: Connection[] = [];
  for (let n = 0; n < 4; n++) connections.push(await createConnection(nodes[n % 3]!.baseUrl, cookie, `join-${n}`));
  let turn = 0;
  const runs = connections.map((connection) =>
    startWriters({ writers: 1, batchSize: 20, apiKey: connection.apiKey, connectionId: connection.id, target: () => urls()[turn++ % urls().length]! }),
  );
  const acknowledged = () => runs.reduce((sum, run) => sum + run.acknowledged.size, 0);
  const until = async (count: number) => {
    const deadline = Date.now() + 40_000;
    while (acknowledged() < count) {
      if (Date.now() > deadline) throw new Error(`only ${acknowledged()} of ${count} events acknowledged`);
      await Bun.sleep(50);
    }
  };
  await until(400);
  const before = await waitForAssignment(urls(), { partitions: PARTITIONS, spread: true });

  const joinedAtMs = performance.now();
  const dataDir = makeDataDir('cluster-node-4');
  dirs.push(dataDir);
  const fourth = await startService({ dataDir, env: nodeEnv(nats!.url, 'node-4', { BODY_TIMEOUT_SECONDS: '3', CLUSTER_PARTITIONS: String(PARTITIONS) }) });
  nodes.push(fourth);
  // the writers the placement wants among four (writers do not depend on CLUSTER_STANDBYS)
  const names = ['node-1', 'node-2', 'node-3', 'node-4'];
  const placement = new Placement(partitionKeys(PARTITIONS), 0);
  const wanted = new Map(partitionKeys(PARTITIONS).map((key) => [key, names.indexOf(placement.writer(names, key)!)]));
  const after = await waitForAssignment(urls(), { partitions: PARTITIONS, spread: true, timeoutMs: 30_000, matching: wanted });
  const movedMs = performance.now() - joinedAtMs;
  const ackedAtJoin = acknowledged();
  await until(ackedAtJoin + 400);
  for (const run of runs) await run.stop();

  const moved = [...after].filter(([key, index]) => index !== before.get(key)).map(([key]) => key);
  const toNewcomer = moved.filter((key) => after.get(key) === 3);
  console.log(
    `join: node-4 took ${toNewcomer.length} of ${PARTITIONS + 1} partitions (${toNewcomer.join(', ')}) and ${moved.length - toNewcomer.length} others moved between the three (${moved.filter((key) => after.get(key) !== 3).join(', ')}), ` +
      `all where the placement wants them ${Math.round(movedMs)} ms after its start began; ` +
      `${acknowledged()} events acknowledged, ${runs.reduce((sum, run) => sum + run.retries, 0)} batches retried after a 503 or no answer`,
  );
  expect(toNewcomer.length).toBeGreaterThan(0);
  // only partitions whose wanted writer changed moved, each released by its writer and
  // acquired at once; a writer whose lease went unrenewed for its whole term (a machine too
  // loaded to run its timers) loses a partition by that lease instead, which is safe but is
  // not the handover: at least one partition must be handed over, and every other taken only after a lapse
  for (const [key, index] of before) if (wanted.get(key) === index) expect(after.get(key)).toBe(index);
  const outputOf = (key: string) => nodes[after.get(key)!]!.output;
  const handedOver = moved.filter((key) => new RegExp(`acquired the lease ${key.replace('.', '\\.')} \\(epoch \\d+\\) released by node-`).test(outputOf(key)));
  const lapsed = moved.filter((key) => !handedOver.includes(key));
  for (const key of lapsed) expect(outputOf(key)).toMatch(new RegExp(`took over the lease ${key.replace('.', '\\.')} \\(epoch \\d+\\) from node-\\d+: not renewed for`));
  if (lapsed.length > 0) console.log(`join: ${lapsed.join(', ')} taken after its writer's lease lapsed (not renewed in time), the rest by handover`);
  expect(handedOver.length).toBeGreaterThan(0);
  const everything = new Set(runs.flatMap((run) => [...run.acknowledged]));
  expect(await missingJobs(fourth.baseUrl, cookie, everything)).toEqual([]);
  expect(await missingJobs(nodes[0]!.baseUrl, cookie, everything)).toEqual([]);
}, 90_000);

test('a bulk revoke whose jobs span partitions of two writers: every id answered in order; a writer just killed gives its ids success: false', async () => {
  const writers = await waitForAssignment(nodes.map((node) => node.baseUrl), { partitions: PARTITIONS });
  // two connections whose partitions two different nodes write
  const byWriter = new Map<number, Connection>();
  for (let n = 0; byWriter.size < 2; n++) {
    if (n > 40) throw new Error('no two connections with partitions on two writers in 40 tries');
    const connection = await createConnection(nodes[0]!.baseUrl, cookie, `bulk-${n}`);
    const writer = writers.get(`p.${partitionOf(connection.id, PARTITIONS)}`)!;
    if (!byWriter.has(writer)) byWriter.set(writer, connection);
  }
  const [[writerX, x], [writerY, y]] = [...byWriter] as [[number, Connection], [number, Connection]];
  const via = nodes.find((_, index) => index !== writerX && index !== writerY)!;
  for (const [connection, prefix] of [[x, 'bulk-x'], [y, 'bulk-y']] as const) {
    expect((await ingest(nodes[0]!.baseUrl, connection.apiKey, batchOfJobs(connection.id, prefix, 4))).status).toBe(200);
  }
  const ids = async (prefix: string) =>
    (await listAllJobs(via.baseUrl, cookie, 100)).filter((job) => job.externalId.startsWith(prefix)).map((job) => job.id);
  const [xs, ys] = [await ids('bulk-x'), await ids('bulk-y')];
  expect([xs.length, ys.length]).toEqual([4, 4]);

  const revoke = async (asked: string[], through = via) => {
    const response = await fetch(`${through.baseUrl}/api/jobs/bulk/revoke`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: through.baseUrl },
      body: JSON.stringify({ ids: asked }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { results: { id: string; success: boolean; error?: string }[] }).results;
  };
  const asked = [xs[0]!, ys[0]!, 'no-such-job', xs[1]!, ys[1]!, xs[0]!];
  const results = await revoke(asked);
  expect(results.map((result) => result.id)).toEqual(asked);
  expect(results.map((result) => result.success)).toEqual([true, true, false, true, true, false]);
  // through X itself: X's part answered there, Y's forwarded
  const throughX = await revoke([ys[3]!, xs[3]!], nodes[writerX]!);
  expect(throughX.map((result) => [result.id, result.success])).toEqual([
    [ys[3]!, true],
    [xs[3]!, true],
  ]);

  // writer Y dies: within its lease every node still routes its partition to it
  await nodes[writerY]!.kill();
  const afterKill = await revoke([ys[2]!, xs[2]!]);
  expect(afterKill.map((result) => result.id)).toEqual([ys[2]!, xs[2]!]);
  expect(afterKill[0]).toMatchObject({ success: false });
  expect(afterKill[0]!.error).toMatch(/not reachable|retry shortly/);
  expect(afterKill[1]).toMatchObject({ success: true });
  console.log(`bulk through ${via.baseUrl}: ${JSON.stringify(afterKill)}`);
}, 60_000);
