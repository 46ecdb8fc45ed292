/**
 * Where a cluster node sends a control of the job system: to the writer of the partition
 * of the connection holding the job, queue or worker, or named in a rate limit's body; an
 * agent's capabilities to its key's connection; reads (a command, a clean's estimate, the
 * capabilities) are answered by any replica.
 */
import { expect, test } from 'bun:test';
import { connectionPartitionKey, writeTarget } from '../../src/http/write-partition.ts';
import { routeAnswerer } from '../../src/http/replica-routes.ts';
import { controlFixture } from '../routes/control-fixture.ts';

const PARTITIONS = 16;

test('controls go to the partition of the connection holding their target; their reads to any replica', async () => {
  const f = await controlFixture();
  const key = connectionPartitionKey(f.c.id, PARTITIONS);
  const target = (method: string, path: string, headers: Record<string, string> = {}) => writeTarget(new Request(`http://node${path}`, { method, headers }), path, f.t.engine, PARTITIONS);

  for (const action of ['promote', 'delete', 'kill', 'retry', 'revoke']) expect(target('POST', `/api/jobs/${f.jobId('emails:1')}/${action}`)).toEqual({ kind: 'partition', key });
  for (const action of ['pause', 'resume', 'clean', 'retry-failed', 'concurrency']) expect(target('POST', `/api/queues/${f.queueId()}/${action}`)).toEqual({ kind: 'partition', key });
  for (const action of ['quiet', 'stop', 'pool']) expect(target('POST', `/api/workers/${f.workerId()}/${action}`)).toEqual({ kind: 'partition', key });
  expect(target('POST', '/api/queues/no-such-queue/pause')).toEqual({ kind: 'local' });
  expect(target('POST', `/api/workers/${f.queueId()}/quiet`)).toEqual({ kind: 'local' }); // a queue's id is no worker's
  expect(target('POST', '/api/tasks/rate-limit')).toEqual({ kind: 'connectionInBody' });
  expect(target('PUT', '/api/agent/capabilities', { authorization: `Bearer ${f.c.apiKey}` })).toEqual({ kind: 'partition', key });
  expect(target('PUT', '/api/agent/capabilities', { authorization: 'Bearer sk_unknown' })).toEqual({ kind: 'local' });

  for (const path of [`/api/commands/x`, '/api/capabilities', `/api/queues/${f.queueId()}`, `/api/queues/${f.queueId()}/clean-estimate`, `/queues/${f.queueId()}`]) expect(routeAnswerer('GET', path)).toBe('replica');
  expect(routeAnswerer('POST', `/api/queues/${f.queueId()}/pause`)).toBe('owner');
  expect(routeAnswerer('PUT', '/api/agent/capabilities')).toBe('owner');
});
