/**
 * The dashboard: the HTML shell at `/` and at every client-side address (so a bookmark or
 * a reload works), and the built, content-hashed assets under `/assets/`. Explicit routes
 * only: nothing here can shadow `/api/*`, `/docs/*` or any other service path, and an
 * unknown path still gets the JSON 404 envelope.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';

export const UI_DIST_DIR = join(import.meta.dir, '..', '..', 'ui', 'dist');

/** Client-side routes of the dashboard (ui/src/router.ts); each serves the same shell. */
export const UI_PAGE_PATHS = [
  '/',
  '/signin',
  '/set-password',
  '/no-access',
  '/jobs',
  '/jobs/:id',
  '/connections',
  '/queues',
  '/queues/:id',
  '/workers',
  '/task-metrics',
  '/alerts',
  '/users',
  '/teams',
  '/teams/:id',
  '/audit',
  '/account',
] as const;

/** Every page load revalidates the shell; hashed assets never change under their name. */
const SHELL_CACHE = 'no-cache';
const ASSET_CACHE = 'public, max-age=31536000, immutable';

/** The bundle has no inline script or style; `style-src` stays strict too (styles are set through the CSSOM). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  png: 'image/png',
  svg: 'image/svg+xml',
  woff2: 'font/woff2',
};

interface Asset {
  body: Blob;
  gzip: Blob | null;
  contentType: string;
}

interface LoadedUi {
  shell: string;
  assets: Map<string, Asset>;
}

/** Reads the build once, on the first dashboard request (route tests never pay for it). */
function loadUi(distDir: string): LoadedUi | null {
  const shellPath = join(distDir, 'index.html');
  const manifestPath = join(distDir, 'manifest.json');
  if (!existsSync(shellPath) || !existsSync(manifestPath)) return null;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { assets: Array<{ name: string }> };
  const assets = new Map<string, Asset>();
  for (const { name } of manifest.assets) {
    const gzipPath = join(distDir, `${name}.gz`);
    assets.set(name, {
      body: new Blob([readFileSync(join(distDir, name))]),
      gzip: existsSync(gzipPath) ? new Blob([readFileSync(gzipPath)]) : null,
      contentType: CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
    });
  }
  return { shell: readFileSync(shellPath, 'utf8'), assets };
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>jobwatch</title>
<p>The dashboard is not built. Run <code>bun ui/build.ts</code> (done by <code>npm start</code> and <code>npm test</code>) and reload.</p>`;

export function uiRoutes(distDir: string = UI_DIST_DIR) {
  let loaded: LoadedUi | null = null;
  const ui = (): LoadedUi | null => (loaded ??= loadUi(distDir));

  const shell = () => {
    const current = ui();
    return new Response(current?.shell ?? NOT_BUILT, {
      status: current === null ? 503 : 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': SHELL_CACHE, ...SECURITY_HEADERS },
    });
  };

  const app = new Elysia({ name: 'ui' });
  // registering mutates the instance; the page routes need no place in its type
  for (const path of UI_PAGE_PATHS) app.get(path, shell);
  return app.get('/assets/:name', ({ params, request }) => {
    const asset = ui()?.assets.get(params.name);
    if (asset === undefined) throw new DomainError('NOT_FOUND', 'asset not found');
    const useGzip = asset.gzip !== null && /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
    const headers: Record<string, string> = {
      'content-type': asset.contentType,
      'cache-control': ASSET_CACHE,
      'x-content-type-options': 'nosniff',
      vary: 'accept-encoding',
    };
    if (useGzip) headers['content-encoding'] = 'gzip';
    return new Response(useGzip ? asset.gzip : asset.body, { headers });
  });
}
