/**
 * The check every route test runs on its answers (test/support/openapi-conformance.ts)
 * can fail: against a copy of the document with one schema, status or media type made
 * wrong, real answers of the app are refused, and against the document itself accepted.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { Conformance, type OpenApiDocument } from '../support/openapi-conformance.ts';
import { jobEvent } from '../support/events.ts';
import { BASE, testApp, T0, type TestApp } from '../support/test-app.ts';

let t: TestApp;
let served: OpenApiDocument;
let cookie: string;
let jobId: string;

beforeAll(async () => {
  t = await testApp();
  served = (await t.request('GET', '/openapi.json')).json;
  cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  await t.ingest(c.apiKey, [jobEvent(c.id, T0)]);
  jobId = (await t.request('GET', '/api/jobs', { headers: { cookie } })).json.data[0].id;
});

/** One request to the app, checked against `document`. */
async function checkedAgainst(document: OpenApiDocument, path: string, headers: Record<string, string> = { cookie }) {
  const response = await t.app.handle(new Request(BASE + path, { headers }));
  return new Conformance(document).check(new Request(BASE + path, { headers }), response);
}

const edited = (edit: (document: any) => void): OpenApiDocument => {
  const copy = structuredClone(served);
  edit(copy);
  return copy;
};

describe('the conformance check', () => {
  test('accepts the answers of the app against the document it serves', async () => {
    await checkedAgainst(served, '/api/jobs');
    await checkedAgainst(served, `/api/jobs/${jobId}`);
    await checkedAgainst(served, '/api/jobs/no-such-job');
    await checkedAgainst(served, '/docs/errors');
  });

  test('refuses a body the documented schema does not allow', async () => {
    const wrong = edited((d) => {
      d.paths['/api/jobs'].get.responses['200'].content['application/json'].schema.properties.data.items.properties.queue = { type: 'integer' };
    });
    await expect(checkedAgainst(wrong, '/api/jobs')).rejects.toThrow(/does not match the OpenAPI document: data\/data\/0\/queue must be integer/);
  });

  test('refuses a field the document does not list', async () => {
    const wrong = edited((d) => {
      delete d.paths['/api/jobs/{id}'].get.responses['200'].content['application/json'].schema.properties.lastCommand;
    });
    await expect(checkedAgainst(wrong, `/api/jobs/${jobId}`)).rejects.toThrow(/must NOT have additional properties/);
  });

  test('refuses a status the document does not list for the operation', async () => {
    const wrong = edited((d) => delete d.paths['/api/jobs/{id}'].get.responses['404']);
    await expect(checkedAgainst(wrong, '/api/jobs/no-such-job')).rejects.toThrow(/answered 404 .* a status the OpenAPI document does not list/);
  });

  test('refuses an error code the document does not list for that status', async () => {
    const wrong = edited((d) => {
      d.paths['/api/jobs'].get.responses['401'].content['application/json'].schema.properties.error.properties.code = { const: 'FORBIDDEN' };
    });
    await expect(checkedAgainst(wrong, '/api/jobs', {})).rejects.toThrow(/error\/code must be equal to constant/);
  });

  test('refuses a media type other than the documented one', async () => {
    const wrong = edited((d) => {
      d.paths['/docs/errors'].get.responses['200'].content = { 'application/json': { schema: {} } };
    });
    await expect(checkedAgainst(wrong, '/docs/errors')).rejects.toThrow(/as 'text\/html; charset=utf-8', the document says application\/json/);
  });

  test('an answer to a path with no operation must still be the error envelope', async () => {
    await checkedAgainst(served, '/api/no-such-route');
    const wrong = edited((d) => delete d.paths['/api/health']);
    await expect(checkedAgainst(wrong, '/api/health')).rejects.toThrow(/has no operation in the OpenAPI document/);
  });
});
