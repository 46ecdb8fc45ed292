/** Client-controlled limits at and one past their edge, through the routes. */
import { describe, expect, test } from 'bun:test';
import { CONNECTIONS_PER_TEAM_MAX } from '../../actors/accounts/accounts-actor.ts';
import { PASSWORD_CHARS_MAX } from '../../actors/services/account-service.ts';
import { FIELD_LIMITS } from '../../actors/ingest/event-schema.ts';
import { T0, testApp } from '../support/test-app.ts';
import { workerEvent } from '../support/events.ts';

describe('limits at their edge', () => {
  test(`passwords of ${PASSWORD_CHARS_MAX} characters pass, one more is refused`, async () => {
    const t = await testApp();
    const admin = await t.login();
    const create = (email: string, length: number) => t.request('POST', '/api/users', { body: { email, password: 'p'.repeat(length) }, headers: { cookie: admin } });
    expect((await create('long@example.com', PASSWORD_CHARS_MAX)).status).toBe(201);
    const refused = await create('longer@example.com', PASSWORD_CHARS_MAX + 1);
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.json.error.details)).toEqual(['password']);
  });

  test(`a team owns at most ${CONNECTIONS_PER_TEAM_MAX} connections`, async () => {
    const t = await testApp();
    const cookie = await t.login();
    for (let i = 0; i < CONNECTIONS_PER_TEAM_MAX; i++) await t.createConnection(cookie, `c${i}`);
    const refused = await t.request('POST', '/api/connections', { body: { name: 'one-more' }, headers: { cookie } });
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toContain(`at most ${CONNECTIONS_PER_TEAM_MAX}`);
  });

  test(`a worker lists at most ${FIELD_LIMITS.queuesPerWorkerMax} queues`, async () => {
    const t = await testApp();
    const c = await t.createConnection(await t.login(), 'prod');
    const queues = (count: number) => Array.from({ length: count }, (_, i) => `q${i}`);
    const events = [workerEvent(c.id, T0, { externalId: 'w1', queues: queues(FIELD_LIMITS.queuesPerWorkerMax) }), workerEvent(c.id, T0, { externalId: 'w2', queues: queues(FIELD_LIMITS.queuesPerWorkerMax + 1) })];
    const response = await t.ingest(c.apiKey, events);
    expect(response.json).toMatchObject({ accepted: 1, rejected: 1 });
    expect(Object.keys(response.json.errors[0].details)).toEqual(['worker.queues']);
  });

  test('agent: limit 1..1,000 and ack ids 1..1,000', async () => {
    const t = await testApp();
    const c = await t.createConnection(await t.login(), 'prod');
    const agent = { authorization: `Bearer ${c.apiKey}` };
    expect((await t.request('GET', '/api/agent/commands?limit=1000', { headers: agent })).status).toBe(200);
    const tooMany = await t.request('GET', '/api/agent/commands?limit=1001', { headers: agent });
    expect(tooMany.status).toBe(400);
    expect(Object.keys(tooMany.json.error.details)).toEqual(['limit']);
    const ids = (count: number) => Array.from({ length: count }, (_, i) => `cmd-${i}`);
    expect((await t.request('POST', '/api/agent/commands/ack', { body: { ids: ids(1000) }, headers: agent })).json).toEqual({ acked: 0 });
    const refused = await t.request('POST', '/api/agent/commands/ack', { body: { ids: ids(1001) }, headers: agent });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.json.error.details)).toEqual(['ids']);
  });
});
