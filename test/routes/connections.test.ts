import { describe, expect, test } from 'bun:test';
import { T0, testApp } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';

describe('connections', () => {
  test('create returns the key once (sk_ + at least 32 random bytes); list shows a prefix and usage, never the key', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const created = await t.request('POST', '/api/connections', { body: { name: 'prod' }, headers: { cookie } });
    expect(created.status).toBe(201);
    const apiKey: string = created.json.apiKey;
    expect(apiKey).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(created.json.connection.name).toBe('prod');
    const listed = await t.request('GET', '/api/connections', { headers: { cookie } });
    expect(listed.status).toBe(200);
    expect(listed.json.data).toHaveLength(1);
    const [item] = listed.json.data;
    expect(apiKey.startsWith(item.keyPrefix)).toBe(true);
    expect(listed.text).not.toContain(apiKey);
    expect(item.usage).toMatchObject({ used: 0, limit: 10_000, remaining: 10_000 });
  });

  test('a duplicate name for the same user is 409; another user may use it', async () => {
    const t = await testApp();
    const admin = await t.login();
    await t.createConnection(admin, 'prod');
    const again = await t.request('POST', '/api/connections', { body: { name: 'prod' }, headers: { cookie: admin } });
    expect(again.status).toBe(409);
    const other = await t.createUser(admin, 'other@example.com');
    expect((await t.request('POST', '/api/connections', { body: { name: 'prod' }, headers: { cookie: other } })).status).toBe(201);
  });

  test('a name or email with a lone UTF-16 surrogate is refused (it would change on reload)', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const response = await t.request('POST', '/api/connections', { body: { name: 'prod\ud800' }, headers: { cookie } });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { name: ['must be well-formed Unicode (no lone UTF-16 surrogates)'] } });
    const user = await t.request('POST', '/api/users', { body: { email: 'a\udc00@example.com', password: 'a long enough password' }, headers: { cookie } });
    expect(user.status).toBe(400);
    expect(user.json.error.details.email).toBeDefined();
    expect((await t.request('POST', '/api/connections', { body: { name: 'prod \ud83d\ude80' }, headers: { cookie } })).status).toBe(201);
  });

  test('a blank name is a validation error naming the field', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const response = await t.request('POST', '/api/connections', { body: { name: '   ' }, headers: { cookie } });
    expect(response.status).toBe(400);
    expect(response.json.error.details.name).toBeDefined();
  });

  test('delete removes the connection, its key and all its data; a foreign or unknown id is 404', async () => {
    const t = await testApp();
    const admin = await t.login();
    const connection = await t.createConnection(admin, 'prod');
    expect((await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)])).json.accepted).toBe(1);
    const other = await t.createUser(admin, 'other@example.com');
    expect((await t.request('DELETE', `/api/connections/${connection.id}`, { headers: { cookie: other } })).status).toBe(404);
    const deleted = await t.request('DELETE', `/api/connections/${connection.id}`, { headers: { cookie: admin } });
    expect(deleted.status).toBe(204);
    expect(t.engine.connection(connection.id)).toBeUndefined();
    const ingest = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)]);
    expect(ingest.status).toBe(401);
    expect((await t.request('GET', '/api/connections', { headers: { cookie: admin } })).json.data).toEqual([]);
    expect((await t.request('DELETE', `/api/connections/${connection.id}`, { headers: { cookie: admin } })).status).toBe(404);
  });

  test('connections need a session', async () => {
    const t = await testApp();
    expect((await t.request('GET', '/api/connections')).status).toBe(401);
    expect((await t.request('POST', '/api/connections', { body: { name: 'x' } })).status).toBe(401);
  });
});
