import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../actors/clock.ts';
import { Engine, inMemoryLog } from '../../actors/engine.ts';
import { T0 } from '../support/test-app.ts';

describe('engine listeners', () => {
  test('given a listener that throws, when a record commits, then the commit succeeds and the error is reported', async () => {
    const reported: unknown[] = [];
    const engine = new Engine({
      clock: new ManualClock(T0),
      log: inMemoryLog,
      limits: { dailyEventLimit: 0, dedupKeysMax: 10, maxJobsPerConnection: 10, retentionMs: 1000 },
      onListenerError: (error) => reported.push(error),
    });
    const seen: string[] = [];
    engine.listen({ deleted: () => { throw new Error('hub closed'); } });
    engine.listen({ deleted: (id) => seen.push(id) });
    await engine.commit({ t: 'connection.created', connection: { id: 'c1', name: 'n', ownerId: 'u', keyHash: 'h', keyPrefix: 'sk_', createdAtMs: T0 } });
    await engine.commit({ t: 'connection.deleted', connectionId: 'c1' });
    expect(reported).toHaveLength(1);
    expect(seen).toEqual(['c1']);
    expect(engine.connection('c1')).toBeUndefined();
  });
});
