/**
 * The ceiling: a minimal Bun.serve that only JSON.parses ingest bodies and answers any GET
 * with a small JSON. Run as its own process so that it is measured exactly like the
 * service (same autocannon settings, same machine, same run).
 *
 *   npx bun load/baseline.ts [--port 0]      # prints `listening on http://127.0.0.1:PORT`
 *
 * POST (any path): JSON.parse of the body, answers {"accepted": <events.length>, ...}
 * GET  (any path): {"status":"ok","timestamp":"..."}
 */
import type { Subprocess } from 'bun';
import { trackChild, REPO_ROOT } from './service.ts';
import { num, parseArgs } from './util.ts';

export interface Baseline {
  baseUrl: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startBaseline(): Promise<Baseline> {
  const child: Subprocess<'ignore', 'pipe', 'inherit'> = Bun.spawn([process.execPath, 'load/baseline.ts', '--port', '0'], {
    cwd: REPO_ROOT,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  trackChild(child);
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 15_000;
  while (!/listening on (\S+)/.test(text)) {
    if (Date.now() > deadline) throw new Error(`baseline did not start: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`baseline exited: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  const baseUrl = /listening on (\S+)/.exec(text)![1]!;
  return {
    baseUrl,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM');
      await child.exited;
    },
  };
}

if (import.meta.main) {
  const args = parseArgs();
  const server = Bun.serve({
    port: num(args, 'port', 0),
    hostname: '127.0.0.1',
    maxRequestBodySize: 8 * 1024 * 1024,
    async fetch(request) {
      if (request.method === 'POST') {
        const body = JSON.parse(await request.text()) as { events?: unknown[] };
        const accepted = Array.isArray(body.events) ? body.events.length : 0;
        return Response.json({ accepted, rejected: 0, skipped: 0, truncated: 0 });
      }
      return Response.json({ status: 'ok', timestamp: new Date().toISOString() });
    },
  });
  console.log(`listening on http://127.0.0.1:${server.port}`);
  process.on('SIGTERM', () => {
    server.stop(true);
    process.exit(0);
  });
}
