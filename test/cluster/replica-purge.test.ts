/**
 * A replica never serves a state that silently misses records. A partition's writer purges
 * its subject below a snapshot only once that snapshot is 2 leases old, so a replica that
 * keeps up never meets a purge (C here); one stopped for longer (B, SIGSTOP while A, the
 * connection's partition writer, snapshots every megabyte and purges) finds, on resuming,
 * a message whose predecessor it never applied, says FATAL and exits; restarted, it
 * rebuilds from the snapshots and holds exactly the writer's data. One partition and the
 * accounts over three nodes leave one node writing nothing, and B's name is one the
 * placement makes that node, so its halt is the replica's, not a lost lease. Every node keeps every partition (`CLUSTER_STANDBYS=all`): a replica that
 * does not write the partition exists only where some node stands by for it.
 */
import { afterAll, expect, test } from 'bun:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cleanUpServices, createConnection, login, makeDataDir, startService, type ServiceProcess } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { Placement } from '../../cluster/placement.ts';
import { FOLLOWER_PULL_MESSAGES } from '../../cluster/subject-follower.ts';
import { health, nodeEnv, partitionKeys, startWriters, waitForAssignment } from './cluster-harness.ts';

/** One partition: every connection in it, and its writer and the accounts' are two of the three nodes. */
const PARTITIONS = 1;
/** Writes nothing among node-a, node-c and itself (checked below). */
const B_NAME = 'node-b0';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

async function jobTotal(node: ServiceProcess, cookie: string): Promise<number> {
  const response = await fetch(`${node.baseUrl}/api/jobs?limit=1`, { headers: { cookie } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { pagination: { total: number } }).pagination.total;
}

test('a replica stopped past a purge notices the gap and halts; one that keeps up never meets a purge; a restart rebuilds', async () => {
  nats = await startNatsCluster();
  const [dirA, dirB, dirC] = ['purge-owner', 'purge-stopped', 'purge-following'].map(makeDataDir);
  dirs.push(dirA!, dirB!, dirC!);
  // B must keep the partition it does not write: every node keeps every partition here, whatever the suite runs with
  const env = (node: string) => nodeEnv(nats!.url, node, { SNAPSHOT_LOG_MB: '1', CLUSTER_STANDBYS: 'all', CLUSTER_PARTITIONS: String(PARTITIONS) });
  const placement = new Placement(partitionKeys(PARTITIONS), 'all');
  for (const live of [['node-a', B_NAME, 'node-c'], ['node-a', 'node-c']]) {
    // B writes nothing, and while it is stopped nothing moves between A and C
    expect(partitionKeys(PARTITIONS).map((key) => placement.writer(live, key))).toEqual(partitionKeys(PARTITIONS).map((key) => placement.writer(['node-a', 'node-c'], key)));
  }
  let [a, b, c] = await Promise.all([
    startService({ dataDir: dirA!, env: env('node-a') }),
    startService({ dataDir: dirB!, env: env(B_NAME) }),
    startService({ dataDir: dirC!, env: env('node-c') }),
  ]);
  await waitForAssignment([a!.baseUrl, b!.baseUrl, c!.baseUrl], { partitions: PARTITIONS, spread: false });
  const cookie = await login(a!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(a!.baseUrl, cookie, 'purged');
  const key = `p.${partitionOf(connection.id, PARTITIONS)}`;
  // A: the writer of the connection's partition; C: the other writer
  if ((await health(c!.baseUrl)).body.writes!.includes(key)) [a, c] = [c, a];
  expect((await health(a!.baseUrl)).body.writes).toContain(key);
  expect((await health(b!.baseUrl)).body.writes).toEqual([]);
  const subject = `jobwatch\\.log\\.${key.replace('.', '\\.')}`;

  const appliedByB = (await health(b!.baseUrl)).body.replica!.appliedSeq;
  b.proc.kill('SIGSTOP');
  let purgedBelow = 0;
  try {
    const writers = startWriters({ writers: 4, batchSize: 50, apiKey: connection.apiKey, connectionId: connection.id, target: () => a.baseUrl });
    const deadline = Date.now() + 90_000;
    // B's consumer may hold a pull's worth of messages sent before it was paused (in socket
    // buffers): those it applies on resuming, so the purge must reach past them to leave a gap
    const gapFrom = appliedByB + FOLLOWER_PULL_MESSAGES + 1;
    while (purgedBelow <= gapFrom) {
      if (Date.now() > deadline) throw new Error(`the owner purged nothing past seq ${gapFrom} within 90 s; output:\n${a.output}`);
      await Bun.sleep(200);
      const purges = [...a.output.matchAll(new RegExp(`purged \\d+ messages of ${subject} below seq (\\d+)`, 'g'))];
      purgedBelow = Math.max(0, ...purges.map((match) => Number(match[1])));
    }
    await writers.stop();
  } finally {
    b.proc.kill('SIGCONT');
  }
  // the purge waited for a snapshot 2 leases old: never the one just written
  const snapshots = [...a.output.matchAll(new RegExp(`snapshot of ${key.replace('.', '\\.')} at seq (\\d+)`, 'g'))].map((match) => Number(match[1]));
  expect(snapshots.at(-1)!).toBeGreaterThan(purgedBelow);

  await b.waitFor(new RegExp(`FATAL: .*the replica of jobwatch\\.log\\.> stopped: ${subject} seq \\d+ follows .*were purged`), 30_000).catch((error: unknown) => {
    const aSaid = a.output.split('\n').filter((line) => /purged|snapshot of/.test(line));
    throw new Error(`${String(error).slice(0, 300)}; A said:\n${aSaid.join('\n')}\nB said:\n${b.output}`);
  });
  expect(await b.waitForExit()).not.toBe(0);
  console.log(`B, stopped at seq ${appliedByB} while A purged below seq ${purgedBelow}, said:\n  ${b.output.split('\n').filter((line) => /following jobwatch|FATAL/.test(line)).map((line) => line.slice(0, 400)).join('\n  ')}`);

  // C kept up through every purge and serves what A serves
  const total = await jobTotal(a, cookie);
  expect(total).toBeGreaterThan(0);
  expect(c.output).not.toMatch(/FATAL/);
  const cDeadline = Date.now() + 5_000;
  while ((await jobTotal(c, cookie)) !== total && Date.now() < cDeadline) await Bun.sleep(50);
  expect(await jobTotal(c, cookie)).toBe(total);

  // restarted, B loads the snapshot and follows again
  const restarted = await startService({ dataDir: dirB!, env: env(B_NAME) });
  expect(restarted.output).toMatch(new RegExp(`loaded snapshot ${key.replace('.', '\\.')} covering seq \\d+`));
  expect(await jobTotal(restarted, cookie)).toBe(total);
}, 180_000);
