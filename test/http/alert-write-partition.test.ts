/**
 * Where a cluster node sends an alert write: to the writer of the partition of the
 * connection holding the rule or channel, or named in a create body; the accounts writer
 * when nothing names a connection this replica knows (it answers the 400 or 404).
 */
import { expect, test } from 'bun:test';
import { alertFixture } from '../alerts/alert-fixture.ts';
import { FORM_BODY_BYTES_MAX } from '../../src/http/read-body.ts';
import { ACCOUNTS_PARTITION_KEY, connectionKeyOfBody, connectionPartitionKey, writeTarget } from '../../src/http/write-partition.ts';

const PARTITIONS = 16;
const request = (method: string, path: string, body?: string) => new Request(`http://node${path}`, { method, body, headers: { 'content-type': 'application/json' } });

test('alert writes go to the partition of their connection', async () => {
  const f = await alertFixture();
  const { channel } = await f.createChannel();
  const rule = await f.createRule({ kind: 'job_stuck', windowSeconds: 60 });
  const engine = f.t.engine;
  const key = connectionPartitionKey(f.connection.id, PARTITIONS);
  const target = (method: string, path: string) => writeTarget(request(method, path), path, engine, PARTITIONS);

  expect(target('PATCH', `/api/alert-rules/${rule.id}`)).toEqual({ kind: 'partition', key });
  expect(target('DELETE', `/api/alert-rules/${rule.id}`)).toEqual({ kind: 'partition', key });
  expect(target('DELETE', `/api/alert-channels/${channel.id}`)).toEqual({ kind: 'partition', key });
  expect(target('POST', `/api/alert-channels/${channel.id}/test`)).toEqual({ kind: 'partition', key });
  expect(target('DELETE', '/api/alert-rules/no-such-rule')).toEqual({ kind: 'local' });
  expect(target('DELETE', `/api/alert-rules/${channel.id}`)).toEqual({ kind: 'local' }); // a channel's id is no rule's
  expect(target('POST', '/api/alert-rules')).toEqual({ kind: 'connectionInBody' });
  expect(target('POST', '/api/alert-channels')).toEqual({ kind: 'connectionInBody' });
  expect(target('POST', '/api/alert-rules/preview')).toEqual({ kind: 'partition', key: ACCOUNTS_PARTITION_KEY });

  const bodyKey = (body: string) => connectionKeyOfBody(request('POST', '/api/alert-rules', body), engine, PARTITIONS);
  expect(await bodyKey(JSON.stringify({ connectionId: f.connection.id, name: 'x' }))).toBe(key);
  expect(await bodyKey(JSON.stringify({ connectionId: 'unknown' }))).toBe(ACCOUNTS_PARTITION_KEY);
  expect(await bodyKey('not json')).toBe(ACCOUNTS_PARTITION_KEY);
  // up to the routes' 16 KiB cap it is read; one byte past it, not further: the writer refuses it
  const ofBytes = (bytes: number) => {
    const body = JSON.stringify({ connectionId: f.connection.id, name: '' });
    return body.replace('"name":""', `"name":"${'x'.repeat(bytes - body.length)}"`);
  };
  expect(await bodyKey(ofBytes(FORM_BODY_BYTES_MAX))).toBe(key);
  expect(await bodyKey(ofBytes(FORM_BODY_BYTES_MAX + 1))).toBe(ACCOUNTS_PARTITION_KEY);
});
