/**
 * A batch jobwatch refuses as a whole costs only the events it refuses: the deliverer sends
 * it again in halves until they are alone, drops those (naming each in its log) and
 * delivers the rest. Against a stand-in that refuses one marked event, to count requests
 * and see an outage in the middle of a split, and against the real jobwatch.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deliverer, eventIdentity } from '../../../agents/bullmq/src/deliver.js';
import { HttpClient, NetworkError } from '../../../agents/bullmq/src/http-client.js';
import { Spool } from '../../../agents/bullmq/src/spool.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, getJson, login, makeDataDir, removeDir, startService, type ServiceProcess } from '../../blackbox/service-process.ts';
import { jobEvent } from '../../support/events.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-bullmq-refused-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What the agent writes to stderr while `work` runs. */
async function logOf(work: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await work();
  } finally {
    process.stderr.write = write;
  }
  return lines.join('');
}

const CONNECTION = '0190b6d6-0000-7000-8000-000000000001';
const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const events = (count: number) => Array.from({ length: count }, (_, n) => jobEvent(CONNECTION, T0 + n, { externalId: `mail:${n}`, name: 'send' }, { framework: 'bullmq' }));

/** Refuses (400) any body holding an event with `poison` in its extensions; `outageAt` makes that request fail as a network error. */
function refusingClient(outageAt: number | null = null) {
  const bodies: string[] = [];
  return {
    bodies,
    async request(_method: string, _path: string, body: string) {
      bodies.push(body);
      if (bodies.length === outageAt) throw new NetworkError('ECONNREFUSED');
      const sent = JSON.parse(body).events;
      if (sent.some((event: any) => event.job?.extensions?.poison)) {
        return { status: 400, body: { error: { code: 'VALIDATION_ERROR', message: 'request body must not nest more than 32 levels deep' } }, retryAfterMs: null };
      }
      return { status: 200, body: { accepted: sent.length, rejected: 0 }, retryAfterMs: null };
    },
  };
}
const deliveredIds = (bodies: string[]) => bodies.flatMap((body) => JSON.parse(body).events).map((event: any) => event.job.externalId);

