/**
 * The HTTP edge of the real process, over raw sockets: requests `fetch` will not send
 * (malformed Host, trickled bodies) get our envelope, and cost no memory before the
 * client is authenticated.
 */
import { describe, expect, test } from 'bun:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, REPO_ROOT, TEST_TIMEOUT_MS, cleanUpServices, makeDataDir, startService } from './service-process.ts';
import { bodyOf, rawExchange, statusOf } from './raw-socket.ts';

const dirs = cleanUpServices();

async function service(env: Record<string, string> = {}) {
  const dataDir = makeDataDir('edge');
  dirs.push(dataDir);
  return startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, ...env } });
}

describe('a malformed Host header', () => {
  test('gets our 400 envelope, no development error page, no file paths, even with NODE_ENV=development', async () => {
    const svc = await service({ NODE_ENV: 'development' });
    for (const path of ['/nope', '/api/jobs', '/api/health', '/api/auth/login']) {
      const answer = await rawExchange(svc.port, `GET ${path} HTTP/1.1\r\nHost: [\r\nConnection: close\r\n\r\n`);
      expect(statusOf(answer)).toBe(400);
      expect(JSON.parse(bodyOf(answer)).error).toMatchObject({ code: 'VALIDATION_ERROR', docs_url: '/docs/errors#VALIDATION_ERROR' });
      expect(answer).not.toContain(REPO_ROOT);
      expect(answer.toLowerCase()).not.toContain('<!doctype');
    }
    expect(svc.output).not.toContain('Invalid URL');
  }, TEST_TIMEOUT_MS);
});
