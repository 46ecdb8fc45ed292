/**
 * One NATS server of three dies (kill -9, the log stream's raft leader) while 4 writers
 * ingest through a jobwatch node: the stream keeps a quorum, the node's publishes go on
 * after the election (retried under the same message id), and every acknowledged event
 * is readable afterwards, also by a new process that rebuilds from the two survivors.
 */
import { afterAll, expect, test } from 'bun:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cleanUpServices, createConnection, login, makeDataDir, startService } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { missingJobs, nodeEnv, startWriters, waitForAssignment, waitForCount } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

/** The NATS server that leads the log stream's raft group: the worst one to lose. */
async function streamLeaderIndex(cluster: NatsTestCluster): Promise<number> {
  const nc = await connect({ servers: cluster.url.split(',') });
  try {
    // one stream holds every partition's subject: its leader is the one raft group every write goes through
    const info = await (await jetstreamManager(nc)).streams.info('JOBWATCH_LOG');
    const index = cluster.servers.findIndex((server) => server.name === info.cluster?.leader);
    if (index < 0) throw new Error(`no leader among ${cluster.servers.map((server) => server.name)}: ${JSON.stringify(info.cluster)}`);
    return index;
  } finally {
    await nc.close();
  }
}

test('kill -9 of the stream leader NATS server mid-ingest: ingest goes on, nothing acknowledged is lost', async () => {
  nats = await startNatsCluster();
  const dataDir = makeDataDir('cluster-nats-loss');
  dirs.push(dataDir);
  // the default 10 s lease: a single node must ride out the election, not hand its lease over
  const node = await startService({ dataDir, env: nodeEnv(nats.url, 'node-a', { CLUSTER_LEASE_MS: '10000' }) });
  await waitForAssignment([node.baseUrl]);
  const cookie = await login(node.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(node.baseUrl, cookie, 'nats-loss');
  const writers = startWriters({ writers: 4, batchSize: 20, apiKey: connection.apiKey, connectionId: connection.id, target: () => node.baseUrl });

  await waitForCount(writers, 400);
  const victim = await streamLeaderIndex(nats);
  await nats.kill(victim);
  const killedAt = writers.acknowledged.size;
  try {
    // the raft election takes ~5-8 s alone; a loaded machine has been seen to need far more
    await waitForCount(writers, killedAt + 800, 75_000);
  } catch (error) {
    // seen once in a full CI run and not reproduced alone: keep what the node and the servers said
    console.log(`node output:\n${node.output.slice(-6000)}`);
    for (const server of nats.servers) console.log(`NATS ${server.name}:\n${server.output.slice(-2000)}`);
    throw error;
  }
  await writers.stop();

  console.log(
    `NATS server ${nats.servers[victim]!.name} (stream leader) killed after ${killedAt} acknowledged events; ` +
      `${writers.acknowledged.size} acknowledged in all, ${writers.retries} retried batches, ` +
      `longest wait for an acknowledgement ${Math.round(writers.longestWaitMs)} ms`,
  );
  expect(node.exitCode).toBeNull();
  expect(await missingJobs(node.baseUrl, cookie, writers.acknowledged)).toEqual([]);

  // memory is not the proof: a fresh process rebuilt from the two surviving servers must hold them too
  await node.kill();
  // with one server of three dead (and still listed) each NATS call may wait out a timeout first:
  // on a loaded machine the start has been seen to need more than the usual 30 s
  const restarted = await startService({ dataDir, env: nodeEnv(nats.url, 'node-a') }, 75_000);
  expect(await missingJobs(restarted.baseUrl, cookie, writers.acknowledged)).toEqual([]);
}, 120_000);
