/**
 * `npm run cli -- verify`: the real command line against a data directory, healthy and
 * damaged. It reads as a start would and changes nothing; exit 0 when a start recovers
 * everything, 1 when it would refuse, with a report an operator reads (or JSON).
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { segmentFileName } from '../../persistence/file-names.ts';
import { LOG_MAGIC, encodeFrame } from '../../persistence/frame.ts';
import { encodeValue } from '../../persistence/record-codec.ts';

const ROOT = join(import.meta.dir, '..', '..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jw-verify-'));
  dirs.push(dir);
  return dir;
}

async function cli(dir: string, ...args: string[]) {
  const child = Bun.spawn([process.execPath, 'src/cli/main.ts', ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dir }, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

/** A directory with one user and one connection (in a team of the user's own), made by the CLI itself: 4 records (user, team, membership, connection). */
async function populated(): Promise<string> {
  const dir = dataDir();
  expect((await cli(dir, 'user', 'create', '--email', 'ops@example.com', '--password', 'long enough pw', '--admin')).exitCode).toBe(0);
  expect((await cli(dir, 'connection', 'create', '--owner', 'ops@example.com', '--name', 'prod')).exitCode).toBe(0);
  return dir;
}

/** Every file of the directory with its bytes: what "nothing changed" compares. */
function contentsOf(dir: string): Record<string, string> {
  const log = join(dir, 'log');
  return Object.fromEntries(readdirSync(log).map((name) => [name, readFileSync(join(log, name)).toString('base64')]));
}

describe('verify', () => {
  test('a healthy directory: exit 0, what it holds, and nothing changed', async () => {
    const dir = await populated();
    const before = contentsOf(dir);
    const verified = await cli(dir, 'verify');
    expect(verified.exitCode).toBe(0);
    expect(verified.stdout).toContain(`data directory ${dir} (read only: nothing was changed)`);
    expect(verified.stdout).toContain('would recover from an empty state (seq 0) and 4 log records');
    expect(verified.stdout).toContain(`manifest: newest segment ${segmentFileName(1)}; marks: accounts`);
    expect(verified.stdout).toContain('lock: free: no service is running on it');
    expect(verified.stdout).toContain('holds: 1 user, 1 connection, 0 jobs, 0 alert rules; last seq 4');
    expect(verified.stdout.trim().split('\n').at(-1)).toBe('OK: a start recovers everything above');
    expect(contentsOf(dir)).toEqual(before);
  });

  test('a record a start would refuse: exit 1 naming the segment, the seq, the offset and what was expected; nothing changed', async () => {
    const dir = await populated();
    const segment = join(dir, 'log', segmentFileName(1));
    const offset = statSync(segment).size;
    appendFileSync(segment, encodeFrame(LOG_MAGIC, 5, encodeValue({ t: 'user.renamed' })));
    // and a torn tail after it, which a start would cut: verify only says so
    appendFileSync(segment, encodeFrame(LOG_MAGIC, 6, encodeValue({ t: 'log.keepalive', atMs: 1 })).subarray(0, 9));
    const before = contentsOf(dir);
    const verified = await cli(dir, 'verify');
    expect(verified.exitCode).toBe(1);
    expect(verified.stdout).toContain('DAMAGED: a start would refuse.');
    expect(verified.stdout).toContain(`log segment ${segment} record seq 5 (frame at offset ${offset}): expected a record type this version knows`);
    expect(verified.stdout).toContain(`found "user.renamed"`);
    expect(contentsOf(dir)).toEqual(before);
  });

  test('a deleted newest segment: exit 1 naming it', async () => {
    const dir = await populated();
    unlinkSync(join(dir, 'log', segmentFileName(1)));
    const verified = await cli(dir, 'verify', '--json');
    expect(verified.exitCode).toBe(1);
    const report = JSON.parse(verified.stdout);
    expect(report).toMatchObject({ ok: false, dataDir: dir, holds: null });
    expect(report.problem).toContain(`the newest log segment ${join(dir, 'log', segmentFileName(1))} is missing`);
  });

  test('--data-dir names another directory; one that does not exist is exit 1', async () => {
    const dir = await populated();
    const verified = await cli(join(dir, 'elsewhere'), 'verify', '--data-dir', dir, '--json');
    expect(verified.exitCode).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, holds: { users: 1, connections: 1, jobs: 0, lastSeq: 4 } });
    const missing = await cli(dir, 'verify', '--data-dir', join(dir, 'nowhere'));
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout).toContain(`there is no data directory at ${join(dir, 'nowhere')}`);
  });

  test('while the service runs it reads without the lock and says who holds it', async () => {
    const dir = await populated();
    const server = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }, stdout: 'pipe', stderr: 'pipe' });
    try {
      const reader = server.stdout.getReader();
      let log = '';
      while (!log.includes('listening on')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the server exited: ${log}`);
        log += new TextDecoder().decode(value);
      }
      const verified = await cli(dir, 'verify');
      expect(verified.exitCode).toBe(0);
      expect(verified.stdout).toContain(`lock: held by a running service (pid ${server.pid})`);
    } finally {
      server.kill();
      await server.exited;
    }
  }, 30_000);
});
