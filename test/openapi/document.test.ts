/**
 * The document at GET /openapi.json: a valid OpenAPI 3.1 document (checked by a
 * maintained validator of the official schema), with both security schemes, the ingest
 * body, every error answer in the envelope with codes of its status, and the stream.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ErrorCode } from '../../actors/domain-error.ts';
import { STATUS_OF } from '../../src/http/error-envelope.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';
import { testApp, T0 } from '../support/test-app.ts';

interface Operation {
  security?: Array<Record<string, string[]>>;
  requestBody?: { required: boolean; content: Record<string, { schema: object }> };
  responses: Record<string, { content?: Record<string, { schema: any }> }>;
}
let document: any;
const operations = (): Array<[string, Operation]> =>
  Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation]),
  );

beforeAll(async () => {
  const t = await testApp();
  const answer = await t.request('GET', '/openapi.json');
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('application/json');
  document = answer.json;
});

describe('GET /openapi.json', () => {
  test('validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('a broken document does not validate (the validator can fail)', async () => {
    const broken = structuredClone(document);
    broken.paths['/api/jobs'].get.responses['200'].content = 'application/json';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  test('API key bearer for ingest and the agent, the session cookie for the dashboard, either for adding a marker, the metrics token for /metrics, nothing for health and docs', () => {
    expect(document.components.securitySchemes).toMatchObject({
      apiKey: { type: 'http', scheme: 'bearer' },
      session: { type: 'apiKey', in: 'cookie', name: 'session' },
      metricsToken: { type: 'http', scheme: 'bearer' },
    });
    for (const [key, operation] of operations()) {
      const expected = /^\w+ \/api\/(ingest|agent\/)/.test(key)
        ? [{ apiKey: [] }]
        : key === 'POST /api/markers'
          ? ([{ session: [] }, { apiKey: [] }] as Array<Record<string, string[]>>)
          : key === 'GET /metrics'
          ? [{ metricsToken: [] }]
          : /^\w+ \/api\/(health|auth\/login|auth\/logout|auth\/set-password|auth\/methods|auth\/oidc\/start|auth\/oidc\/callback)$|^GET \/(docs|openapi)/.test(key)
            ? []
            : [{ session: [] }];
      expect({ key, security: operation.security }).toEqual({ key, security: expected });
    }
  });

  test('every error answer is the envelope, its codes belong to its status, and each code is on /docs/errors', async () => {
    const t = await testApp();
    const errorsPage = (await t.request('GET', '/docs/errors')).text;
    for (const [key, operation] of operations()) {
      const statuses = Object.keys(operation.responses).map(Number);
      expect({ key, has500: statuses.includes(500) }).toEqual({ key, has500: true });
      for (const status of statuses.filter((s) => s >= 400 && (key !== 'GET /api/health' || s !== 503))) {
        const schema = operation.responses[String(status)]!.content!['application/json']!.schema;
        expect(schema.required).toContain('error');
        expect(schema.properties.error.required).toEqual(['code', 'message', 'docs_url']);
        const code = schema.properties.error.properties.code;
        const codes: ErrorCode[] = code.enum ?? [code.const];
        for (const each of codes) {
          expect({ key, code: each, status: STATUS_OF[each] }).toEqual({ key, code: each, status });
          expect(errorsPage).toContain(`id="${each}"`);
        }
      }
    }
  });

  test('a route answers the codes of what it is: the guard on mutating routes, the body reader where a body is read, its own', () => {
    const codesOf = (key: string, status: number) => {
      const [method, path] = key.split(' ') as [string, string];
      const code = document.paths[path][method.toLowerCase()].responses[String(status)]?.content['application/json'].schema.properties.error.properties.code;
      return code === undefined ? [] : (code.enum ?? [code.const]);
    };
    expect(codesOf('POST /api/ingest', 413)).toEqual(['PAYLOAD_TOO_LARGE']);
    expect(codesOf('POST /api/ingest', 429)).toEqual(['DAILY_LIMIT_EXCEEDED', 'RATE_LIMITED']);
    expect(codesOf('POST /api/auth/login', 429)).toEqual(['RATE_LIMITED']);
    expect(codesOf('POST /api/jobs/{id}/retry', 409)).toEqual(['INVALID_STATE']);
    expect(codesOf('POST /api/connections', 409)).toEqual(['CONFLICT']);
    expect(codesOf('DELETE /api/connections/{id}', 403)).toEqual(['FORBIDDEN']);
    expect(codesOf('GET /api/jobs', 403)).toEqual([]);
    expect(codesOf('GET /api/jobs', 413)).toEqual([]);
    expect(codesOf('POST /api/admin/backup', 403)).toEqual(['FORBIDDEN']);
    expect(document.paths['/api/ingest'].post.responses['429'].headers['Retry-After']).toBeDefined();
    expect(document.paths['/api/ingest'].post.responses['429'].content['application/json'].schema.properties.usage).toBeDefined();
  });

  test('the ingest body is attached: the events the tests send validate against it, a bad one does not', () => {
    const body = document.paths['/api/ingest'].post.requestBody;
    expect(body.required).toBe(true);
    expect(Object.keys(body.content)).toEqual(['application/json']);
    const validate = addFormats(new Ajv2020({ strict: false })).addFormat('rfc3339', true).compile(body.content['application/json'].schema);
    const connectionId = '0190a000-0000-7000-8000-000000000000';
    const full = jobEvent(connectionId, T0, { previousState: 'queued', state: 'completed', workerId: 'w', attempt: 2, maxRetries: null, progress: 1, error: '', extensions: { eta: T0 } });
    expect(validate({ events: [full, workerEvent(connectionId, T0), queueEvent(connectionId, T0)] })).toBe(true);
    expect(validate({ events: [] })).toBe(false);
    expect(validate({ events: [jobEvent(connectionId, T0, { state: 'SUCCESS' })] })).toBe(false);
    expect(validate({ events: [{ ...queueEvent(connectionId, T0), type: 'job_state_change' }] })).toBe(false);
  });

  test('request models are the routes\' own: query parameters, bodies, the resume header', () => {
    const parameters = (path: string) => Object.fromEntries(document.paths[path].get.parameters.map((p: any) => [`${p.in}:${p.name}`, p]));
    const jobs = parameters('/api/jobs');
    expect(Object.keys(jobs)).toEqual(['query:cursor', 'query:limit', 'query:search', 'query:args', 'query:state', 'query:queue', 'query:worker', 'query:connectionId', 'query:framework', 'query:parentId', 'query:rootId', 'query:sortBy', 'query:sortOrder']);
    expect(Object.values(jobs).every((p: any) => p.required === false)).toBe(true);
    expect(jobs['query:limit'].schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
    // the defaults the routes apply (validQuery fills them from the same models)
    expect([jobs['query:sortBy'].schema.default, jobs['query:sortOrder'].schema.default]).toEqual(['createdAt', 'desc']);
    const queues = parameters('/api/queues');
    expect([queues['query:sortBy'].schema.default, queues['query:sortOrder'].schema.default, queues['query:timeRange'].schema.default, queues['query:page'].schema.default]).toEqual(['name', 'asc', '24h', 1]);
    expect(parameters('/api/agent/commands')['query:limit'].schema.default).toBe(100);
    expect(parameters('/api/events/stream')['header:last-event-id']).toBeDefined();
    expect(document.paths['/api/jobs/bulk/revoke'].post.requestBody.content['application/json'].schema.properties.ids).toMatchObject({ minItems: 1, maxItems: 100 });
  });

  test('the stream is text/event-stream, its event types described and their data schemas named', () => {
    const stream = document.paths['/api/events/stream'].get;
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    for (const event of ['`job`', '`worker`', '`queue`', '`command`', '`reset`', 'StreamJob', 'StreamWorker', 'StreamQueue', 'StreamCommand', 'Last-Event-ID']) expect(stream.description).toContain(event);
    expect(Object.keys(document.components.schemas)).toEqual(['StreamJob', 'StreamWorker', 'StreamQueue', 'StreamCommand']);
    expect(stream.responses['429']).toBeDefined();
  });
});
