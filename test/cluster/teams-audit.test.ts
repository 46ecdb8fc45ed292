/**
 * Teams, members and the audit log in cluster mode: they go where accounts go (a team
 * change to the accounts partition's writer, through whichever node it arrives at), every
 * node's replica holds them, and a restart of every node from the partitions' snapshots
 * and the stream keeps them. A viewer's refused revoke, forwarded to the writer of the
 * job's partition, is written there and read on every node.
 */
import { afterAll, expect, test } from 'bun:test';
import { cleanUpServices, getJson, ingest, jobEvent, login, makeDataDir, startService, ADMIN_EMAIL, ADMIN_PASSWORD, type ServiceProcess } from '../blackbox/service-process.ts';
import { startNatsCluster, type NatsTestCluster } from '../support/nats-cluster.ts';
import { nodeEnv, waitForAssignment } from './cluster-harness.ts';

const dirs = cleanUpServices();
let nats: NatsTestCluster | undefined;
afterAll(() => nats?.stop());

const NAMES = ['node-1', 'node-2', 'node-3'];

async function startAll(dataDirs: string[]): Promise<ServiceProcess[]> {
  const nodes = await Promise.all(NAMES.map((name, index) => startService({ dataDir: dataDirs[index]!, env: nodeEnv(nats!.url, name) })));
  await waitForAssignment(nodes.map((node) => node.baseUrl), { spread: true });
  return nodes;
}

async function send(baseUrl: string, method: string, path: string, cookie: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, { method, headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json().catch(() => null)) as any };
}

/** What a node serves of teams and the audit log, once every node agrees (replicas apply within their lag). */
async function settled(nodes: ServiceProcess[], cookie: string, until: (state: any) => boolean): Promise<any> {
  for (const deadline = Date.now() + 20_000; ; ) {
    const states = await Promise.all(
      nodes.map(async (node) => ({
        teams: (await getJson(node.baseUrl, '/api/teams', cookie)).body.data.map((team: any) => team.name).sort(),
        audit: (await getJson(node.baseUrl, '/api/audit?limit=100', cookie)).body.data.map((entry: any) => [entry.action, entry.email, entry.outcome]),
      })),
    );
    if ((states.every((state) => Bun.deepEquals(state, states[0])) && until(states[0])) || Date.now() > deadline) return states;
    await Bun.sleep(100);
  }
}

test('teams and the audit log reach every node, and a restart of every node keeps them', async () => {
  nats = await startNatsCluster();
  const dataDirs = NAMES.map((name) => makeDataDir(`teams-${name}`));
  dirs.push(...dataDirs);
  let nodes = await startAll(dataDirs);
  const [a, b, c] = nodes as [ServiceProcess, ServiceProcess, ServiceProcess];
  const admin = await login(b.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const team = await send(c.baseUrl, 'POST', '/api/teams', admin, { name: 'production' });
  expect(team.status).toBe(201);
  const teamId = team.body.team.id;
  expect((await send(a.baseUrl, 'POST', `/api/teams/${teamId}/members`, admin, { email: ADMIN_EMAIL, role: 'admin' })).status).toBe(201);
  expect((await send(b.baseUrl, 'POST', '/api/users', admin, { email: 'viewer@example.test', password: 'a viewer password', teamId, role: 'viewer' })).status).toBe(201);
  const created = await send(c.baseUrl, 'POST', '/api/connections', admin, { name: 'prod', teamId });
  expect(created.status).toBe(201);
  const connectionId = created.body.connection.id;
  expect((await ingest(a.baseUrl, created.body.apiKey, [jobEvent(connectionId, 'job-1')])).status).toBe(200);

  const viewer = await login(c.baseUrl, 'viewer@example.test', 'a viewer password');
  let jobId: string | undefined;
  for (const deadline = Date.now() + 10_000; jobId === undefined && Date.now() < deadline; await Bun.sleep(100)) jobId = (await getJson(b.baseUrl, '/api/jobs', viewer)).body.data[0]?.id;
  const refused = await send(b.baseUrl, 'POST', `/api/jobs/${jobId}/revoke`, viewer);
  expect(refused.status).toBe(403);

  const hasRefusal = (state: any) => state.audit.some((entry: string[]) => entry[0] === 'job.revoke' && entry[2] === 'denied');
  const before = await settled(nodes, admin, hasRefusal);
  expect(before[0].teams).toEqual(['default', 'production']);
  expect(before[0].audit).toEqual([
    ['job.revoke', 'viewer@example.test', 'denied'],
    ['auth.login', 'viewer@example.test', 'success'],
    ['connection.create', ADMIN_EMAIL, 'success'],
    ['user.create', ADMIN_EMAIL, 'success'],
    ['member.add', ADMIN_EMAIL, 'success'],
    ['team.create', ADMIN_EMAIL, 'success'],
    ['auth.login', ADMIN_EMAIL, 'success'],
  ]);
  for (const state of before) expect(state).toEqual(before[0]);

  for (const node of nodes) expect(await node.stop()).toBe(0);
  nodes = await startAll(dataDirs);
  const after = await settled(nodes, admin, hasRefusal);
  for (const state of after) expect(state).toEqual(before[0]);
}, 180_000);
