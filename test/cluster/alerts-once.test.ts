/**
 * Alerts in cluster mode: two nodes, each a replica of every partition. Only the writer of
 * the connection's partition evaluates and sends, so a firing rule notifies its receiver
 * once, however many nodes run; alert writes sent to the other node (a create naming the
 * connection in its body, an edit by id) reach that writer; reads answer on both.
 */
import { beforeAll, expect, test } from 'bun:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, ingest, login, makeDataDir, startService, type ServiceProcess } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { partitionOf } from '../../actors/partition-of.ts';
import { webhookReceiver } from '../alerts/webhook-receiver.ts';
import { nodeEnv, tearDownAfterAll, waitForAssignment } from './cluster-harness.ts';

const METRICS_TOKEN = 'metrics-token-for-alert-cluster-test';
const PARTITIONS = 16;
const dirs: string[] = [];
let nats: NatsTestCluster | undefined;
let nodes: ServiceProcess[] = [];
let writers: Map<string, number>;
const hooks = webhookReceiver();
tearDownAfterAll(dirs, () => {
  hooks.stop();
  return nats;
});

beforeAll(async () => {
  nats = await startNatsCluster();
  const env = (node: string) => nodeEnv(nats!.url, node, { METRICS_TOKEN, ALERT_EVAL_SECONDS: '1', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const [dirA, dirB] = ['alerts-node-a', 'alerts-node-b'].map(makeDataDir);
  dirs.push(dirA!, dirB!);
  nodes = await Promise.all([startService({ dataDir: dirA!, env: env('alerts-a') }), startService({ dataDir: dirB!, env: env('alerts-b') })]);
  writers = await waitForAssignment(nodes.map((node) => node.baseUrl), { spread: true });
}, 90_000);

async function until(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

async function send(baseUrl: string, method: string, path: string, cookie: string, body: unknown) {
  const response = await fetch(`${baseUrl}${path}`, { method, headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

async function evaluations(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(text.split('\n').find((line) => line.startsWith('jobwatch_alert_rule_evaluations_total '))?.split(' ')[1] ?? 0);
}

test('a firing rule notifies once: only the partition writer evaluates and sends; writes through the other node reach it', async () => {
  const cookie = await login(nodes[1]!.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(nodes[1]!.baseUrl, cookie, 'prod');
  const writer = writers.get(`p.${partitionOf(connection.id, PARTITIONS)}`)!;
  const other = nodes[1 - writer]!;
  const owner = nodes[writer]!;

  // created through the node that does not write the connection's partition
  const channel = await send(other.baseUrl, 'POST', '/api/alert-channels', cookie, { connectionId: connection.id, name: 'receiver', url: hooks.url(), format: 'json' });
  expect(channel.status).toBe(201);
  const rule = await send(other.baseUrl, 'POST', '/api/alert-rules', cookie, {
    connectionId: connection.id, name: 'failing', kind: 'failure_rate', threshold: 0.9, windowSeconds: 600, channelIds: [channel.body.channel.id],
  });
  expect(rule.status).toBe(201);
  const edited = await send(other.baseUrl, 'PATCH', `/api/alert-rules/${rule.body.id}`, cookie, { threshold: 0.5 });
  expect(edited.status).toBe(200);
  expect(edited.body.threshold).toBe(0.5);

  const atMs = Date.now() - 1_000;
  const failed = Array.from({ length: 5 }, (_, index) => ({
    type: 'job_state_change', timestamp: new Date(atMs).toISOString(), framework: 'celery', connectionId: connection.id,
    job: { externalId: `bad-${index}`, name: 'tasks.x', state: 'failed', queue: 'default' },
  }));
  expect((await ingest(other.baseUrl, connection.apiKey, failed)).body.accepted).toBe(5);
  await until('the firing notice', () => hooks.received.length >= 1);
  const seen = await evaluations(owner.baseUrl);
  await until('three more evaluations on the writer', async () => (await evaluations(owner.baseUrl)) >= seen + 3);
  expect(hooks.received).toHaveLength(1);
  expect(JSON.parse(hooks.received[0]!.body)).toMatchObject({ status: 'firing', rule: { id: rule.body.id, threshold: 0.5 } });
  expect(await evaluations(other.baseUrl)).toBe(0); // the other node evaluated nothing: it writes no partition of this connection's
  for (const node of nodes) {
    await until('the replica to show the firing rule', async () => (await getJson(node.baseUrl, '/api/alerts', cookie)).body.firing.length === 1);
  }
}, 120_000);
