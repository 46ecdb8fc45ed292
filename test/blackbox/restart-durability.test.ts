/**
 * A clean stop (SIGTERM) and a restart on the same DATA_DIR lose nothing: jobs, the
 * session (sessions are durable) and the API key all survive.
 */
import { expect, test } from 'bun:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  batchOfJobs,
  createConnection,
  getJson,
  ingest,
  listAllJobs,
  login,
  makeDataDir,
  startService,
  TEST_TIMEOUT_MS,
  cleanUpServices,
} from './service-process.ts';

const dirs = cleanUpServices();

const BATCHES = 12;
const EVENTS_PER_BATCH = 50;

test('SIGTERM writes a snapshot; after a restart every job, the session cookie and the API key are still there', async () => {
  const dataDir = makeDataDir('restart');
  dirs.push(dataDir);
  const env = { ADMIN_EMAIL, ADMIN_PASSWORD, DAILY_EVENT_LIMIT: '0' };

  const first = await startService({ dataDir, env });
  const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connection = await createConnection(first.baseUrl, cookie, 'restart');
  const expected = new Set<string>();
  for (let batch = 0; batch < BATCHES; batch++) {
    const events = batchOfJobs(connection.id, `restart-b${batch}`, EVENTS_PER_BATCH);
    const result = await ingest(first.baseUrl, connection.apiKey, events);
    expect(result.status).toBe(200);
    expect(result.body.accepted).toBe(EVENTS_PER_BATCH);
    for (const event of events) expected.add(event.job.externalId);
  }
  const before = await listAllJobs(first.baseUrl, cookie);
  expect(before).toHaveLength(BATCHES * EVENTS_PER_BATCH);

  expect(await first.stop()).toBe(0);
  const snapshot = first.output.match(/snapshot at seq (\d+): \d+ bytes/);
  expect(snapshot).not.toBeNull();
  const snapshotSeq = Number(snapshot![1]);
  expect(snapshotSeq).toBeGreaterThanOrEqual(BATCHES); // every ingest batch is at least one record

  const second = await startService({ dataDir, env });
  // the restart starts from the snapshot the clean stop wrote and has nothing left to replay
  expect(second.output).toMatch(new RegExp(`recovered: snapshot seq ${snapshotSeq}, 0 records replayed`));
  expect(second.output).not.toContain('created admin');

  // the cookie from before the restart still names the admin
  const me = await getJson(second.baseUrl, '/api/auth/me', cookie);
  expect(me.status).toBe(200);
  expect(me.body.user.email).toBe(ADMIN_EMAIL);

  const after = await listAllJobs(second.baseUrl, cookie, 37);
  expect(new Set(after.map((job) => job.externalId))).toEqual(expected);
  // same service ids and states as before
  const byId = new Map(before.map((job) => [job.id, job]));
  for (const job of after) {
    expect(byId.get(job.id)?.externalId).toBe(job.externalId);
    expect(job.state).toBe('queued');
  }

  // the API key still works, and what it sends now survives the next restart too
  const late = batchOfJobs(connection.id, 'restart-late', 5);
  const result = await ingest(second.baseUrl, connection.apiKey, late);
  expect(result.status).toBe(200);
  expect(result.body.accepted).toBe(5);
  for (const event of late) expected.add(event.job.externalId);
  expect(await second.stop()).toBe(0);

  const third = await startService({ dataDir, env });
  expect(third.output).toMatch(/recovered: snapshot seq \d+, 0 records replayed/);
  const final = await listAllJobs(third.baseUrl, cookie);
  expect(new Set(final.map((job) => job.externalId))).toEqual(expected);
  expect(await third.stop()).toBe(0);
}, TEST_TIMEOUT_MS);
