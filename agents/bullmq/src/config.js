// Settings from flags and the environment; a bad value stops start-up with a message
// naming the setting, before anything connects.
import { INGEST_EVENTS_MAX } from './limits.js';
import { DEFAULT_REDACT_KEYS } from './redaction.js';

export class ConfigError extends Error {}

/** [flag, environment variable, default, help] @type {Array<[string, string, string | null, string]>} */
export const SETTINGS = [
  ['--redis', 'REDIS_URL', null, 'Redis URL of the BullMQ app, e.g. redis://localhost:6379 (rediss:// for TLS; required)'],
  ['--url', 'JOBWATCH_URL', null, 'jobwatch base URL, e.g. http://localhost:3000 (required)'],
  ['--api-key', 'JOBWATCH_API_KEY', null, "the connection's API key, sk_... (required)"],
  ['--connection-id', 'JOBWATCH_CONNECTION_ID', null, "the connection's id; by default asked from jobwatch with the API key"],
  ['--prefix', 'JOBWATCH_PREFIX', 'bull', "BullMQ's key prefix (the `prefix` option of the app's queues)"],
  ['--queues', 'JOBWATCH_QUEUES', null, 'comma-separated queue names to watch; by default every queue under the prefix'],
  ['--spool-dir', 'JOBWATCH_SPOOL_DIR', './jobwatch-spool', 'directory for the stream checkpoints and the events kept while jobwatch is unreachable'],
  ['--spool-max-mb', 'JOBWATCH_SPOOL_MAX_MB', '256', 'spool bound in MB; past it the oldest events are dropped and logged'],
  ['--batch-size', 'JOBWATCH_BATCH_SIZE', '1000', 'events per ingest request, 1..1000'],
  ['--flush-interval', 'JOBWATCH_FLUSH_INTERVAL', '0.25', 'seconds between flushes, 0.01..5'],
  ['--discover-interval', 'JOBWATCH_DISCOVER_INTERVAL', '10', 'seconds between scans for new queues, 1..3600'],
  ['--queue-interval', 'JOBWATCH_QUEUE_INTERVAL', '2', 'seconds between queue depth snapshots, 0.5..3600'],
  ['--worker-interval', 'JOBWATCH_WORKER_INTERVAL', '2', 'seconds between worker heartbeats from CLIENT LIST, 0.5..5'],
  ['--command-interval', 'JOBWATCH_COMMAND_INTERVAL', '1', 'seconds between polls for revoke/retry commands, 0.2..3600'],
  ['--reconcile-max', 'JOBWATCH_RECONCILE_MAX', '1000', 'jobs read per state set when reconciling a queue (first start or a trimmed stream), 0..100000'],
  ['--redact-keys', 'JOBWATCH_REDACT_KEYS', DEFAULT_REDACT_KEYS.join(','), "comma-separated key patterns whose values are masked in a job's data, return value and progress before they leave (none for none); replaces the default list"],
  ['--omit-args', 'JOBWATCH_OMIT_ARGS', null, 'job names whose data is never sent (several after the flag, the flag repeated, or comma-separated); * matches any characters (billing.*)'],
  ['--log-level', 'JOBWATCH_LOG_LEVEL', 'INFO', 'DEBUG, INFO, WARNING or ERROR'],
];
/** Flags that take one or more values, and may be given more than once: their values add up. */
const REPEATABLE = new Set(['--omit-args']);

export function usage() {
  const lines = [
    'usage: jobwatch-bullmq --redis URL --url URL --api-key KEY [options]',
    '',
    "Streams every BullMQ queue's jobs, workers and depths from Redis to jobwatch, and",
    'carries revoke and retry commands back. Every flag can also be set by its environment variable.',
    '',
  ];
  for (const [flag, env, fallback, help] of SETTINGS) {
    lines.push(`  ${flag.padEnd(20)} ${help}${fallback !== null ? ` (default ${fallback})` : ''}; env ${env}`);
  }
  lines.push(`  ${'--help'.padEnd(20)} this text`);
  return lines.join('\n');
}

/**
 * @param {string[]} argv arguments after the program name
 * @param {Record<string, string | undefined>} env
 */
