import { describe, expect, test } from 'bun:test';
import { T0, testApp } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';

describe('smoke', () => {
  test('login, create a connection, ingest one event', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const connection = await t.createConnection(cookie, 'prod');
    const response = await t.ingest(connection.apiKey, [jobEvent(connection.id, T0)]);
    expect(response.status).toBe(200);
    expect(response.json.accepted).toBe(1);
  });
});
