/**
 * The README's quick-start commands, run as a newcomer would copy them (with the port,
 * key and connection id filled in): the ingest example must be accepted with the answer
 * the README shows, and its event must be stamped with the current time, so retention
 * (which removes jobs whose last change is older than RETENTION_HOURS) does not delete it
 * a day after the README was written. And SESSION_SECRET's documented minimum (docs/configuration.md).
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  REPO_ROOT,
  TEST_TIMEOUT_MS,
  cleanUpServices,
  createConnection,
  login,
  makeDataDir,
  spawnService,
  startService,
} from './service-process.ts';

const dirs = cleanUpServices();

/** The Quick start section's shell commands, one string per command (continuation lines joined). */
function quickStartCommands(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## Quick start');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const commands: string[] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let current: string | undefined;
    for (const line of block[1]!.split('\n')) {
      if (line.startsWith('curl ')) current = line;
      else if (current !== undefined && !line.startsWith('#') && line.trim() !== '') current += '\n' + line;
      else if (current !== undefined) {
        commands.push(current);
        current = undefined;
      }
    }
    if (current !== undefined) commands.push(current);
  }
  return commands;
}

/** The documented answer printed under a command (`# -> ...`, continued on `#` lines). */
function documentedAnswer(command: string): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf(command) + command.length);
  const lines = after.split('\n').slice(1);
  const answer: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('#')) break;
    answer.push(line.replace(/^# (->)?\s*/, ''));
  }
  return answer.join('');
}

async function runInShell(command: string): Promise<string> {
  const proc = Bun.spawn(['bash', '-c', command], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`\`${command}\` exited ${code}: ${err}`);
  return out;
}

describe('the README quick start, copied', () => {
  test('the ingest example is accepted as shown, and its event is stamped now, so retention keeps it', async () => {
    const dataDir = makeDataDir('readme-example');
    dirs.push(dataDir);
    const service = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
    const cookie = await login(service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
    const connection = await createConnection(service.baseUrl, cookie, 'production');
    const fillIn = (command: string) =>
      command
        .replaceAll('localhost:3000', `127.0.0.1:${service.port}`)
        .replaceAll('sk_...', connection.apiKey)
        .replaceAll('<connection id>', connection.id)
        .replaceAll('-b jar', `-H '${'cookie: ' + cookie}'`);

    const commands = quickStartCommands();
    const ingestCommand = commands.find((command) => command.includes('/api/ingest'));
    const listCommand = commands.find((command) => command.includes('/api/jobs'));
    expect(ingestCommand).toBeDefined();
    expect(listCommand).toBeDefined();

    const before = Date.now();
    const ingested = JSON.parse(await runInShell(fillIn(ingestCommand!)));
    const documented = documentedAnswer(ingestCommand!);
    expect(documented).toContain('"accepted":1');
    expect(ingested).toMatchObject({ accepted: 1, rejected: 0, skipped: 0, truncated: 0, usage: { used: 1, limit: 10_000, remaining: 9_999 } });

    const listed = JSON.parse(await runInShell(fillIn(listCommand!)));
    expect(documentedAnswer(listCommand!)).toContain('"externalId":"a1b2"');
    expect(listed.pagination.total).toBe(1);
    const [job] = listed.data;
    expect(job).toMatchObject({ externalId: 'a1b2', name: 'tasks.send_email', state: 'queued', queue: 'default' });
    // `date -u` has whole seconds; a fixed date in the README would be days off
    expect(Date.parse(job.createdAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(job.createdAt)).toBeLessThanOrEqual(Date.now());
    expect(await service.stop()).toBe(0);
  }, TEST_TIMEOUT_MS);

  test('SESSION_SECRET shorter than 16 characters stops start-up with the documented message and exit code 2', async () => {
    const dataDir = makeDataDir('short-secret');
    dirs.push(dataDir);
    const configuration = readFileSync(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
    const row = configuration.split('\n').find((line) => line.startsWith('| `SESSION_SECRET` |'))!;
    const message = row.match(/`(configuration error: [^`]+)`, exit code (\d+)/);
    expect(message).not.toBeNull();

    const short = spawnService({ dataDir, env: { SESSION_SECRET: 'x'.repeat(15) } });
    expect(await short.waitForExit()).toBe(Number(message![2]));
    expect(short.output).toContain(message![1]!);

    const enough = await startService({ dataDir, env: { SESSION_SECRET: 'x'.repeat(16), ADMIN_EMAIL, ADMIN_PASSWORD } });
    expect(await enough.stop()).toBe(0);
  }, TEST_TIMEOUT_MS);
});
