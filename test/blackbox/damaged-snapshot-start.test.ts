/**
 * The probe that found a damaged snapshot made a loss permanent, against the real process:
 * the accounts chunk of the shutdown snapshot replaced by `{}` under a valid checksum. The
 * service used to start with every user and connection gone and a new admin with a
 * one-time password; now it refuses to start, naming the file, the chunk's offset and what
 * was expected, makes no admin and changes nothing. Putting the original file back starts
 * it with its accounts.
 */
import { afterAll, expect, test } from 'bun:test';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SNAPSHOT_MAGIC, encodeFrame, readFrame } from '../../persistence/frame.ts';
import { decodeValue, encodeValue } from '../../persistence/record-codec.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createConnection, login, logDir, makeDataDir, removeDir, spawnService, startService, TEST_TIMEOUT_MS } from './service-process.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

test('a snapshot whose accounts chunk was replaced by {} stops the start; no admin is made; the original file starts again', async () => {
  const dataDir = makeDataDir('damaged-snapshot');
  dirs.push(dataDir);
  const first = await startService({ dataDir, env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  const cookie = await login(first.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  await createConnection(first.baseUrl, cookie, 'prod');
  expect(await first.stop()).toBe(0); // a clean stop writes the snapshot

  // the store holding the accounts: the only one, or the accounts' own with shards
  const accountsDir = logDir(dataDir);
  const snapshot = join(accountsDir, readdirSync(accountsDir).find((name) => name.endsWith('.snap'))!);
  const original = readFileSync(snapshot);
  const frames: Array<{ start: number; end: number; value: unknown }> = [];
  for (let offset = 0; offset < original.length; ) {
    const outcome = readFrame(original, offset, SNAPSHOT_MAGIC);
    if (outcome.kind !== 'ok') throw new Error(`the snapshot is not clean at ${offset}`);
    frames.push({ start: offset, end: outcome.nextOffset, value: decodeValue(outcome.payload) });
    offset = outcome.nextOffset;
  }
  const index = frames.findIndex((frame) => (frame.value as { k?: string }).k === 'accounts');
  const accounts = frames[index]!;
  writeFileSync(snapshot, Buffer.concat([original.subarray(0, accounts.start), encodeFrame(SNAPSHOT_MAGIC, index, encodeValue({})), original.subarray(accounts.end)]));
  const damaged = readFileSync(snapshot);

  // no ADMIN_EMAIL: a start taken for a new installation would print a one-time password
  const refused = spawnService({ dataDir, env: { ADMIN_EMAIL: undefined, ADMIN_PASSWORD: undefined } });
  expect(await refused.waitForExit(30_000)).not.toBe(0);
  const output = refused.output;
  expect(output).not.toContain('listening on');
  expect(output).not.toContain('created admin');
  expect(output).toContain(`refusing to start from data directory ${accountsDir}: snapshot ${snapshot} chunk ${index} of ${frames.length - 2} (frame at offset ${accounts.start}): expected a snapshot chunk kind this version knows`);
  expect(output).toContain('Nothing in the directory was changed');
  expect(Buffer.compare(readFileSync(snapshot), damaged)).toBe(0);

  writeFileSync(snapshot, original);
  const restored = await startService({ dataDir, env: { ADMIN_EMAIL: undefined, ADMIN_PASSWORD: undefined } });
  expect(restored.output).not.toContain('created admin');
  const again = await login(restored.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD);
  const connections = await fetch(`${restored.baseUrl}/api/connections`, { headers: { cookie: again } });
  expect(((await connections.json()) as { data: Array<{ name: string }> }).data.map((connection) => connection.name)).toEqual(['prod']);
  await restored.stop();
}, TEST_TIMEOUT_MS * 2);
