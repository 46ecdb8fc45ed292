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

  test('its scripts are served: Scalar from the installed package (gzip when asked), the configuration pointing at /openapi.json with no call out', async () => {
    const t = await testApp();
    const page = (await t.request('GET', '/docs')).text;
    const [scalarPath, configurePath] = [...page.matchAll(/src="([^"]+)"/g)].map((match) => match[1]!);
    const scalar = await t.app.handle(new Request(`http://localhost:3000${scalarPath}`, { headers: { 'accept-encoding': 'gzip' } }));
    expect(scalar.status).toBe(200);
    expect(scalar.headers.get('content-encoding')).toBe('gzip');
    expect(scalar.headers.get('cache-control')).toContain('immutable');
    const script = new TextDecoder().decode(gunzipSync(new Uint8Array(await scalar.arrayBuffer())));
    expect(script).toContain('createApiReference');
    expect(script.length).toBeGreaterThan(1_000_000);
    expect(script).not.toContain('sourceMappingURL');
    const plain = await t.app.handle(new Request(`http://localhost:3000${scalarPath}`));
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect((await plain.text()).length).toBe(script.length);

    const configure = await t.request('GET', configurePath!);
    expect(configure.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(configure.text).toContain('"url":"/openapi.json"');
    expect(configure.text).toContain('"withDefaultFonts":false');
    expect(configure.text).toContain('"telemetry":false');
    expect(configure.text).toContain('"proxyUrl":""');
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
