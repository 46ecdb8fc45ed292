/**
 * The commands the Connections page shows for a new key are ones each agent really takes:
 * every flag is parsed by the agent's own settings code (the BullMQ agent's loadConfig, the
 * Celery agent's load_config, the Sidekiq collector's Collector.load), with the key and the
 * address the page names, and no connection id (the agent asks jobwatch which it is).
 */
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadConfig } from '../../agents/bullmq/src/config.js';
import { AGENTS, agentCommand, type JobSystem } from '../../ui/src/pages/connections/agent-commands.ts';

const REPO_ROOT = join(import.meta.dir, '..', '..');
const KEY = 'sk_0123456789abcdef0123456789abcdef';
const ORIGIN = 'https://jobs.example.com';

/** The program and its arguments, as a shell reads the multi-line command. */
function argvOf(system: JobSystem): { program: string; args: string[] } {
  const words = agentCommand(system, KEY, ORIGIN).replaceAll('\\\n', ' ').split(/\s+/).filter((word) => word !== '');
  const programWords = AGENTS[system].split(' \\')[0]!.split(' ').length;
  return { program: words.slice(0, programWords).join(' '), args: words.slice(programWords) };
}

function run(command: string[]): { code: number; out: string } {
  const done = Bun.spawnSync(command, { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return { code: done.exitCode, out: `${done.stdout.toString()}${done.stderr.toString()}`.trim() };
}

describe('agent commands on the Connections page', () => {
  test('one per job system, each naming its agent, the key and the address, and no connection id', () => {
    expect(Object.keys(AGENTS)).toEqual(['Celery', 'BullMQ', 'Sidekiq']);
    expect(argvOf('Celery').program).toBe('jobwatch-celery');
    expect(argvOf('BullMQ').program).toBe('node agents/bullmq/bin/jobwatch-bullmq.js');
    expect(argvOf('Sidekiq').program).toBe('ruby agents/sidekiq/bin/jobwatch-sidekiq');
    for (const system of Object.keys(AGENTS) as JobSystem[]) {
      const command = agentCommand(system, KEY, ORIGIN);
      expect(command).toContain(`--api-key ${KEY}`);
      expect(command).toContain(`--url ${ORIGIN}`);
      expect(command).not.toContain('--connection-id');
    }
  });

  test("the BullMQ agent's own settings accept its command", () => {
    const config = loadConfig(argvOf('BullMQ').args, {}) as { url: string; apiKey: string; redisUrl: string; connectionId: string | null };
    expect(config).toMatchObject({ url: ORIGIN, apiKey: KEY, redisUrl: 'redis://localhost:6379', connectionId: null });
  });

  test("the Celery agent's own settings accept its command", () => {
    const script = 'import sys; from jobwatch_celery.config import load_config; c = load_config(sys.argv[1:], {}); print(c.url, c.api_key, c.broker, c.connection_id)';
    const { code, out } = run(['/usr/bin/python3', '-c', `import sys; sys.path.insert(0, 'agents/celery/src'); ${script}`, ...argvOf('Celery').args]);
    expect({ code, out }).toEqual({ code: 0, out: `${ORIGIN} ${KEY} redis://localhost:6379/0 None` });
  });

  test("the Sidekiq collector's own settings accept its command", () => {
    const script = 'require "jobwatch/sidekiq/collector/config"; c = Jobwatch::Sidekiq::Collector.load(ARGV, {}); puts [c.url, c.api_key, c.redis_url, c.connection_id.inspect].join(" ")';
    const { code, out } = run(['ruby', '-Iagents/sidekiq/lib', '-e', script, '--', ...argvOf('Sidekiq').args]);
    expect({ code, out }).toEqual({ code: 0, out: `${ORIGIN} ${KEY} redis://localhost:6379/0 nil` });
  });
});
