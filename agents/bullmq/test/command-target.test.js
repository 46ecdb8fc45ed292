/** What a command may name before the BullMQ agent builds a Redis key from it: a queue and job id of its own form, or a reason. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { targetOf } from '../src/commands.js';

const refused = (command) => {
  const target = targetOf(command);
  return 'refused' in target ? target.refused : null;
};

describe('the job a command names', () => {
  test('`<queue>:<job id>`, the queue from the command or the id; job ids may hold colons (repeatable jobs)', () => {
    assert.deepEqual(targetOf({ externalId: 'mail:42', queue: 'mail' }), { queue: 'mail', jobId: '42' });
    assert.deepEqual(targetOf({ externalId: 'mail:42', queue: null }), { queue: 'mail', jobId: '42' });
    assert.deepEqual(targetOf({ externalId: 'mail:repeat:abc:1700000000000' }), { queue: 'mail', jobId: 'repeat:abc:1700000000000' });
  });

  test('an id of another queue than the command names is refused: a watched queue does not lend its name', () => {
    assert.equal(refused({ externalId: 'secretq:1', queue: 'evil-q' }), 'not a BullMQ job id of this agent: "secretq:1" in queue "evil-q"');
    assert.ok(refused({ externalId: 'mail:', queue: 'mail' }).includes('not a BullMQ job id'));
    assert.ok(refused({ externalId: 'no-queue-here' }).includes('not a BullMQ job id'));
  });

  test('control characters, wrong types and lengths past the contract are refused before any key is built', () => {
    assert.ok(refused({ externalId: 'mail:1\r\nforged' }).includes('not a BullMQ job id'));
    assert.ok(refused({ externalId: 42 }).includes('not a BullMQ job id'));
    assert.ok(refused({ externalId: `mail:${'x'.repeat(600)}` }).includes('not a BullMQ job id'));
    assert.ok(refused({ externalId: 'mail:1', queue: 'ma\u0000il' }).includes('not a BullMQ queue name'));
    assert.ok(refused({ externalId: 'a:b:1', queue: 'a:b' }).includes('not a BullMQ queue name'));
    assert.ok(refused({ externalId: `q:1`, queue: 'q'.repeat(256) }).includes('not a BullMQ queue name'));
    assert.ok(refused({ externalId: 'mail:1', queue: 7 }).includes('not a BullMQ queue name'));
  });

  test('an id that was cut to 512 characters on its way to jobwatch names no job', () => {
    assert.ok(refused({ externalId: `mail:${'x'.repeat(495)}\u2026[truncated]` }).includes('was cut to 512 characters'));
  });
});