export function loadConfig(argv, env) {
  /** @type {Record<string, string>} */
  const given = {};
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--help' || arg === '-h') return { help: true };
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (!SETTINGS.some(([name]) => name === flag)) throw new ConfigError(`unknown argument ${JSON.stringify(arg)} (see --help)`);
    let value = inline ?? argv[++index];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    if (REPEATABLE.has(flag)) {
      // `--omit-args a b c`: the values up to the next flag
      while (inline === undefined && index + 1 < argv.length && !argv[index + 1].startsWith('-')) value = `${value},${argv[++index]}`;
      if (given[flag] !== undefined) value = `${given[flag]},${value}`;
    }
    given[flag] = value;
  }
  /** @type {Record<string, string | null>} */
  const raw = {};
  for (const [flag, name, fallback] of SETTINGS) {
    raw[flag] = given[flag] ?? (env[name] || null) ?? fallback;
  }
  const required = (flag, name) => {
    const value = raw[flag];
    if (!value) throw new ConfigError(`${flag} (or ${name}) is required`);
    return value;
  };
  const redisUrl = required('--redis', 'REDIS_URL');
  if (!/^rediss?:\/\/./.test(redisUrl)) throw new ConfigError(`--redis: ${JSON.stringify(redisUrl)} is not a URL such as redis://localhost:6379`);
  const url = required('--url', 'JOBWATCH_URL').replace(/\/+$/, '');
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError(`--url: ${JSON.stringify(url)} is not an http(s) URL such as http://localhost:3000`);
  const apiKey = required('--api-key', 'JOBWATCH_API_KEY');
  if (!apiKey.startsWith('sk_')) throw new ConfigError('--api-key: a jobwatch API key starts with sk_');
  const prefix = raw['--prefix'] ?? 'bull';
  if (prefix === '' || /[\s*?[\]]/.test(prefix)) throw new ConfigError(`--prefix: ${JSON.stringify(prefix)} must be non-empty, without spaces or glob characters`);
  const logLevel = String(raw['--log-level']).toUpperCase();
  if (!['DEBUG', 'INFO', 'WARNING', 'ERROR'].includes(logLevel)) throw new ConfigError(`--log-level: ${JSON.stringify(raw['--log-level'])} is not one of DEBUG, INFO, WARNING, ERROR`);
  return {
    help: false,
    redisUrl,
    url,
    apiKey,
    connectionId: raw['--connection-id'] || null,
    prefix,
    queues: queueNames(raw['--queues']),
    spoolDir: String(raw['--spool-dir']),
    spoolBytesMax: number(raw, '--spool-max-mb', 1, 1_000_000, true) * 1024 * 1024,
    batchSize: number(raw, '--batch-size', 1, INGEST_EVENTS_MAX, true),
    flushIntervalMs: number(raw, '--flush-interval', 0.01, 5) * 1000,
    discoverIntervalMs: number(raw, '--discover-interval', 1, 3600) * 1000,
    queueIntervalMs: number(raw, '--queue-interval', 0.5, 3600) * 1000,
    workerIntervalMs: number(raw, '--worker-interval', 0.5, 5) * 1000,
    commandIntervalMs: number(raw, '--command-interval', 0.2, 3600) * 1000,
    reconcileMax: number(raw, '--reconcile-max', 0, 100_000, true),
    redactKeys: keyPatterns(raw['--redact-keys']),
    omitArgs: jobNames(raw['--omit-args']),
    logLevel,
  };
}

function number(raw, flag, low, high, integer = false) {
  const text = String(raw[flag]).trim();
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${flag}: ${JSON.stringify(raw[flag])} is not ${integer ? 'a whole number' : 'a number'}`);
  }
  if (value < low || value > high) throw new ConfigError(`${flag}: ${text} is outside ${low}..${high}`);
  return value;
}

/**
 * Key patterns as jobwatch's REDACT_KEYS takes them: letters, digits, _ and -, or `none`.
 * @param {string | null} text
 */
function keyPatterns(text) {
  if ((text ?? '').trim().toLowerCase() === 'none') return [];
  const patterns = (text ?? '').split(',').map((each) => each.trim()).filter(Boolean);
  const bad = patterns.find((pattern) => !/^[A-Za-z0-9_-]{1,64}$/.test(pattern));
  if (bad !== undefined) throw new ConfigError(`--redact-keys: ${JSON.stringify(bad)} is not a key pattern (letters, digits, _ and -, at most 64), or none`);
  if (patterns.length === 0 || patterns.length > 100) throw new ConfigError(`--redact-keys: name 1 to 100 key patterns, or none (got ${patterns.length})`);
  return patterns;
}

/** @param {string | null} text */
function jobNames(text) {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (names.length > 1000) throw new ConfigError(`--omit-args: at most 1000 job names (got ${names.length})`);
  const long = names.find((name) => name.length > 1024);
  if (long !== undefined) throw new ConfigError(`--omit-args: ${JSON.stringify(long.slice(0, 40))}... is longer than jobwatch's 1024-character job names`);
  return names;
}

/** @param {string | null} text */
function queueNames(text) {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (name.length > 255) throw new ConfigError(`--queues: ${JSON.stringify(name.slice(0, 40))}... is longer than jobwatch's 255-character queue names`);
    if (name.includes(':')) throw new ConfigError(`--queues: ${JSON.stringify(name)}: BullMQ queue names cannot contain ':'`);
  }
  return names;
}
