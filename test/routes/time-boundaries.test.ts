/**
 * Rules that compare a time with a limit, checked on both sides of the limit and on it:
 * a session is over at the very millisecond it expires, and retention keeps what changed
 * exactly at the cutoff (now - RETENTION_HOURS) and removes what is one millisecond older.
 * An off-by-one in either comparison passes every test that stays away from the edge.
 */
import { describe, expect, test } from 'bun:test';
import { testApp, T0 } from '../support/test-app.ts';
import { jobEvent, workerEvent } from '../support/events.ts';

const SESSION_TTL_MS = 7 * 86_400_000; // what testApp gives AccountService
const RETENTION_MS = 86_400_000; // testApp's default retentionMs

describe('session expiry at its edge', () => {
  test('a session works one millisecond before it expires and is refused at the expiry itself', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const me = () => t.request('GET', '/api/auth/me', { headers: { cookie } });

    t.clock.set(T0 + SESSION_TTL_MS - 1);
    expect((await me()).status).toBe(200);

    t.clock.set(T0 + SESSION_TTL_MS);
    const expired = await me();
    expect(expired.status).toBe(401);
    expect(expired.json.error.code).toBe('UNAUTHORIZED');
  });

  test('an expired session stays refused after the same user logs in again', async () => {
    const t = await testApp();
    const old = await t.login();
    t.clock.set(T0 + SESSION_TTL_MS);
    const fresh = await t.login();
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie: old } })).status).toBe(401);
    expect((await t.request('GET', '/api/auth/me', { headers: { cookie: fresh } })).status).toBe(200);
  });
});

describe('retention at its cutoff', () => {
  /** Retention as the server's timer runs it, at `T0 + 1 + RETENTION_MS`: the cutoff is T0 + 1. */
  const RETENTION_AT_MS = T0 + 1 + RETENTION_MS;
  const CUTOFF_MS = RETENTION_AT_MS - RETENTION_MS;

  test('a job whose last state change is exactly at the cutoff is kept; one a millisecond older is removed', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    await t.ingest(c.apiKey, [
      jobEvent(c.id, CUTOFF_MS - 1, { externalId: 'older' }),
      jobEvent(c.id, CUTOFF_MS, { externalId: 'at-cutoff' }),
      jobEvent(c.id, CUTOFF_MS + 1, { externalId: 'newer' }),
    ]);

    await t.engine.commit({ t: 'retention', atMs: RETENTION_AT_MS });

    const listed = await t.request('GET', '/api/jobs?sortBy=createdAt&sortOrder=asc', { headers: { cookie } });
    expect(listed.json.data.map((job: { externalId: string }) => job.externalId)).toEqual(['at-cutoff', 'newer']);
    expect(listed.json.pagination.total).toBe(2);
  });

  test('a job created before the cutoff whose state changed at the cutoff is kept', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    await t.ingest(c.apiKey, [
      jobEvent(c.id, CUTOFF_MS - 5_000, { externalId: 'long-running', state: 'queued' }),
      jobEvent(c.id, CUTOFF_MS, { externalId: 'long-running', state: 'active' }),
    ]);

    await t.engine.commit({ t: 'retention', atMs: RETENTION_AT_MS });

    expect(t.engine.connection(c.id)!.jobs.getByExternalId('long-running')?.state).toBe('active');
  });

  // The createdAt scan stops at the cutoff; a payload createdAt later than the job's events
  // must not hide it (see actors/connection/late-created-jobs.ts).
  test('a job whose reported createdAt is after the cutoff but whose last change is older is removed', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    await t.ingest(c.apiKey, [jobEvent(c.id, CUTOFF_MS - 10, { externalId: 'skewed', createdAt: new Date(CUTOFF_MS).toISOString() })]);
    expect(t.engine.connection(c.id)!.jobs.getByExternalId('skewed')?.createdAtMs).toBe(CUTOFF_MS);

    await t.engine.commit({ t: 'retention', atMs: RETENTION_AT_MS });

    expect(t.engine.connection(c.id)!.jobs.getByExternalId('skewed')).toBeUndefined();
  });

  test('a worker last heard from exactly at the cutoff is kept; one a millisecond older is removed', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    await t.ingest(c.apiKey, [
      workerEvent(c.id, CUTOFF_MS - 1, { externalId: 'silent', hostname: 'host-a' }),
      workerEvent(c.id, CUTOFF_MS, { externalId: 'at-cutoff', hostname: 'host-b' }),
    ]);

    await t.engine.commit({ t: 'retention', atMs: RETENTION_AT_MS });

    const workers = await t.request('GET', '/api/workers', { headers: { cookie } });
    expect(workers.json.data.map((worker: { externalId?: string; id: string }) => worker.externalId ?? worker.id)).toEqual(['at-cutoff']);
  });

  test('a command created exactly at the cutoff is kept; one a millisecond older is removed', async () => {
    const t = await testApp({ nowMs: CUTOFF_MS - 1 });
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    await t.ingest(c.apiKey, [
      jobEvent(c.id, CUTOFF_MS - 10, { externalId: 'first', state: 'active' }),
      jobEvent(c.id, CUTOFF_MS + 10, { externalId: 'second', state: 'active' }),
    ]);
    const actor = t.engine.connection(c.id)!;
    await t.request('POST', `/api/jobs/${actor.jobs.getByExternalId('first')!.id}/revoke`, { headers: { cookie } });
    t.clock.set(CUTOFF_MS);
    await t.request('POST', `/api/jobs/${actor.jobs.getByExternalId('second')!.id}/revoke`, { headers: { cookie } });

    await t.engine.commit({ t: 'retention', atMs: RETENTION_AT_MS });

    const commands = await t.request('GET', '/api/agent/commands', { headers: { authorization: `Bearer ${c.apiKey}` } });
    expect(commands.json.data.map((command: { externalId: string }) => command.externalId)).toEqual(['second']);
  });
});
