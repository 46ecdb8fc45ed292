import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jw-cli-'));
  dirs.push(dir);
  return dir;
}

async function cli(dir: string, ...args: string[]) {
  const child = Bun.spawn([process.execPath, 'src/cli/main.ts', ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dir }, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

describe('the CLI', () => {
  test('creates a user and a connection (key printed once), lists and deletes it; changes survive in the log', async () => {
    const dir = dataDir();
    expect((await cli(dir, 'user', 'create', '--email', 'ops@example.com', '--password', 'long enough pw')).exitCode).toBe(0);
    const created = await cli(dir, 'connection', 'create', '--owner', 'ops@example.com', '--name', 'prod', '--json');
    expect(created.exitCode).toBe(0);
    const { connection, apiKey } = JSON.parse(created.stdout);
    expect(apiKey).toMatch(/^sk_/);
    const listed = JSON.parse((await cli(dir, 'connection', 'list', '--json')).stdout);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ id: connection.id, name: 'prod', owner: 'ops@example.com' });
    expect(JSON.stringify(listed)).not.toContain(apiKey);
    const duplicate = await cli(dir, 'connection', 'create', '--owner', 'ops@example.com', '--name', 'prod');
    expect(duplicate.exitCode).toBe(1);
    expect(duplicate.stderr).toContain("a connection named 'prod' already exists");
    expect((await cli(dir, 'connection', 'delete', '--owner', 'ops@example.com', '--id', connection.id)).exitCode).toBe(0);
    expect(JSON.parse((await cli(dir, 'connection', 'list', '--json')).stdout).data).toEqual([]);
  });

  test('missing flags and unknown commands print the usage and fail', async () => {
    const dir = dataDir();
    const missing = await cli(dir, 'connection', 'create', '--name', 'x');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('--owner is required');
    const unknown = await cli(dir, 'frobnicate');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('usage: bun run cli');
  });

  test('refuses while a server owns the data directory, naming its pid', async () => {
    const dir = dataDir();
    const server = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }, stdout: 'pipe', stderr: 'pipe' });
    try {
      const reader = server.stdout.getReader();
      let log = '';
      while (!log.includes('listening on')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`server exited: ${log}`);
        log += new TextDecoder().decode(value);
      }
      const refused = await cli(dir, 'connection', 'list');
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain(`in use by another process (pid ${server.pid})`);
    } finally {
      server.kill('SIGTERM');
      await server.exited;
    }
  });
});
