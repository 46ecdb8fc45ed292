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
  test('creates a user, a team with the user as its admin, and a connection of the team (key printed once), lists and deletes it; changes survive in the log', async () => {
    const dir = dataDir();
    expect((await cli(dir, 'user', 'create', '--email', 'ops@example.com', '--password', 'long enough pw')).exitCode).toBe(0);
    const team = JSON.parse((await cli(dir, 'team', 'create', '--name', 'platform', '--json')).stdout).team;
    expect(team).toMatchObject({ name: 'platform', members: 0, connections: 0 });
    expect((await cli(dir, 'team', 'add-member', '--team', 'platform', '--email', 'ops@example.com', '--role', 'admin')).stdout).toContain('ops@example.com is admin of team platform');
    const created = await cli(dir, 'connection', 'create', '--owner', 'ops@example.com', '--name', 'prod', '--json');
    expect(created.exitCode).toBe(0);
    const { connection, apiKey } = JSON.parse(created.stdout);
    expect(apiKey).toMatch(/^sk_/);
    expect(connection.teamId).toBe(team.id);
    const listed = JSON.parse((await cli(dir, 'connection', 'list', '--json')).stdout);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ id: connection.id, name: 'prod', team: 'platform' });
    expect(JSON.stringify(listed)).not.toContain(apiKey);
    const duplicate = await cli(dir, 'connection', 'create', '--team', 'platform', '--name', 'prod');
    expect(duplicate.exitCode).toBe(1);
    expect(duplicate.stderr).toContain("a connection named 'prod' already exists in team 'platform'");
    expect(JSON.parse((await cli(dir, 'team', 'list', '--json')).stdout).data).toMatchObject([{ name: 'platform', members: 1, connections: 1 }]);
    expect((await cli(dir, 'connection', 'delete', '--id', connection.id)).exitCode).toBe(0);
    expect(JSON.parse((await cli(dir, 'connection', 'list', '--json')).stdout).data).toEqual([]);
  }, 60_000);

  test('invites a user into a team (printing the link), lists, disables, enables, resets and sets passwords, and removes users', async () => {
    const dir = dataDir();
    expect((await cli(dir, 'user', 'create', '--email', 'root@example.com', '--password', 'long enough pw', '--admin')).exitCode).toBe(0);
    expect((await cli(dir, 'team', 'create', '--name', 'platform')).exitCode).toBe(0);
    const invited = await cli(dir, 'user', 'invite', '--email', 'new@example.com', '--team', 'platform', '--role', 'operator');
    expect(invited.stdout).toMatch(/^invited new@example\.com; the link that sets their password \(single use, until .+\):\nhttp:\/\/localhost:3000\/set-password#token=[A-Za-z0-9_-]{43}$/m);
    const listed = JSON.parse((await cli(dir, 'user', 'list', '--json')).stdout).data;
    expect(listed.map((user: { email: string; status: string; teams: unknown[] }) => [user.email, user.status, user.teams])).toEqual([
      ['root@example.com', 'active', []],
      ['new@example.com', 'invited', [{ id: expect.any(String), name: 'platform', role: 'operator' }]],
    ]);
    expect((await cli(dir, 'user', 'disable', '--email', 'new@example.com')).stdout).toBe('new@example.com is disabled\n');
    expect((await cli(dir, 'user', 'enable', '--email', 'new@example.com')).stdout).toBe('new@example.com is invited\n');
    expect((await cli(dir, 'user', 'reset-password', '--email', 'new@example.com')).stdout).toContain('/set-password#token=');
    expect((await cli(dir, 'user', 'set-password', '--email', 'new@example.com', '--password', 'a password of mine')).stdout).toBe('set the password of new@example.com; their sessions ended\n');
    expect((await cli(dir, 'user', 'remove', '--email', 'new@example.com')).exitCode).toBe(0);
    expect(JSON.parse((await cli(dir, 'user', 'list', '--json')).stdout).data).toHaveLength(1);
  }, 120_000);

  test('missing flags and unknown commands print the usage and fail', async () => {
    const dir = dataDir();
    const missing = await cli(dir, 'connection', 'create', '--name', 'x');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('--team is required');
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
