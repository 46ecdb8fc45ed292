/**
 * Alerts through a restart of the real process: a firing alert is neither forgotten nor
 * notified again after kill -9, it resolves once after; a delivery still being retried
 * when the process dies is sent after the restart (at least once, with its delivery id).
 * The receiver is a real HTTP server on loopback (ALERT_WEBHOOK_ALLOW_PRIVATE=true).
 * Waits are bounded; no timing is asserted.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test';
import { hmacHex, webhookReceiver } from '../alerts/webhook-receiver.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, ingest, killAllServices, login, makeDataDir, removeDir, startService, TEST_TIMEOUT_MS, type ServiceProcess } from './service-process.ts';

const METRICS_TOKEN = 'alerts-blackbox-metrics-token';
const ENV = { ADMIN_EMAIL, ADMIN_PASSWORD, ALERT_EVAL_SECONDS: '1', ALERT_WEBHOOK_ALLOW_PRIVATE: 'true', METRICS_TOKEN };
const dirs: string[] = [];
const receivers: Array<{ stop: () => void }> = [];

afterEach(async () => {
  await killAllServices();
  for (const receiver of receivers.splice(0)) receiver.stop();
});
afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

async function post(baseUrl: string, path: string, cookie: string, body: unknown) {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

/** A counter's value in the scrape, summed over its labels matching `labels`. */
async function metric(baseUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{${labels}`) || (labels === '' && line.startsWith(`${name} `))) total += Number(line.split(' ').at(-1));
  }
  return total;
}

/** The notices' bodies, each once: a send that timed out is sent again with the same body (and delivery id). */
function distinctBodies(received: ReadonlyArray<{ body: string }>): string[] {
  return [...new Set(received.map((notice) => notice.body))];
}

function failedJobs(connectionId: string, count: number, prefix: string, state = 'failed') {
  const atMs = Date.now() - 1_000;
  return Array.from({ length: count }, (_, index) => ({
    type: 'job_state_change',
    timestamp: new Date(atMs).toISOString(),
    framework: 'celery',
    connectionId,
    job: { externalId: `${prefix}-${index}`, name: 'tasks.emails', state, queue: 'emails', completedAt: new Date(atMs).toISOString() },
  }));
}

async function setUp(label: string, answer?: Parameters<typeof webhookReceiver>[0]) {
  const hooks = webhookReceiver(answer);
  receivers.push(hooks);
  const dataDir = makeDataDir(label);
  dirs.push(dataDir);
  const service = await startService({ dataDir, env: ENV });
  const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(service.baseUrl, cookie, 'prod');
  const channel = await post(service.baseUrl, '/api/alert-channels', cookie, { connectionId: connection.id, name: 'receiver', url: hooks.url(), format: 'json' });
  expect(channel.status).toBe(201);
  const rule = await post(service.baseUrl, '/api/alert-rules', cookie, {
    connectionId: connection.id, name: 'emails failing', kind: 'failure_rate', queue: 'emails', threshold: 0.5, windowSeconds: 600, channelIds: [channel.body.channel.id],
  });
  expect(rule.status).toBe(201);
  return { hooks, dataDir, service, cookie, connection, secret: channel.body.secret as string, ruleId: rule.body.id as string, channelId: channel.body.channel.id as string };
}

describe('alerts across a restart of the real process', () => {
  test('firing, kill -9, restart: still firing, no second notice; recovery resolves it once', async () => {
    const s = await setUp('alerts-restart');
    expect((await ingest(s.service.baseUrl, s.connection.apiKey, failedJobs(s.connection.id, 5, 'bad'))).body.accepted).toBe(5);
    await until('the firing notice', () => (s.hooks.received.length >= 1 ? true : undefined));
    const firing = JSON.parse(s.hooks.received[0]!.body);
    expect(s.hooks.received[0]!.headers.get('x-jobwatch-signature')).toBe(`sha256=${hmacHex(s.secret, s.hooks.received[0]!.body)}`);
    expect(firing).toMatchObject({ status: 'firing', rule: { id: s.ruleId, kind: 'failure_rate' }, value: 1 });
    // the outcome is durable before the crash
    await until('the delivered outcome', async () => ((await getJson(s.service.baseUrl, '/api/alert-channels', s.cookie)).body.data[0].deliveries[0]?.outcome === 'delivered' ? true : undefined));

    // a send that timed out on a loaded machine is sent again before it is delivered, so the
    // crash is judged by what arrives after it: nothing
    const noticesBeforeCrash = s.hooks.received.length;
    expect(distinctBodies(s.hooks.received)).toHaveLength(1); // one delivery, however many sends
    await s.service.kill();
    const restarted = await startService({ dataDir: s.dataDir, env: ENV });
    const cookie = await login(restarted.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    // several evaluations after the restart
    await until('three evaluations after the restart', async () => ((await metric(restarted.baseUrl, 'jobwatch_alert_rule_evaluations_total')) >= 3 ? true : undefined));
    const overview = await getJson(restarted.baseUrl, '/api/alerts', cookie);
    expect(overview.body.firing.map((alert: { ruleId: string }) => alert.ruleId)).toEqual([s.ruleId]);
    expect(await metric(restarted.baseUrl, 'jobwatch_alerts_firing')).toBe(1);
    expect(s.hooks.received).toHaveLength(noticesBeforeCrash);

    expect((await ingest(restarted.baseUrl, s.connection.apiKey, failedJobs(s.connection.id, 10, 'good', 'completed'))).body.accepted).toBe(10);
    await until('the resolved notice', () => (s.hooks.received.length > noticesBeforeCrash ? true : undefined));
    const resolved = JSON.parse(s.hooks.received[noticesBeforeCrash]!.body);
    expect(resolved).toMatchObject({ status: 'resolved', rule: { id: s.ruleId }, firingSince: firing.firingSince });
    expect(resolved.deliveryId).not.toBe(firing.deliveryId);
    await until('three more evaluations', async () => ((await metric(restarted.baseUrl, 'jobwatch_alert_rule_evaluations_total')) >= 6 ? true : undefined));
    // one notice after the restart, the resolved one (sent again if a send timed out under load)
    expect(distinctBodies(s.hooks.received.slice(noticesBeforeCrash))).toEqual([s.hooks.received[noticesBeforeCrash]!.body]);
    expect(await metric(restarted.baseUrl, 'jobwatch_alert_deliveries_total', 'outcome="delivered"')).toBe(1); // this process delivered the resolved notice
    await restarted.stop();
  }, TEST_TIMEOUT_MS * 2);

  test('a delivery being retried when the process dies is sent after the restart (no loss)', async () => {
    // the receiver fails the first request: the delivery waits 5 s for its retry, and the process dies meanwhile
    const s = await setUp('alerts-retry-restart', (_request, index) => new Response(null, { status: index === 0 ? 503 : 204 }));
    expect((await ingest(s.service.baseUrl, s.connection.apiKey, failedJobs(s.connection.id, 5, 'bad'))).body.accepted).toBe(5);
    await until('the failed first attempt', async () => ((await getJson(s.service.baseUrl, '/api/alert-channels', s.cookie)).body.data[0].deliveries[0]?.outcome === 'retrying' ? true : undefined));
    await s.service.kill();
    expect(s.hooks.received).toHaveLength(1);

    const restarted = await startService({ dataDir: s.dataDir, env: ENV });
    await until('the retry after the restart', () => (s.hooks.received.length >= 2 ? true : undefined));
    expect(s.hooks.received[1]!.body).toBe(s.hooks.received[0]!.body); // the same delivery id and payload
    const cookie = await login(restarted.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    await until('the delivered outcome', async () => ((await getJson(restarted.baseUrl, '/api/alert-channels', cookie)).body.data[0].deliveries[0]?.outcome === 'delivered' ? true : undefined));
    // the one delivery, and no other (its sends after the restart repeat it if one timed out under load)
    expect(distinctBodies(s.hooks.received)).toEqual([s.hooks.received[0]!.body]);
    await restarted.stop();
  }, TEST_TIMEOUT_MS * 2);
});
