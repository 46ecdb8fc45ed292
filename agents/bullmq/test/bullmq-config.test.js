/** The agent's flags and environment: required settings, defaults, flags over the environment, bad values named. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFields } from './support/fields.js';
import { ConfigError, loadConfig } from '../src/config.js';

const REQUIRED = { REDIS_URL: 'redis://localhost:6379', JOBWATCH_URL: 'http://localhost:3000/', JOBWATCH_API_KEY: 'sk_test' };

describe('config', () => {
  test('the environment alone is enough; defaults fill the rest', () => {
    const config = loadConfig([], REQUIRED);
    assertFields(config, { redisUrl: 'redis://localhost:6379', url: 'http://localhost:3000', apiKey: 'sk_test', prefix: 'bull', queues: [], batchSize: 1000, spoolDir: './jobwatch-spool' });
    assert.equal(config.flushIntervalMs, 250);
    assert.equal(config.workerIntervalMs, 2000);
    assert.deepEqual(config.redactKeys, ['password', 'passwd', 'secret', 'token', 'api_key', 'apikey', 'authorization', 'cookie', 'credit_card', 'card_number', 'ssn']);
    assert.deepEqual(config.omitArgs, []);
  });

  test('--redact-keys replaces the key patterns (none for none); --omit-args adds up, repeated or comma-separated, or comes from JOBWATCH_OMIT_ARGS', () => {
    assert.deepEqual(loadConfig(['--redact-keys', 'pin, iban'], REQUIRED).redactKeys, ['pin', 'iban']);
    assert.deepEqual(loadConfig([], { ...REQUIRED, JOBWATCH_REDACT_KEYS: 'NONE' }).redactKeys, []);
    assertFields(loadConfig(['--omit-args', 'charge-card', 'login', '--omit-args=billing.*,refund', '--prefix', 'p'], REQUIRED), { omitArgs: ['charge-card', 'login', 'billing.*', 'refund'], prefix: 'p' });
    assert.deepEqual(loadConfig([], { ...REQUIRED, JOBWATCH_OMIT_ARGS: 'a,b' }).omitArgs, ['a', 'b']);
  });

  test('flags win over the environment, in both --flag value and --flag=value forms', () => {
    const config = loadConfig(['--prefix', 'app', '--queues=a, b', '--redis', 'redis://other:1'], { ...REQUIRED, JOBWATCH_PREFIX: 'env' });
    assertFields(config, { prefix: 'app', queues: ['a', 'b'], redisUrl: 'redis://other:1' });
  });

  test('a missing or malformed setting is an error naming it', () => {
    const failure = (argv, env) => {
      try {
        loadConfig(argv, env);
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      throw new Error('no error');
    };
    assert.ok(failure([], { ...REQUIRED, REDIS_URL: '' }).includes('--redis (or REDIS_URL) is required'));
    assert.ok(failure([], { ...REQUIRED, JOBWATCH_API_KEY: 'nope' }).includes('starts with sk_'));
    assert.ok(failure([], { ...REQUIRED, JOBWATCH_URL: 'ftp://x' }).includes('--url'));
    assert.ok(failure(['--batch-size', '1001'], REQUIRED).includes('--batch-size: 1001 is outside 1..1000'));
    assert.ok(failure(['--worker-interval', '6'], REQUIRED).includes('--worker-interval'));
    assert.ok(failure(['--queues', 'a:b'], REQUIRED).includes("cannot contain ':'"));
    assert.ok(failure(['--nope'], REQUIRED).includes('unknown argument'));
    assert.ok(failure(['--prefix'], REQUIRED).includes('--prefix needs a value'));
    assert.ok(failure(['--redact-keys', 'pass word'], REQUIRED).includes('--redact-keys: "pass word" is not a key pattern'));
    assert.ok(failure(['--redact-keys', ','], REQUIRED).includes('--redact-keys: name 1 to 100 key patterns'));
    assert.ok(failure(['--omit-args', 'x'.repeat(1025)], REQUIRED).includes('--omit-args: "xxxx'));
  });
});
