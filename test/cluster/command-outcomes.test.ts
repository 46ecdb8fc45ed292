/**
 * Revokes the job system did not carry out, in cluster mode: two nodes, each a replica of
 * every partition. A revoke asked through the node that does not write the job's partition
 * and refused by the agent through it too shows the job active again on both nodes; one no
 * agent confirms is withdrawn once, by the partition's writer alone (its log says so, the
 * other node's does not), and both nodes show it expired. A queue's pause, the agent's
 * capabilities and its answer, all through the node that does not write, show on both.
 */
import { beforeAll, expect, test } from 'bun:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, ingest, login, makeDataDir, startService, type ServiceProcess } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { nodeEnv, tearDownAfterAll, waitForAssignment } from './cluster-harness.ts';

const PARTITIONS = 16;
const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let nodes: ServiceProcess[] = [];
let writers: Map<string, number>;
tearDownAfterAll(dirs, () => nats);

beforeAll(async () => {
  nats = await startNatsCluster();
  const env = (node: string) => nodeEnv(nats!.url, node, { COMMAND_CONFIRM_SECONDS: '3' });
  const [dirA, dirB] = ['commands-node-a', 'commands-node-b'].map(makeDataDir);
  dirs.push(dirA!, dirB!);
  nodes = await Promise.all([startService({ dataDir: dirA!, env: env('commands-a') }), startService({ dataDir: dirB!, env: env('commands-b') })]);
  writers = await waitForAssignment(nodes.map((node) => node.baseUrl), { spread: true });
}, 90_000);

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const notes = (job: { stateHistory: Array<{ note?: string }> }) => job.stateHistory.flatMap((entry) => (entry.note === undefined ? [] : [entry.note]));

test('refused or unconfirmed, a revoke is withdrawn on every node, once, by the partition writer', async () => {
  const cookie = await login(nodes[1]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(nodes[1]!.baseUrl, cookie, 'prod');
  const writer = writers.get(`p.${partitionOf(connection.id, PARTITIONS)}`)!;
  const other = nodes[1 - writer]!;
  const startedAt = new Date(Date.now() - 2_000).toISOString();
  const events = ['refused', 'unconfirmed'].map((externalId) => ({
    type: 'job_state_change', timestamp: startedAt, framework: 'sidekiq', connectionId: connection.id,
    job: { externalId, name: 'SlowJob', state: 'active', queue: 'default', startedAt },
  }));
  expect((await ingest(other.baseUrl, connection.apiKey, events)).body.accepted).toBe(2);
  const idOf = async (externalId: string) =>
    until(`job ${externalId} on the other node`, async () => (await getJson(other.baseUrl, '/api/jobs?limit=10', cookie)).body.data.find((job: any) => job.externalId === externalId)?.id ?? null);
  const [refused, unconfirmed] = [await idOf('refused'), await idOf('unconfirmed')];

  const revoke = await fetch(`${other.baseUrl}/api/jobs/bulk/revoke`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/json', origin: other.baseUrl }, body: JSON.stringify({ ids: [refused, unconfirmed] }),
  });
  expect(((await revoke.json()) as any).results.map((result: any) => result.state)).toEqual(['cancelled', 'cancelled']);
  const agent = { authorization: `Bearer ${connection.apiKey}`, 'content-type': 'application/json' };
  const pending = (await (await fetch(`${other.baseUrl}/api/agent/commands`, { headers: agent })).json()) as { data: Array<{ id: string; jobId: string }> };
  const command = pending.data.find((entry) => entry.jobId === refused)!;
  const ack = await fetch(`${other.baseUrl}/api/agent/commands/ack`, {
    method: 'POST', headers: agent, body: JSON.stringify({ outcomes: [{ id: command.id, status: 'failed', reason: 'open-source Sidekiq cannot stop a running job safely' }] }),
  });
  expect(await ack.json()).toEqual({ acked: 1 });

  for (const node of nodes) {
    const shown = await until('the refusal on every node', async () => {
      const job = (await getJson(node.baseUrl, `/api/jobs/${refused}`, cookie)).body;
      return job.state === 'active' ? job : null;
    });
    expect(notes(shown)).toEqual(['revoke requested', 'revoke refused: open-source Sidekiq cannot stop a running job safely']);
    const expired = await until('the unconfirmed revoke withdrawn on every node', async () => {
      const job = (await getJson(node.baseUrl, `/api/jobs/${unconfirmed}`, cookie)).body;
      return job.lastCommand.status === 'expired' ? job : null;
    });
    expect(expired.state).toBe('active');
    expect(notes(expired)).toEqual(['revoke requested', 'revoke expired unconfirmed']);
  }
  expect(nodes[writer]!.output.match(/commands: 1 of connection \S+ withdrawn, unconfirmed after 3 s/g)).toHaveLength(1);
  expect(other.output).not.toContain('withdrawn, unconfirmed');
}, 120_000);

test("a queue's pause asked and answered through the node that does not write its partition: paused on every node, with the agent's capabilities", async () => {
  const cookie = await login(nodes[0]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(nodes[0]!.baseUrl, cookie, 'controls');
  const writer = writers.get(`p.${partitionOf(connection.id, PARTITIONS)}`)!;
  const other = nodes[1 - writer]!;
  const agent = { authorization: `Bearer ${connection.apiKey}`, 'content-type': 'application/json' };
  const snapshot = { type: 'queue_snapshot', timestamp: new Date().toISOString(), framework: 'bullmq', connectionId: connection.id, queue: { name: 'emails', depth: 4, extensions: { paused: false } } };
  expect((await ingest(other.baseUrl, connection.apiKey, [snapshot])).body.accepted).toBe(1);
  const reported = await fetch(`${other.baseUrl}/api/agent/capabilities`, {
    method: 'PUT', headers: agent, body: JSON.stringify({ framework: 'bullmq', agentVersion: '0.2.0', controls: { 'queue.pause': { supported: true }, 'queue.clean': { supported: false, reason: 'not in this test' } } }),
  });
  expect(reported.status).toBe(200);
  const queue = await until('the queue on the other node', async () => (await getJson(other.baseUrl, '/api/queues', cookie)).body.data.find((each: any) => each.name === 'emails') ?? null);
  const asked = await fetch(`${other.baseUrl}/api/queues/${queue.id}/pause`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', origin: other.baseUrl }, body: '{}' });
  expect(asked.status).toBe(202);
  const { commandId } = (await asked.json()) as { commandId: string };
  const pending = (await (await fetch(`${other.baseUrl}/api/agent/commands`, { headers: agent })).json()) as { data: Array<{ id: string; type: string; queue: string }> };
  expect(pending.data).toEqual([expect.objectContaining({ id: commandId, type: 'queue.pause', queue: 'emails' })]);
  const ack = await fetch(`${other.baseUrl}/api/agent/commands/ack`, { method: 'POST', headers: agent, body: JSON.stringify({ outcomes: [{ id: commandId, status: 'done' }] }) });
  expect(await ack.json()).toEqual({ acked: 1 });
  for (const node of nodes) {
    const shown = await until('the paused queue on every node', async () => {
      const view = (await getJson(node.baseUrl, `/api/queues/${queue.id}`, cookie)).body;
      return view.paused === true ? view : null;
    });
    expect(shown.commands).toEqual([expect.objectContaining({ id: commandId, status: 'done' })]);
    expect(shown.controls['queue.clean']).toEqual({ available: false, reason: 'not in this test' });
  }
}, 120_000);
