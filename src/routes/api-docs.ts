/**
 * GET /openapi.json, the document of every route this app serves (built once, on the
 * first request, from the route table), and GET /docs, a reference page rendering it
 * with Swagger UI. The page must work offline and under a strict Content-Security-Policy,
 * so Swagger UI's bundle and stylesheet are served from the installed swagger-ui-dist
 * package (never a CDN; it has no dependencies, which keeps the install small), its
 * configuration is a script file rather than inline code, and its one call out (the
 * validator badge, which sends the document to a hosted validator) is switched off.
 * The error docs stay at /docs/errors (error-docs.ts), where every `docs_url` points.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { buildOpenApiDocument, type RouteEntry } from '../openapi/build-document.ts';
import { CONTENT_SECURITY_POLICY } from './ui.ts';

const SWAGGER_UI_DIR = dirname(Bun.resolveSync('swagger-ui-dist/package.json', import.meta.dir));
const SWAGGER_UI_VERSION = (JSON.parse(readFileSync(join(SWAGGER_UI_DIR, 'package.json'), 'utf8')) as { version: string }).version;
/** Versioned, so they can be cached for good; an upgrade changes the names. */
const SWAGGER_UI_SCRIPT = `swagger-ui-bundle-${SWAGGER_UI_VERSION}.js`;
const SWAGGER_UI_STYLESHEET = `swagger-ui-${SWAGGER_UI_VERSION}.css`;
const CONFIGURE_SCRIPT = 'reference.js';

/**
 * The dashboard's policy as it is: scripts and styles are this origin's files only (Swagger
 * UI sets styles through the CSSOM, which the policy allows), its icons are data URLs, and
 * `connect-src 'self'` keeps every request of the page (its "try it out" client included)
 * on this service.
 */
export const DOCS_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>jobwatch API reference</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/${SWAGGER_UI_STYLESHEET}"></head>
<body><div id="reference"></div>
<script src="/docs/assets/${SWAGGER_UI_SCRIPT}"></script>
<script src="/docs/assets/${CONFIGURE_SCRIPT}"></script>
</body></html>`;

const CONFIGURE = `SwaggerUIBundle(${JSON.stringify({
  url: '/openapi.json',
  dom_id: '#reference',
  validatorUrl: null, // the badge would send the document to a hosted validator
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
})});\n`;

interface Asset {
  body: Blob;
  gzip: Blob;
  contentType: string;
  cacheControl: string;
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';

const gzip = promisify(gzipCallback);

/**
 * Read and compressed on first use (route tests never ask for it), off the event loop:
 * gzipping a script of megabytes synchronously stalls every other request for a long
 * moment (150-300 ms for the 4 MB renderer used before), the thread-pool `zlib.gzip` not.
 */
async function loadAssets(): Promise<Map<string, Asset>> {
  // the source maps are not shipped: the comment would only make developer tools ask for them
  const withoutSourceMap = (text: string) => text.replace(/\n\/[/*]# sourceMappingURL=\S+\s*(\*\/)?\s*$/, '\n');
  const script = withoutSourceMap(await Bun.file(join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js')).text());
  const stylesheet = withoutSourceMap(await Bun.file(join(SWAGGER_UI_DIR, 'swagger-ui.css')).text());
  const asset = async (text: string, contentType: string, cacheControl: string): Promise<Asset> => {
    const bytes = new TextEncoder().encode(text);
    return { body: new Blob([bytes]), gzip: new Blob([await gzip(bytes)]), contentType, cacheControl };
  };
  const forGood = 'public, max-age=31536000, immutable';
  return new Map([
    [SWAGGER_UI_SCRIPT, await asset(script, JAVASCRIPT, forGood)],
    [SWAGGER_UI_STYLESHEET, await asset(stylesheet, 'text/css; charset=utf-8', forGood)],
    [CONFIGURE_SCRIPT, await asset(CONFIGURE, JAVASCRIPT, 'no-cache')],
  ]);
}

export function apiDocsRoutes() {
  let document: string | null = null;
  let assets: Promise<Map<string, Asset>> | null = null;
  const app = new Elysia({ name: 'api-docs' });
  return app
    .get('/openapi.json', () => {
      // the parent app's table: Elysia points a plugin's getGlobalRoutes at the app using it
      document ??= JSON.stringify(buildOpenApiDocument((app as unknown as { getGlobalRoutes(): RouteEntry[] }).getGlobalRoutes()));
      return new Response(document, { headers: { 'content-type': 'application/json' } });
    })
    .get(
      '/docs',
      () =>
        new Response(PAGE, {
          headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'content-security-policy': DOCS_CONTENT_SECURITY_POLICY, 'x-frame-options': 'DENY', 'referrer-policy': 'same-origin' },
        }),
    )
    .get('/docs/assets/:name', async ({ params, request }) => {
      // a failed load (a file missing) is tried again by the next request, not kept
      assets ??= loadAssets().catch((error: unknown) => {
        assets = null;
        throw error;
      });
      const asset = (await assets).get(params.name);
      if (asset === undefined) throw new DomainError('NOT_FOUND', 'asset not found');
      const useGzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
      const headers: Record<string, string> = { 'content-type': asset.contentType, 'cache-control': asset.cacheControl, vary: 'accept-encoding' };
      if (useGzip) headers['content-encoding'] = 'gzip';
      return new Response(useGzip ? asset.gzip : asset.body, { headers });
    });
}
