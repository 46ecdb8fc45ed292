/** What a command may name before the BullMQ agent builds a Redis key from it: a queue and job id of its own form, or a reason. */
import { describe, expect, test } from 'bun:test';
import { targetOf } from '../../../agents/bullmq/src/commands.js';

const refused = (command: Record<string, unknown>) => {
  const target: any = targetOf(command);
  return 'refused' in target ? target.refused : null;
};

describe('the job a command names', () => {
  test('`<queue>:<job id>`, the queue from the command or the id; job ids may hold colons (repeatable jobs)', () => {
    expect(targetOf({ externalId: 'mail:42', queue: 'mail' })).toEqual({ queue: 'mail', jobId: '42' });
    expect(targetOf({ externalId: 'mail:42', queue: null })).toEqual({ queue: 'mail', jobId: '42' });
    expect(targetOf({ externalId: 'mail:repeat:abc:1700000000000' })).toEqual({ queue: 'mail', jobId: 'repeat:abc:1700000000000' });
  });

  test('an id of another queue than the command names is refused: a watched queue does not lend its name', () => {
    expect(refused({ externalId: 'secretq:1', queue: 'evil-q' })).toBe('not a BullMQ job id of this agent: "secretq:1" in queue "evil-q"');
    expect(refused({ externalId: 'mail:', queue: 'mail' })).toContain('not a BullMQ job id');
    expect(refused({ externalId: 'no-queue-here' })).toContain('not a BullMQ job id');
  });

  test('control characters, wrong types and lengths past the contract are refused before any key is built', () => {
    expect(refused({ externalId: 'mail:1\r\nforged' })).toContain('not a BullMQ job id');
    expect(refused({ externalId: 42 })).toContain('not a BullMQ job id');
    expect(refused({ externalId: `mail:${'x'.repeat(600)}` })).toContain('not a BullMQ job id');
    expect(refused({ externalId: 'mail:1', queue: 'ma\u0000il' })).toContain('not a BullMQ queue name');
    expect(refused({ externalId: 'a:b:1', queue: 'a:b' })).toContain('not a BullMQ queue name');
    expect(refused({ externalId: `q:1`, queue: 'q'.repeat(256) })).toContain('not a BullMQ queue name');
    expect(refused({ externalId: 'mail:1', queue: 7 })).toContain('not a BullMQ queue name');
  });

  test('an id that was cut to 512 characters on its way to jobwatch names no job', () => {
    expect(refused({ externalId: `mail:${'x'.repeat(495)}\u2026[truncated]` })).toContain('was cut to 512 characters');
  });
});
