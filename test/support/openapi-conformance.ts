/**
 * Every answer a route test gets through `app.handle` is checked against the OpenAPI
 * document the app serves: the status must be one the document lists for that
 * operation, the content type one it names, and a JSON body must match the documented
 * schema. A mismatch throws from `app.handle`, failing the test that made the request,
 * so the document cannot drift from what the routes answer. The document is fetched and
 * its schemas compiled once per test process.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ErrorCode } from '../../actors/domain-error.ts';
import { UNDOCUMENTED_ROUTES } from '../../src/openapi/build-document.ts';
import { errorEnvelope } from '../../src/openapi/error-responses.ts';
import { STATUS_OF } from '../../src/http/error-envelope.ts';
import { requestPath } from '../../src/http/request-path.ts';

interface MediaObject {
  schema?: object;
}
interface ResponseObject {
  content?: Record<string, MediaObject>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
}

type Handle = (request: Request) => Promise<Response>;

interface Template {
  path: string;
  pattern: RegExp;
  literalSegments: number;
}

const toTemplate = (path: string): Template => ({
  path,
  pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[^/]+\}/g, '[^/]+')}$`),
  literalSegments: path.split('/').filter((segment) => segment !== '' && !segment.startsWith('{')).length,
});

export class Conformance {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Template[];
  /** any error envelope, for requests outside every operation */
  private readonly unrouted = this.ajv.compile(JSON.parse(JSON.stringify(errorEnvelope(Object.keys(STATUS_OF) as ErrorCode[]))));

  constructor(readonly document: OpenApiDocument) {
    this.ajv.addFormat('rfc3339', true);
    // most literal segments first: /api/jobs/bulk/retry before /api/jobs/{id}/retry
    this.templates = Object.keys(document.paths).map(toTemplate).sort((a, b) => b.literalSegments - a.literalSegments);
  }

  async check(request: Request, response: Response): Promise<void> {
    const method = (request.method === 'HEAD' ? 'GET' : request.method).toLowerCase();
    const path = requestPath(request);
    const template = this.templates.find((candidate) => candidate.pattern.test(path) && this.document.paths[candidate.path]![method] !== undefined);
    if (template === undefined) return this.checkUnrouted(request, path, response);
    const where = `${request.method} ${path} (documented as ${method.toUpperCase()} ${template.path})`;
    const documented = this.document.paths[template.path]![method]!.responses[String(response.status)];
    if (documented === undefined) {
      const listed = Object.keys(this.document.paths[template.path]![method]!.responses).join(', ');
      throw new Error(`${where} answered ${response.status} ${await bodyExcerpt(response)}, a status the OpenAPI document does not list (it lists ${listed})`);
    }
    const media = Object.keys(documented.content ?? {});
    if (media.length === 0) return;
    const contentType = response.headers.get('content-type') ?? '';
    const type = media.find((candidate) => contentType.startsWith(candidate));
    if (type === undefined) throw new Error(`${where} answered ${response.status} as '${contentType}', the document says ${media.join(' or ')}`);
    if (type !== 'application/json' || request.method === 'HEAD') return;
    const key = `${method} ${template.path} ${response.status}`;
    let validate = this.validators.get(key);
    if (validate === undefined) this.validators.set(key, (validate = this.ajv.compile(documented.content![type]!.schema ?? {})));
    const body: unknown = JSON.parse(await response.clone().text());
    if (!validate(body)) {
      throw new Error(`${where} answered ${response.status} with a body that does not match the OpenAPI document: ${this.ajv.errorsText(validate.errors)}\nbody: ${JSON.stringify(body).slice(0, 2000)}`);
    }
  }

  /** No such operation: the edge's answer (the 404, or a guard's refusal before routing) in the envelope, with its code's status. */
  private async checkUnrouted(request: Request, path: string, response: Response): Promise<void> {
    if (isUndocumentedRequest(request.method, path)) return;
    const body = (await response.clone().json().catch(() => null)) as { error?: { code?: string } } | null;
    const code = body?.error?.code as ErrorCode | undefined;
    if (!this.unrouted(body) || code === undefined || STATUS_OF[code] !== response.status) {
      throw new Error(`${request.method} ${path} has no operation in the OpenAPI document, and its answer ${response.status} is not an error envelope: ${JSON.stringify(body).slice(0, 500)}`);
    }
  }
}

/** Requests the app answers from a route left out of the document on purpose (its pages and assets). */
const UNDOCUMENTED_PATTERNS = UNDOCUMENTED_ROUTES.flatMap((group) =>
  group.paths.map((path) => ({ method: group.method, pattern: new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+')}$`) })),
);
const isUndocumentedRequest = (method: string, path: string): boolean =>
  UNDOCUMENTED_PATTERNS.some((route) => route.method === method && route.pattern.test(path));

async function bodyExcerpt(response: Response): Promise<string> {
  const type = response.headers.get('content-type') ?? '';
  return type.startsWith('application/json') ? (await response.clone().text()).slice(0, 500) : `(${type || 'no content type'})`;
}

let conformance: Promise<Conformance> | null = null;

/** The document as the app serves it, read once per process. */
export function servedDocument(handle: Handle): Promise<Conformance> {
  conformance ??= handle(new Request('http://localhost:3000/openapi.json')).then(async (response) => new Conformance((await response.json()) as OpenApiDocument));
  return conformance;
}

/** Wraps `app.handle` so every answer is checked (see the top of this file). */
export function checkAnswersAgainstOpenApi(app: { handle: Handle }): void {
  const handle = app.handle.bind(app);
  app.handle = async (request: Request) => {
    const checker = await servedDocument(handle);
    const response = await handle(request);
    await checker.check(request, response);
    return response;
  };
}
