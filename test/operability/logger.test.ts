/**
 * The logger's formats and levels (src/logging), writing into a buffer: JSON lines with
 * the sentence as `msg` and the fields beside it, one readable line per record, the level
 * threshold, and `severity` raising a line's level without being printed.
 */
import { describe, expect, test } from 'bun:test';
import { Writable } from 'node:stream';
import { logLineTo } from '../../src/logging/log-line.ts';
import { createLogger, resolvedFormat, type LoggerOptions } from '../../src/logging/logger.ts';

function capture(options: Omit<LoggerOptions, 'destination'>) {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const log = logLineTo(createLogger({ ...options, destination, colorize: false }));
  const lines = () => written.join('').split('\n').filter((line) => line !== '');
  return { log, lines };
}

describe('JSON lines', () => {
  test('each record is one JSON object: level name, ISO time, the sentence as msg, its fields', () => {
    const { log, lines } = capture({ format: 'json', level: 'info', production: false });

    log('snapshot at seq 42: 1000 bytes in 12 ms', { seq: 42, bytes: 1000, durationMs: 12 });
    log('listening on http://127.0.0.1:3000 (data in ./data, fsync always)');

    const records = lines().map((line) => JSON.parse(line));
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ level: 'info', msg: 'snapshot at seq 42: 1000 bytes in 12 ms', seq: 42, bytes: 1000, durationMs: 12 });
    expect(new Date(records[0].time).toISOString()).toBe(records[0].time);
    expect(records[1].msg).toBe('listening on http://127.0.0.1:3000 (data in ./data, fsync always)');
  });

  test('severity raises the level and is not printed; a multi-line message stays one JSON line', () => {
    const { log, lines } = capture({ format: 'json', level: 'info', production: false });

    log('snapshot failed: disk full', { severity: 'error' });
    log('the event log failed', { severity: 'fatal' });
    log('took over the stale lock', { severity: 'warn', pid: 7 });
    log('live update failed: Error: boom\n    at somewhere', { severity: 'error' });

    const records = lines().map((line) => JSON.parse(line));
    expect(records.map((record) => record.level)).toEqual(['error', 'fatal', 'warn', 'error']);
    expect(records.every((record) => !('severity' in record))).toBe(true);
    expect(records[2].pid).toBe(7);
    expect(records[3].msg).toBe('live update failed: Error: boom\n    at somewhere');
  });

  test('severity debug lowers a line below the default threshold; LOG_LEVEL=debug keeps it', () => {
    const quiet = capture({ format: 'json', level: 'info', production: false });
    quiet.log('memory returned after 5 s quiet', { severity: 'debug', durationMs: 40 });
    expect(quiet.lines()).toHaveLength(0);

    const asking = capture({ format: 'json', level: 'debug', production: false });
    asking.log('memory returned after 5 s quiet', { severity: 'debug', durationMs: 40 });
    const records = asking.lines().map((line) => JSON.parse(line));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: 'debug', msg: 'memory returned after 5 s quiet', durationMs: 40 });
    expect('severity' in records[0]).toBe(false);
  });

  test('LOG_LEVEL is a threshold: at warn, info lines are dropped and warnings kept', () => {
    const { log, lines } = capture({ format: 'json', level: 'warn', production: false });

    log('recovered: snapshot seq 0, 0 records replayed in 3 ms');
    log('snapshot failed: disk full', { severity: 'error' });

    expect(lines().map((line) => JSON.parse(line).msg)).toEqual(['snapshot failed: disk full']);
  });
});

describe('readable lines', () => {
  test('one line per record: UTC time, level, the sentence, then the fields', () => {
    const { log, lines } = capture({ format: 'pretty', level: 'info', production: false });

    log('snapshot at seq 42: 1000 bytes in 12 ms', { seq: 42, bytes: 1000 });
    log('backup failed: no space', { severity: 'error' });

    expect(lines()).toHaveLength(2);
    expect(lines()[0]).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] INFO: snapshot at seq 42: 1000 bytes in 12 ms \{"seq":42,"bytes":1000\}$/);
    expect(lines()[1]).toMatch(/\] ERROR: backup failed: no space$/);
  });
});

test('LOG_FORMAT=auto is JSON under NODE_ENV=production and readable otherwise; an explicit format wins', () => {
  expect(resolvedFormat('auto', true)).toBe('json');
  expect(resolvedFormat('auto', false)).toBe('pretty');
  expect(resolvedFormat('pretty', true)).toBe('pretty');
  expect(resolvedFormat('json', false)).toBe('json');
});
