/**
 * Every route against odd bodies, content types, parameters and credentials: bad input
 * gets a clear error in the envelope, never a 500 (the standard of the project).
 */
import { expect, test } from 'bun:test';
import { testApp } from '../support/test-app.ts';
test('no request shape gets a 500 or an error outside the envelope', async () => {
  const t = await testApp();
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  const routes: Array<[string, string]> = [
    ['POST', '/api/auth/login'], ['POST', '/api/auth/logout'], ['GET', '/api/auth/me'], ['POST', '/api/users'],
    ['POST', '/api/connections'], ['GET', '/api/connections'], ['DELETE', '/api/connections/x'], ['POST', '/api/ingest'],
    ['GET', '/api/jobs'], ['GET', '/api/jobs/x'], ['POST', '/api/jobs/x/revoke'], ['POST', '/api/jobs/x/retry'],
    ['POST', '/api/jobs/bulk/revoke'], ['POST', '/api/jobs/bulk/retry'], ['GET', '/api/queues'], ['GET', '/api/workers'],
    ['GET', '/api/agent/commands'], ['POST', '/api/agent/commands/ack'], ['GET', '/api/health'], ['PUT', '/api/jobs'],
  ];
  const bodies: Array<[string | undefined, string | undefined]> = [
    [undefined, undefined], ['{', 'application/json'], ['[]', 'application/json'], ['null', 'application/json'], ['"x"', 'application/json'],
    ['{"ids":"x"}', 'application/json'], ['{"ids":[1,2]}', 'application/json'], ['{"email":1,"password":[]}', 'application/json'],
    ['a=b', 'application/x-www-form-urlencoded'], ['hello', 'text/plain'], ['{"events":[{"type":"job_state_change","timestamp":"2026-11-21T10:00:00Z","framework":"celery","connectionId":"' + c.id + '","job":{"externalId":"a","name":"n","state":"queued","extensions":{"a":[[[[[[[[[1]]]]]]]]]}}}]}', 'application/json'],
    ['{"__proto__":{"x":1},"name":"y"}', 'application/json'], ['\u0000\u0001', 'application/octet-stream'],
  ];
  const queries = ['', '?limit=-1', '?limit=1e3', '?cursor=%00', '?sortBy[]=x', '?page=99999999999', '?timeRange=', '?state=', '?connectionId=' + 'x'.repeat(100), '?limit=50&limit=abc', '?search=%F0%9F%92%A9'];
  const auths: Record<string, string>[] = [{ cookie }, { authorization: `Bearer ${c.apiKey}` }, {}];
  let count = 0;
  for (const [method, path] of routes) for (const [body, type] of bodies) for (const query of queries) for (const auth of auths) {
    const headers: Record<string, string> = { ...auth };
    if (type) headers['content-type'] = type;
    const response = await t.app.handle(new Request('http://localhost:3000' + path + query, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : body }));
    count++;
    if (response.status >= 500) throw new Error(`${method} ${path}${query} ${type} ${body?.slice(0, 40)} -> ${response.status} ${await response.text()}`);
    const text = await response.text();
    if (response.status >= 400 && !text.includes('"error"')) throw new Error(`${method} ${path}${query} ${type} -> ${response.status} without envelope: ${text.slice(0, 100)}`);
  }
  expect(count).toBe(8580);
  expect(t.errors).toEqual([]);
}, 120_000);