describe('a batch refused as a whole', () => {
  test('is sent again in halves: only the refused event is dropped, named in the log, and the others are delivered', async () => {
    const client = refusingClient();
    const deliverer = new Deliverer(client as any, new Spool(tempDir(), 1024 * 1024), { batchSize: 1000 });
    const batch = events(96);
    (batch[41]!.job as any).extensions = { poison: true };
    deliverer.submit(batch);
    const log = await logOf(() => deliverer.step());
    expect(deliverer.sent).toBe(95);
    expect(deliverer.droppedRefused).toBe(1);
    expect(new Set(deliveredIds(client.bodies.filter((body) => !body.includes('poison'))))).toEqual(new Set(batch.filter((_, n) => n !== 41).map((event) => event.job.externalId)));
    // a binary search: the whole, then one refused half per level (7 levels for 96 events), each with its sibling
    expect(client.bodies.length).toBeLessThanOrEqual(1 + 2 * 7);
    expect(log).toContain('jobwatch refused a batch of 96 events with 400 (VALIDATION_ERROR: request body must not nest more than 32 levels deep); sending it again in halves');
    expect(log).toMatch(/ERROR jobwatch_bullmq\.deliver: jobwatch refused event job_state_change mail:41 \(queued\) at 2026-11-20T10:00:00\.041Z with 400 .*dropped this event only; 1 events dropped this way since start/);
    expect(deliverer.pending).toBe(0);
  });

  test('many refused events: each is dropped alone, the log names the first ones and counts the rest', async () => {
    const client = refusingClient();
    const deliverer = new Deliverer(client as any, new Spool(tempDir(), 1024 * 1024), { batchSize: 1000 });
    const batch = events(60);
    for (let n = 0; n < 60; n += 2) (batch[n]!.job as any).extensions = { poison: true };
    deliverer.submit(batch);
    const log = await logOf(() => deliverer.step());
    expect(deliverer.sent).toBe(30);
    expect(deliverer.droppedRefused).toBe(30);
    expect(log.match(/dropped this event only/g)?.length).toBe(20);
    expect(log).toContain('... and 10 more events of the batch refused and dropped');
  });

  test('an outage in the middle of a split leaves the whole batch in the spool; sent again, only the refused event is dropped', async () => {
    const client = refusingClient(3); // the whole (refused), its first half (refused), then the network is gone
    const spool = new Spool(tempDir(), 1024 * 1024);
    const deliverer = new Deliverer(client as any, spool, { batchSize: 1000 });
    const batch = events(8);
    (batch[1]!.job as any).extensions = { poison: true };
    deliverer.submit(batch);
    await logOf(() => deliverer.step());
    expect(spool.events).toBe(8);
    expect(deliverer.droppedRefused).toBe(0);
    deliverer.retryAt = 0;
    await logOf(() => deliverer.step());
    expect(spool.events).toBe(0);
    expect(deliverer.droppedRefused).toBe(1);
    expect(new Set(deliveredIds(client.bodies.filter((body) => !body.includes('poison'))))).toEqual(new Set(batch.filter((_, n) => n !== 1).map((event) => event.job.externalId)));
  });

  test('events rejected one by one in a 200 answer are named and never sent again', async () => {
    const client = {
      calls: 0,
      async request(_method: string, _path: string, body: string) {
        this.calls += 1;
        const count = JSON.parse(body).events.length;
        return { status: 200, body: { accepted: count - 1, rejected: 1, errors: [{ index: 2, code: 'VALIDATION_ERROR', message: 'job.name too long' }] }, retryAfterMs: null };
      },
    };
    const deliverer = new Deliverer(client as any, new Spool(tempDir(), 1024 * 1024));
    deliverer.submit(events(4));
    const log = await logOf(async () => {
      await deliverer.step();
      await deliverer.step();
    });
    expect(client.calls).toBe(1);
    expect(log).toContain('jobwatch rejected event job_state_change mail:2 (queued) at 2026-11-20T10:00:00.002Z: VALIDATION_ERROR job.name too long');
  });

  test('an event is named by its type, id, state and time', () => {
    expect(eventIdentity(JSON.stringify(events(1)[0]))).toBe('event job_state_change mail:0 (queued) at 2026-11-20T10:00:00.000Z');
    expect(eventIdentity('{"type":"queue_snapshot","timestamp":"t","queue":{"name":"mail","depth":1}}')).toBe('event queue_snapshot mail at t');
    expect(eventIdentity('not json')).toBe('an event (not json)');
  });
});

describe('against the real jobwatch', () => {
  let service: ServiceProcess;
  let dataDir: string;
  let cookie: string;
  let connection: { id: string; apiKey: string };

  beforeAll(async () => {
    dataDir = makeDataDir('bullmq-refused');
    service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
    cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    connection = await createConnection(service.baseUrl, cookie, 'refused');
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    removeDir(dataDir);
  });

  test('an event nested past the body limit (not bounded by the agent, as an older agent sent it) costs only itself among 96', async () => {
    let nested: unknown = 1;
    for (let level = 0; level < 40; level++) nested = [nested];
    const batch = Array.from({ length: 96 }, (_, n) =>
      jobEvent(connection.id, T0 + n, { externalId: `bulk:${n}`, name: 'bulk-job', queue: 'bulk', state: 'completed', extensions: n === 50 ? { progress: nested } : {} }, { framework: 'bullmq' }),
    );
    const deliverer = new Deliverer(new HttpClient(service.baseUrl, connection.apiKey), new Spool(tempDir(), 1024 * 1024));
    deliverer.submit(batch);
    const log = await logOf(() => deliverer.step());
    const listed = await getJson(service.baseUrl, '/api/jobs?framework=bullmq&state=completed&limit=100', cookie);
    const ids = new Set(listed.body.data.map((job: any) => job.externalId));
    expect(ids.size).toBe(95);
    expect(ids.has('bulk:50')).toBe(false);
    // refused as a whole and split (today's service), or rejected alone (a service that checks nesting per event): named either way
    expect(log).toMatch(/jobwatch (refused|rejected) event job_state_change bulk:50 \(completed\) at 2026-11-20T10:00:00\.050Z/);
  }, 60_000);
});
