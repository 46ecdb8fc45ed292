/**
 * Where a cluster node sends a marker write: with the API key, to the writer of the key's
 * connection; with a session, to the one of the connection the body names; a deletion to
 * the one of the connection holding the marker.
 */
import { expect, test } from 'bun:test';
import { connectionPartitionKey, writeTarget } from '../../src/http/write-partition.ts';
import { testApp } from '../support/test-app.ts';

const PARTITIONS = 16;

test('marker writes go to the partition of their connection', async () => {
  const t = await testApp();
  const cookie = await t.login();
  const connection = await t.createConnection(cookie, 'prod');
  const created = await t.request('POST', '/api/markers', { headers: { cookie }, body: { connectionId: connection.id, name: 'deploy' } });
  const key = connectionPartitionKey(connection.id, PARTITIONS);
  const target = (method: string, path: string, headers: Record<string, string> = {}) => writeTarget(new Request(`http://node${path}`, { method, headers }), path, t.engine, PARTITIONS);

  expect(target('POST', '/api/markers', { authorization: `Bearer ${connection.apiKey}` })).toEqual({ kind: 'partition', key });
  expect(target('POST', '/api/markers', { authorization: 'Bearer sk_unknown' })).toEqual({ kind: 'local' });
  expect(target('POST', '/api/markers', { cookie })).toEqual({ kind: 'connectionInBody' });
  expect(target('DELETE', `/api/markers/${created.json.id}`)).toEqual({ kind: 'partition', key });
  expect(target('DELETE', '/api/markers/no-such-marker')).toEqual({ kind: 'local' });
}, 30_000);
