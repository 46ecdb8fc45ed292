/**
 * GET /openapi.json, the document of every route this app serves (built once, on the
 * first request, from the route table), and GET /docs, a reference page rendering it
 * with Scalar. The page must work offline and under a strict Content-Security-Policy,
 * so Scalar's standalone script is served from the installed @scalar/api-reference
 * package (never a CDN), its configuration is a script file rather than inline code,
 * and Scalar's own calls out (fonts, telemetry, its request proxy, its hosted AI and
 * sharing features) are switched off. The mount point must not be `#api-reference`:
 * the script mounts a second, default-configured copy on an element of that id.
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

const SCALAR_DIST_DIR = dirname(Bun.resolveSync('@scalar/api-reference', import.meta.dir));
const SCALAR_VERSION = (JSON.parse(readFileSync(join(SCALAR_DIST_DIR, '..', 'package.json'), 'utf8')) as { version: string }).version;
/** Versioned, so it can be cached for good; an upgrade changes the name. */
const SCALAR_SCRIPT = `scalar-api-reference-${SCALAR_VERSION}.js`;
const CONFIGURE_SCRIPT = 'reference.js';

/**
 * The dashboard's policy, except that Scalar (Vue) sets styles at run time, so this page
 * alone allows inline styles, and its bundled fonts come as data URLs. Scripts stay this
 * origin's files only, and `connect-src 'self'` keeps every request of the page (its
 * "try it" client included) on this service.
 */
export const DOCS_CONTENT_SECURITY_POLICY = `${CONTENT_SECURITY_POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")}; font-src 'self' data:`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>jobwatch API reference</title><link rel="icon" href="data:,"></head>
<body><div id="reference"></div>
<script src="/docs/assets/${SCALAR_SCRIPT}"></script>
<script src="/docs/assets/${CONFIGURE_SCRIPT}"></script>
</body></html>`;

const CONFIGURE = `Scalar.createApiReference('#reference', ${JSON.stringify({
  url: '/openapi.json',
  withDefaultFonts: false, // its fonts come from Scalar's font host; system fonts instead
  telemetry: false,
  proxyUrl: '',
  // Scalar's hosted services (AI chat, MCP generation, sharing and deploying the document): none is reachable or wanted here
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
})});\n`;

interface Asset {
  body: Blob;
  gzip: Blob;
  cacheControl: string;
}

const gzip = promisify(gzipCallback);

/**
 * Read and compressed on first use (route tests never ask for it), off the event loop:
 * gzipping the 4 MB script synchronously stalled every other request 150-300 ms, the
 * thread-pool `zlib.gzip` at most ~18 ms.
 */
async function loadAssets(): Promise<Map<string, Asset>> {
  // the source map is not shipped: the comment would only make developer tools ask for it
  const scalar = (await Bun.file(join(SCALAR_DIST_DIR, 'browser', 'standalone.js')).text()).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  const asset = async (text: string, cacheControl: string): Promise<Asset> => {
    const bytes = new TextEncoder().encode(text);
    return { body: new Blob([bytes]), gzip: new Blob([await gzip(bytes)]), cacheControl };
  };
  return new Map([
    [SCALAR_SCRIPT, await asset(scalar, 'public, max-age=31536000, immutable')],
    [CONFIGURE_SCRIPT, await asset(CONFIGURE, 'no-cache')],
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
      const headers: Record<string, string> = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': asset.cacheControl, vary: 'accept-encoding' };
      if (useGzip) headers['content-encoding'] = 'gzip';
      return new Response(useGzip ? asset.gzip : asset.body, { headers });
    });
}
