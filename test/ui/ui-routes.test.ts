/** Serving the dashboard: the shell at every page address, hashed assets, headers, and no shadowed service paths. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UI_DIST_DIR, UI_PAGE_PATHS } from '../../src/routes/ui.ts';
import { ensureUiBuilt } from '../../src/ui-build.ts';
import { testApp, type TestApp } from '../support/test-app.ts';
import type { UiManifest } from '../../ui/build.ts';

let t: TestApp;
let manifest: UiManifest;

beforeAll(async () => {
  await ensureUiBuilt(() => undefined);
  manifest = JSON.parse(readFileSync(join(UI_DIST_DIR, 'manifest.json'), 'utf8')) as UiManifest;
  t = await testApp();
});

describe('dashboard pages', () => {
  test('every page address answers the same shell, revalidated, with a strict CSP and no inline script', async () => {
    const addresses = UI_PAGE_PATHS.map((path) => path.replace(':id', '0192f1e4-0000-7000-8000-000000000000'));
    for (const address of [...addresses, '/jobs?state=failed&search=email']) {
      const page = await t.request('GET', address);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.text).toContain(`<script type="module" src="/assets/${manifest.script}">`);
      expect(page.text).not.toMatch(/<script>|<script type="module">|<style>/);
    }
  });

  test('hashed assets are immutable for a year, and gzip goes to clients that accept it', async () => {
    const plain = await t.request('GET', `/assets/${manifest.script}`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toContain('text/javascript');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(new TextEncoder().encode(plain.text).byteLength).toBe(manifest.assets.find((asset) => asset.name === manifest.script)!.bytes);

    const zipped = await t.app.handle(new Request(`http://localhost/assets/${manifest.stylesheet}`, { headers: { 'accept-encoding': 'gzip, br' } }));
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('content-type')).toContain('text/css');
  });

  test('service paths are not shadowed: unknown /api and asset paths get the JSON 404 envelope', async () => {
    for (const path of ['/api/nope', '/api/jobs/x/y/z', '/assets/main-00000000.js', '/assets/manifest.json', '/jobs/a/b', '/index.html']) {
      const reply = await t.request('GET', path);
      expect(reply.status).toBe(404);
      expect(reply.json.error.code).toBe('NOT_FOUND');
    }
    expect((await t.request('GET', '/api/health')).json.status).toBe('ok');
    expect((await t.request('GET', '/docs/errors')).text).toContain('Error codes');
    expect((await t.request('GET', '/api/jobs')).status).toBe(401);
  });
});

describe('dashboard build', () => {
  test('the bundle is under its 50 KB gzip budget and every listed file exists', () => {
    const gzip = manifest.assets.reduce((sum, asset) => sum + asset.gzipBytes, 0);
    expect(gzip).toBeLessThan(50 * 1024);
    for (const asset of manifest.assets) {
      expect(asset.name).toMatch(/-[a-z0-9]{8}\.(js|css)$/);
      expect(readFileSync(join(UI_DIST_DIR, asset.name)).byteLength).toBe(asset.bytes);
    }
  });
});
