/**
 * What the BullMQ agent leaves on disk and in its log: the spool holds the app's job names,
 * errors and stack traces, so it is the agent's alone (0700 directories, 0600 files, an older
 * spool tightened at start); log lines carry names from Redis and jobwatch, so their control
 * characters are escaped and no name can forge a line.
 */
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Checkpoints } from '../src/checkpoint.js';
import { logger, printable } from '../src/log.js';
import { tightenPrivateTree } from '../src/private-files.js';
import { Spool } from '../src/spool.js';

const dirs = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobwatch-bullmq-modes-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const modeOf = (path) => statSync(path).mode & 0o7777;

/** Runs `work` under a umask that would leave everything world-readable and writable. */
function underOpenUmask(work) {
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
    assert.equal(modeOf(dir), 0o700);
    assert.equal(modeOf(join(dir, '..')), 0o700);
    const [file] = readdirSync(dir);
    assert.equal(modeOf(join(dir, file)), 0o600);
    assert.equal(spool.events, 1);
  });

  test('checkpoints are written 0600, also over a file an older version left 0644', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'checkpoints-bull.json.tmp'), '{}', { mode: 0o644 });
    const checkpoints = underOpenUmask(() => new Checkpoints(dir, 'bull'));
    checkpoints.advance('mail', '1-0');
    await underOpenUmask(() => checkpoints.save());
    assert.equal(modeOf(join(dir, 'checkpoints-bull.json')), 0o600);
    checkpoints.advance('mail', '2-0');
    underOpenUmask(() => checkpoints.saveNow());
    assert.equal(modeOf(join(dir, 'checkpoints-bull.json')), 0o600);
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
    assert.deepEqual([modeOf(dir), modeOf(join(dir, 'batches')), modeOf(join(dir, 'batches', '000000000001-1.json')), modeOf(join(dir, 'checkpoints-bull.json'))], [0o700, 0o700, 0o600, 0o600]);
    assert.equal(lines.length, 1);
    assert.ok(lines[0].includes(`removed group/other access from 4 path(s) under ${dir}`));
    assert.ok(lines[0].includes('. 0755 -> 0700'));
    assert.ok(lines[0].includes('batches/000000000001-1.json 0644 -> 0600'));
    assert.deepEqual(tightenPrivateTree(dir), []);
  });

  test('a shared directory (sticky, as /tmp) given as the spool is not closed: the log says to give the agent its own', () => {
    const dir = tempDir();
    chmodSync(dir, 0o1777);
    writeFileSync(join(dir, 'checkpoints-bull.json'), '{}', { mode: 0o644 });
    chmodSync(join(dir, 'checkpoints-bull.json'), 0o644);
    const lines = tightenPrivateTree(dir);
    assert.equal(modeOf(dir), 0o1777);
    assert.equal(modeOf(join(dir, 'checkpoints-bull.json')), 0o600);
    assert.ok(lines.join('\n').includes('is a shared directory (mode 01777): its own mode is left as it is; give the agent a directory of its own'));
  });
});

describe('log lines', () => {
  test('control characters are escaped: a queue name cannot end a line and forge the next one', () => {
    const forged = 'mail\n2026-11-20T10:00:00.000Z ERROR jobwatch_bullmq.deliver: dropped 1000 events\r\u0000\u001b[31mred\u2028';
    assert.equal(printable(forged), 'mail\\n2026-11-20T10:00:00.000Z ERROR jobwatch_bullmq.deliver: dropped 1000 events\\r\\x00\\x1b[31mred\\u2028');
    const written = [];
    const write = process.stderr.write;
    process.stderr.write = (chunk) => written.push(String(chunk)) > 0;
    try {
      logger('reader').info(`queue ${forged}: first seen`);
    } finally {
      process.stderr.write = write;
    }
    assert.equal(written.length, 1);
    assert.equal(written[0].split('\n').length, 2); // one line and its end
    assert.match(written[0], /^\S+ INFO jobwatch_bullmq\.reader: queue mail\\n2026-11-20T10:00:00\.000Z ERROR .* first seen\n$/);
  });

  test('printable text is left as it is', () => {
    assert.equal(printable('queue émails 😀 "quoted" \\ back'), 'queue émails 😀 "quoted" \\ back');
  });
});
