/**
 * Fairness between tenants' alerts (part of load/tenant-fairness.ts): how late tenant B's
 * firing alert reaches its receiver, alone and while tenant A floods "send a test" on ten
 * connections whose receiver never answers (40 requests in flight at all times, as the
 * probe that found tests starving every tenant's alerts did). The service runs with
 * ALERT_EVAL_SECONDS=1 and ALERT_WEBHOOK_ALLOW_PRIVATE=true (the receivers are on loopback).
 *
 * B's delay is timed from the answer to the ingest that makes its rule fire (five failed
 * jobs in a queue of its own) to the webhook's arrival: up to one evaluation period of
 * waiting for the evaluation, then the send.
 */
import { createConnection } from './service.ts';
import { fmtMs, note, percentiles } from './util.ts';

const A_CONNECTIONS = 10;
const TESTS_IN_FLIGHT = 40;
const TRIALS = 5;
const TRIAL_TIMEOUT_MS = 60_000;

export interface AlertPhase {
  phase: string;
  delaysMs: number[];
  /** trials whose alert never came within TRIAL_TIMEOUT_MS */
  lost: number;
  /** A's test answers by status, with the flood */
  testAnswers: Record<string, number> | null;
}

interface Tenant {
  baseUrl: string;
  cookie: string;
}

export async function measureAlertFairness(a: Tenant, b: Tenant & { connectionId: string; apiKey: string }): Promise<AlertPhase[]> {
  const arrivals = new Map<string, number>();
  const answering = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (request) => {
      const payload = (await request.json()) as { rule?: { name?: string }; status?: string };
      if (payload.status === 'firing' && payload.rule?.name !== undefined) arrivals.set(payload.rule.name, performance.now());
      return new Response(null, { status: 204 });
    },
  });
  const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Promise<Response>(() => {}) });
  try {
    const channelB = await post(b, '/api/alert-channels', { connectionId: b.connectionId, name: 'b pager', url: `http://127.0.0.1:${answering.port}/hook`, format: 'json' });
    const channelsA: string[] = [];
    for (let index = 0; index < A_CONNECTIONS; index++) {
      const { connectionId } = await createConnection(a.baseUrl, a.cookie, `a-${index}`);
      const created = await post(a, '/api/alert-channels', { connectionId, name: `silent ${index}`, url: `http://127.0.0.1:${silent.port}/never`, format: 'json' });
      channelsA.push(created.channel.id);
    }

    let trialNumber = 0;
    const trial = async (): Promise<number | null> => {
      const name = `b-trial-${trialNumber++}`;
      await post(b, '/api/alert-rules', { connectionId: b.connectionId, name, kind: 'failure_rate', queue: name, threshold: 0.5, windowSeconds: 60, channelIds: [channelB.channel.id] });
      const events = Array.from({ length: 5 }, (_, i) => ({
        type: 'job_state_change',
        timestamp: new Date().toISOString(),
        framework: 'celery',
        connectionId: b.connectionId,
        job: { externalId: `${name}-${i}`, name: 'tasks.b', queue: name, state: 'failed' },
      }));
      const ingested = await fetch(`${b.baseUrl}/api/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${b.apiKey}` }, body: JSON.stringify({ events }) });
      if (ingested.status !== 200) throw new Error(`ingest for ${name}: ${ingested.status} ${await ingested.text()}`);
      const firedAfter = performance.now();
      for (const deadline = firedAfter + TRIAL_TIMEOUT_MS; performance.now() < deadline; await Bun.sleep(10)) {
        const arrived = arrivals.get(name);
        if (arrived !== undefined) return arrived - firedAfter;
      }
      return null;
    };
    const phase = async (name: string, flood: boolean): Promise<AlertPhase> => {
      note(`alerts phase ${name}: ${TRIALS} firing alerts of tenant B`);
      const stop = { now: false };
      const testAnswers: Record<string, number> = {};
      const flooding = flood ? Array.from({ length: TESTS_IN_FLIGHT }, (_, lane) => floodTests(a, channelsA[lane % channelsA.length]!, stop, testAnswers)) : [];
      if (flood) await Bun.sleep(2_000); // the flood holds A's send slots before B's first alert
      const delaysMs: number[] = [];
      let lost = 0;
      for (let index = 0; index < TRIALS; index++) {
        const delay = await trial();
        if (delay === null) lost++;
        else delaysMs.push(delay);
      }
      stop.now = true;
      await Promise.all(flooding);
      return { phase: name, delaysMs, lost, testAnswers: flood ? testAnswers : null };
    };
    return [await phase('alone', false), await phase(`A floods tests (${TESTS_IN_FLIGHT} in flight, ${A_CONNECTIONS} connections, receiver never answers)`, true)];
  } finally {
    answering.stop(true);
    silent.stop(true);
  }
}

/** One lane of the flood: a test of `channelId`, answered or refused, then the next, until told to stop. */
async function floodTests(a: Tenant, channelId: string, stop: { now: boolean }, answers: Record<string, number>): Promise<void> {
  while (!stop.now) {
    let status: string;
    try {
      const response = await fetch(`${a.baseUrl}/api/alert-channels/${channelId}/test`, { method: 'POST', headers: { cookie: a.cookie, 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(30_000) });
      const body = (await response.json()) as { waiting?: boolean };
      status = response.status === 200 && body.waiting === true ? '200 waiting' : String(response.status);
    } catch (error) {
      status = (error as Error).name;
    }
    answers[status] = (answers[status] ?? 0) + 1;
  }
}

async function post(tenant: Tenant, path: string, body: unknown): Promise<{ channel: { id: string } }> {
  const response = await fetch(`${tenant.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: tenant.cookie }, body: JSON.stringify(body) });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { channel: { id: string } };
}

export function alertRows(phases: readonly AlertPhase[]): string[][] {
  return phases.map(({ phase, delaysMs, lost, testAnswers }) => {
    const [p50] = percentiles(delaysMs, [50]);
    return [
      phase,
      `${delaysMs.length + lost}`,
      delaysMs.length === 0 ? '-' : fmtMs(p50),
      delaysMs.length === 0 ? '-' : fmtMs(Math.max(...delaysMs)),
      String(lost),
      testAnswers === null ? '-' : Object.entries(testAnswers).map(([status, count]) => `${status} x${count}`).join(', '),
    ];
  });
}
