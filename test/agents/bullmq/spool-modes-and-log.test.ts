/**
 * What the BullMQ agent leaves on disk and in its log: the spool holds the app's job names,
 * errors and stack traces, so it is the agent's alone (0700 directories, 0600 files, an older
 * spool tightened at start); log lines carry names from Redis and jobwatch, so their control
 * characters are escaped and no name can forge a line.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Checkpoints } from '../../../agents/bullmq/src/checkpoint.js';
import { logger, printable } from '../../../agents/bullmq/src/log.js';
import { tightenPrivateTree } from '../../../agents/bullmq/src/private-files.js';
import { Spool } from '../../../agents/bullmq/src/spool.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-bullmq-modes-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const modeOf = (path: string) => statSync(path).mode & 0o7777;

/** Runs `work` under a umask that would leave everything world-readable and writable. */
function underOpenUmask<T>(work: () => T): T {
  const before = process.umask(0);
  try {
    return work();
  } finally {
    process.umask(before);
  }
}

describe('spool files', () => {
  test('the spool directory is 0700 and its batch files 0600, whatever the umask', () => {
    const dir = join(tempDir(), 'spool', 'batches');
    const spool = underOpenUmask(() => {
      const created = new Spool(dir, 1024 * 1024);
      created.append(['{"job":{"name":"send-invoice","error":"card declined"}}']);
      return created;
    });
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, '..'))).toBe(0o700);
    const [file] = readdirSync(dir);
    expect(modeOf(join(dir, file!))).toBe(0o600);
    expect(spool.events).toBe(1);
  });

  test('checkpoints are written 0600, also over a file an older version left 0644', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'checkpoints-bull.json.tmp'), '{}', { mode: 0o644 });
    const checkpoints = underOpenUmask(() => new Checkpoints(dir, 'bull'));
    checkpoints.advance('mail', '1-0');
    await underOpenUmask(() => checkpoints.save());
    expect(modeOf(join(dir, 'checkpoints-bull.json'))).toBe(0o600);
    checkpoints.advance('mail', '2-0');
    underOpenUmask(() => checkpoints.saveNow());
    expect(modeOf(join(dir, 'checkpoints-bull.json'))).toBe(0o600);
  });

  test('a spool an older version wrote (0755, 0644) is tightened at start, and the log says what changed', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'batches'));
    writeFileSync(join(dir, 'batches', '000000000001-1.json'), '[]');
    writeFileSync(join(dir, 'checkpoints-bull.json'), '{}');
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'batches'), 0o755);
    chmodSync(join(dir, 'batches', '000000000001-1.json'), 0o644);
    chmodSync(join(dir, 'checkpoints-bull.json'), 0o664);
    const lines = tightenPrivateTree(dir);
    expect([modeOf(dir), modeOf(join(dir, 'batches')), modeOf(join(dir, 'batches', '000000000001-1.json')), modeOf(join(dir, 'checkpoints-bull.json'))]).toEqual([0o700, 0o700, 0o600, 0o600]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`removed group/other access from 4 path(s) under ${dir}`);
    expect(lines[0]).toContain('. 0755 -> 0700');
    expect(lines[0]).toContain('batches/000000000001-1.json 0644 -> 0600');
    expect(tightenPrivateTree(dir)).toEqual([]);
  });

  test('a shared directory (sticky, as /tmp) given as the spool is not closed: the log says to give the agent its own', () => {
    const dir = tempDir();
    chmodSync(dir, 0o1777);
    writeFileSync(join(dir, 'checkpoints-bull.json'), '{}', { mode: 0o644 });
    chmodSync(join(dir, 'checkpoints-bull.json'), 0o644);
    const lines = tightenPrivateTree(dir);
    expect(modeOf(dir)).toBe(0o1777);
    expect(modeOf(join(dir, 'checkpoints-bull.json'))).toBe(0o600);
    expect(lines.join('\n')).toContain('is a shared directory (mode 01777): its own mode is left as it is; give the agent a directory of its own');
  });
});

describe('log lines', () => {
  test('control characters are escaped: a queue name cannot end a line and forge the next one', () => {
    const forged = 'mail\n2026-11-20T10:00:00.000Z ERROR jobwatch_bullmq.deliver: dropped 1000 events\r\u0000\u001b[31mred\u2028';
    expect(printable(forged)).toBe('mail\\n2026-11-20T10:00:00.000Z ERROR jobwatch_bullmq.deliver: dropped 1000 events\\r\\x00\\x1b[31mred\\u2028');
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      logger('reader').info(`queue ${forged}: first seen`);
    } finally {
      process.stderr.write = write;
    }
    expect(written).toHaveLength(1);
    expect(written[0]!.split('\n')).toHaveLength(2); // one line and its end
    expect(written[0]).toMatch(/^\S+ INFO jobwatch_bullmq\.reader: queue mail\\n2026-11-20T10:00:00\.000Z ERROR .* first seen\n$/);
  });

  test('printable text is left as it is', () => {
    expect(printable('queue émails 😀 "quoted" \\ back')).toBe('queue émails 😀 "quoted" \\ back');
  });
});
