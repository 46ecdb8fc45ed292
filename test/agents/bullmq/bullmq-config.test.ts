/** The agent's flags and environment: required settings, defaults, flags over the environment, bad values named. */
import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../../../agents/bullmq/src/config.js';

const REQUIRED = { REDIS_URL: 'redis://localhost:6379', JOBWATCH_URL: 'http://localhost:3000/', JOBWATCH_API_KEY: 'sk_test' };

describe('config', () => {
  test('the environment alone is enough; defaults fill the rest', () => {
    const config: any = loadConfig([], REQUIRED);
    expect(config).toMatchObject({ redisUrl: 'redis://localhost:6379', url: 'http://localhost:3000', apiKey: 'sk_test', prefix: 'bull', queues: [], batchSize: 1000, spoolDir: './jobwatch-spool' });
    expect(config.flushIntervalMs).toBe(250);
    expect(config.workerIntervalMs).toBe(2000);
    expect(config.redactKeys).toEqual(['password', 'passwd', 'secret', 'token', 'api_key', 'apikey', 'authorization', 'cookie', 'credit_card', 'card_number', 'ssn']);
    expect(config.omitArgs).toEqual([]);
  });

  test('--redact-keys replaces the key patterns (none for none); --omit-args adds up, repeated or comma-separated, or comes from JOBWATCH_OMIT_ARGS', () => {
    expect((loadConfig(['--redact-keys', 'pin, iban'], REQUIRED) as any).redactKeys).toEqual(['pin', 'iban']);
    expect((loadConfig([], { ...REQUIRED, JOBWATCH_REDACT_KEYS: 'NONE' }) as any).redactKeys).toEqual([]);
    expect((loadConfig(['--omit-args', 'charge-card', 'login', '--omit-args=billing.*,refund', '--prefix', 'p'], REQUIRED) as any)).toMatchObject({ omitArgs: ['charge-card', 'login', 'billing.*', 'refund'], prefix: 'p' });
    expect((loadConfig([], { ...REQUIRED, JOBWATCH_OMIT_ARGS: 'a,b' }) as any).omitArgs).toEqual(['a', 'b']);
  });

  test('flags win over the environment, in both --flag value and --flag=value forms', () => {
    const config: any = loadConfig(['--prefix', 'app', '--queues=a, b', '--redis', 'redis://other:1'], { ...REQUIRED, JOBWATCH_PREFIX: 'env' });
    expect(config).toMatchObject({ prefix: 'app', queues: ['a', 'b'], redisUrl: 'redis://other:1' });
  });

  test('a missing or malformed setting is an error naming it', () => {
    const failure = (argv: string[], env: Record<string, string>) => {
      try {
        loadConfig(argv, env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('no error');
    };
    expect(failure([], { ...REQUIRED, REDIS_URL: '' })).toContain('--redis (or REDIS_URL) is required');
    expect(failure([], { ...REQUIRED, JOBWATCH_API_KEY: 'nope' })).toContain('starts with sk_');
    expect(failure([], { ...REQUIRED, JOBWATCH_URL: 'ftp://x' })).toContain('--url');
    expect(failure(['--batch-size', '1001'], REQUIRED)).toContain('--batch-size: 1001 is outside 1..1000');
    expect(failure(['--worker-interval', '6'], REQUIRED)).toContain('--worker-interval');
    expect(failure(['--queues', 'a:b'], REQUIRED)).toContain("cannot contain ':'");
    expect(failure(['--nope'], REQUIRED)).toContain('unknown argument');
    expect(failure(['--prefix'], REQUIRED)).toContain('--prefix needs a value');
    expect(failure(['--redact-keys', 'pass word'], REQUIRED)).toContain('--redact-keys: "pass word" is not a key pattern');
    expect(failure(['--redact-keys', ','], REQUIRED)).toContain('--redact-keys: name 1 to 100 key patterns');
    expect(failure(['--omit-args', 'x'.repeat(1025)], REQUIRED)).toContain("--omit-args: \"xxxx");
  });
});
