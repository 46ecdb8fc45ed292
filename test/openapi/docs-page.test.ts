/**
 * GET /docs: the reference page, with its scripts from this service only (no CDN), a
 * CSP of its own, and the error docs still at /docs/errors where `docs_url` points.
 */
import { describe, expect, test } from 'bun:test';
import { gunzipSync } from 'bun';
import { testApp } from '../support/test-app.ts';

describe('GET /docs', () => {
  test('an HTML page whose only scripts are this service\'s files, under a CSP that allows no other origin and no inline script', async () => {
    const t = await testApp();
    const page = await t.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:|unsafe-eval|script-src[^;]*unsafe-inline/);
    const scripts = [...page.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.length).toBe(2);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/^ src="\/docs\/assets\/[\w.-]+\.js"$/);
      expect(body).toBe('');
    }
    expect(page.text).not.toMatch(/https?:\/\//);
  });

  test('its files are served: Swagger UI from the installed package (gzip when asked, cached for good), the configuration pointing at /openapi.json with no call out', async () => {
    const t = await testApp();
    const page = (await t.request('GET', '/docs')).text;
    const [rendererPath, configurePath] = [...page.matchAll(/src="([^"]+)"/g)].map((match) => match[1]!);
    const renderer = await t.app.handle(new Request(`http://localhost:3000${rendererPath}`, { headers: { 'accept-encoding': 'gzip' } }));
    expect(renderer.status).toBe(200);
    expect(renderer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(renderer.headers.get('content-encoding')).toBe('gzip');
    expect(renderer.headers.get('cache-control')).toContain('immutable');
    const script = new TextDecoder().decode(gunzipSync(new Uint8Array(await renderer.arrayBuffer())));
    expect(script).toContain('SwaggerUIBundle');
    expect(script.length).toBeGreaterThan(1_000_000);
    expect(script).not.toContain('sourceMappingURL');
    const plain = await t.app.handle(new Request(`http://localhost:3000${rendererPath}`));
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect((await plain.text()).length).toBe(script.length);

    const stylesheetPath = page.match(/<link rel="stylesheet" href="([^"]+)">/)![1]!;
    expect(stylesheetPath).toMatch(/^\/docs\/assets\/[\w.-]+\.css$/);
    const stylesheet = await t.request('GET', stylesheetPath);
    expect(stylesheet.status).toBe(200);
    expect(stylesheet.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(stylesheet.headers.get('cache-control')).toContain('immutable');
    expect(stylesheet.text).toContain('.swagger-ui');
    expect(stylesheet.text).not.toContain('sourceMappingURL');
    expect(stylesheet.text).not.toMatch(/url\(["']?https?:|@import/);

    const configure = await t.request('GET', configurePath!);
    expect(configure.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(configure.headers.get('cache-control')).toBe('no-cache');
    expect(configure.text).toContain('"url":"/openapi.json"');
    expect(configure.text).toContain('"validatorUrl":null');
  });

  test('an unknown asset is the JSON 404; the error docs stay at /docs/errors', async () => {
    const t = await testApp();
    const missing = await t.request('GET', '/docs/assets/nothing.js');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('NOT_FOUND');
    const errors = await t.request('GET', '/docs/errors');
    expect(errors.status).toBe(200);
    expect(errors.text).toContain('id="VALIDATION_ERROR"');
    const unauthorized = await t.request('GET', '/api/jobs');
    expect(unauthorized.json.error.docs_url).toBe('/docs/errors#UNAUTHORIZED');
  });
});
