/**
 * One API key cannot hold the machine's memory with slow bodies: 150 sockets of one
 * connection each send most of a 5 MB ingest body and then stall (within the body
 * deadline). Without a cap on what a connection has in flight the service buffered all of
 * them (RSS from about 100 to over 800 MB); with it, the requests past the cap are answered
 * 429 with Retry-After at once and their bodies are never read, so the service's resident
 * memory (VmRSS from /proc) grows by about the cap (64 MB by default), not by the flood.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { holdSocket, statusOf } from './raw-socket.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, cleanUpServices, createConnection, login, makeDataDir, startService, TEST_TIMEOUT_MS } from './service-process.ts';

const dirs = cleanUpServices();
const SOCKETS = 150;
const DECLARED_BYTES = 5 * 1024 * 1024;
/** What each socket sends before it stalls: most of its body, in events the structure check lets through. */
const SENT_BYTES = 4 * 1024 * 1024;
const MB = 1024 * 1024;

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

/** `{"events":[` and then events of about 500 bytes, up to `bytes` (never the end of the body). */
function stalledBody(bytes: number): Buffer {
  const event = `{"type":"job_state_change","job":{"externalId":"slow","note":"${'x'.repeat(420)}"}},`;
  const text = `{"events":[${event.repeat(Math.ceil(bytes / event.length))}`;
  return Buffer.from(text.slice(0, bytes - 1) + ' ');
}

describe('150 slow bodies of one API key', () => {
  test(
    'leave resident memory bounded by the in-flight cap; the requests past it are answered 429 with Retry-After, unread',
    async () => {
      const dataDir = makeDataDir('slow-bodies');
      dirs.push(dataDir);
      const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD, BODY_TIMEOUT_SECONDS: '120' } });
      const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
      const connection = await createConnection(service.baseUrl, cookie, 'slow');
      await Bun.sleep(500);
      const before = rssBytes(service.pid);

      const head =
        `POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1:${service.port}\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${connection.apiKey}\r\nContent-Length: ${DECLARED_BYTES}\r\n\r\n`;
      const body = stalledBody(SENT_BYTES);
      const held = await Promise.all(Array.from({ length: SOCKETS }, () => holdSocket(service.port, head)));
      const sockets: Socket[] = held.map((each) => each.socket);
      for (const socket of sockets) {
        socket.on('error', () => undefined); // a refused request's socket is closed by the server mid-write
        socket.write(body);
      }
      // let the service read what it will, and take the highest RSS while it does
      let peak = 0;
      for (let i = 0; i < 60; i++) {
        await Bun.sleep(100);
        peak = Math.max(peak, rssBytes(service.pid));
      }
      const refused = held.filter((each) => statusOf(each.answer()) === 429);
      const growth = peak - before;
      console.log(`RSS before ${(before / MB).toFixed(0)} MB, peak with ${SOCKETS} stalled bodies ${(peak / MB).toFixed(0)} MB; ${refused.length} answered 429`);

      // the admitted bodies (12 of 5 MiB within 64 MB) and their reading; uncapped, the flood's 600 MB
      // arrive at 40-60 MB/s on a busy 2-core machine (over 300 MB within these 6 s)
      expect(growth).toBeLessThan(200 * MB);
      expect(refused.length).toBeGreaterThanOrEqual(SOCKETS - 32);
      expect(refused[0]!.answer()).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(refused[0]!.answer()).toContain('"code":"RATE_LIMITED"');
      expect((await fetch(`${service.baseUrl}/api/health`)).status).toBe(200);
      for (const socket of sockets) socket.destroy();
    },
    TEST_TIMEOUT_MS * 2,
  );
});
