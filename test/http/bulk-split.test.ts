/**
 * A cluster node reads a copy of some write bodies to know where to send them: a bulk
 * action's, to split its ids by writer; an alert create's, for its connection. Only within
 * the route's cap: a body past it, even one that never ends, is passed on unread for the
 * writer to refuse, instead of being buffered whole (or waited on) by the node that received it.
 */
import { expect, test } from 'bun:test';
import { splitBulkByOwner, type BulkPart } from '../../src/http/bulk-split.ts';
import { ACCOUNTS_PARTITION_KEY, connectionKeyOfBody } from '../../src/http/write-partition.ts';
import { testApp } from '../support/test-app.ts';

const CHUNK = new Uint8Array(64 * 1024).fill(0x20);

/** A JSON-typed POST whose body is blanks without end; `pulls()` says how many chunks were read. */
function endlessPost(path: string): { request: Request; pulls: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += 1;
      controller.enqueue(CHUNK);
    },
  });
  return { request: new Request(`http://node${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }), pulls: () => pulled };
}

async function split(request: Request): Promise<Array<{ key: string; part: BulkPart }>> {
  const sent: Array<{ key: string; part: BulkPart }> = [];
  await splitBulkByOwner(request, {
    // no job is known anywhere
    keysOf: async (ids) => ids.map(() => undefined),
    fallbackKey: ACCOUNTS_PARTITION_KEY,
    writerOf: () => 'node-a',
    answerPart: async (key, part) => {
      sent.push({ key, part });
      return Response.json({ results: [] });
    },
  });
  return sent;
}

test('a bulk body that never ends is passed on whole after the cap is read, not buffered', async () => {
  const { request, pulls } = endlessPost('/api/jobs/bulk/retry');
  const sent = await split(request);
  expect(sent).toEqual([{ key: ACCOUNTS_PARTITION_KEY, part: { request: expect.any(Request), body: undefined } }]);
  expect(pulls()).toBeLessThan(8);
});

test('an alert body that never ends goes to the accounts writer once its copy is past the cap', async () => {
  const { engine } = await testApp();
  const { request, pulls } = endlessPost('/api/alert-rules');
  expect(await connectionKeyOfBody(request.clone() as Request, engine, 16)).toBe(ACCOUNTS_PARTITION_KEY);
  expect(pulls()).toBeLessThan(8);
});

test('a well-formed body within the cap is read; ids no replica knows go to one writer, unchanged', async () => {
  const request = new Request('http://node/api/jobs/bulk/retry', { method: 'POST', body: JSON.stringify({ ids: ['unknown-1', 'unknown-2'] }) });
  const sent = await split(request);
  expect(sent).toHaveLength(1);
  expect(sent[0]!.part.body).toBeUndefined();
  expect(await sent[0]!.part.request.json()).toEqual({ ids: ['unknown-1', 'unknown-2'] });
});
