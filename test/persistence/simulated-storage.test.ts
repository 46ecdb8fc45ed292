import { describe, expect, test } from 'bun:test';
import { SeededRandom } from '../../persistence/seeded-random.ts';
import { SimulatedCrash, SimulatedStorage } from '../../persistence/simulated-storage.ts';

const bytes = (...values: number[]) => new Uint8Array(values);

async function diskWithSyncedAndUnsyncedBytes(seed: number): Promise<SimulatedStorage> {
  const storage = new SimulatedStorage(new SeededRandom(seed));
  await storage.mkdirp('data');
  const file = await storage.openAppend('data/a');
  await file.append(bytes(1, 2, 3));
  await file.datasync();
  await storage.fsyncDir('data');
  await file.append(bytes(4, 5, 6, 7, 8, 9));
  return storage;
}

describe('simulated storage', () => {
  test('given synced and unsynced bytes, when the power is cut, then the synced bytes survive and a prefix of the rest may', async () => {
    const survivors = new Set<string>();
    for (let seed = 1; seed <= 60; seed++) {
      const storage = await diskWithSyncedAndUnsyncedBytes(seed);
      storage.crash();
      storage.restart();
      const content = await storage.readFile('data/a');
      expect([...content.subarray(0, 3)]).toEqual([1, 2, 3]);
      const tail = [...content.subarray(3)];
      const fromWrite = [4, 5, 6, 7, 8, 9].slice(0, tail.length);
      // Either the written bytes or zeros where the data never arrived, in that order.
      const firstZero = tail.findIndex((value, index) => value !== fromWrite[index]);
      if (firstZero >= 0) expect(tail.slice(firstZero).every((value) => value === 0)).toBe(true);
      survivors.add(tail.join(','));
    }
    expect(survivors.size).toBeGreaterThan(3);
  });

  test('given a created file whose directory was never synced, when the power is cut, then the file is gone', async () => {
    const storage = new SimulatedStorage(new SeededRandom(1));
    await storage.mkdirp('data');
    const file = await storage.openAppend('data/new');
    await file.append(bytes(1));
    await file.datasync();

    storage.crash();
    storage.restart();

    expect(await storage.list('data')).toEqual([]);
  });

  test('given a crash, then old handles and path operations fail until restart, and old handles fail after it', async () => {
    const storage = new SimulatedStorage(new SeededRandom(2));
    await storage.mkdirp('data');
    const file = await storage.openAppend('data/a');
    await storage.fsyncDir('data');

    storage.crash();
    await expect(storage.list('data')).rejects.toBeInstanceOf(SimulatedCrash);
    storage.restart();

    await expect(file.append(bytes(1))).rejects.toBeInstanceOf(SimulatedCrash);
    expect(await storage.list('data')).toEqual(['a']);
  });

  test('given the same seed, when the same operations run, then the disk ends the same', async () => {
    const contentFor = async (seed: number) => {
      const storage = await diskWithSyncedAndUnsyncedBytes(seed);
      storage.crash();
      storage.restart();
      return [...(await storage.readFile('data/a'))];
    };
    for (const seed of [3, 17, 99]) expect(await contentFor(seed)).toEqual(await contentFor(seed));
  });

  test('given a scheduled crash, when that operation starts, then it fails and the power is off', async () => {
    const storage = new SimulatedStorage(new SeededRandom(4));
    await storage.mkdirp('data');
    storage.scheduleCrash(2);

    await storage.list('data');
    await expect(storage.list('data')).rejects.toBeInstanceOf(SimulatedCrash);
    expect(storage.isDown).toBe(true);
  });

  test('given a rename whose directory was never synced, when the power is cut, then exactly one of the two names survives', async () => {
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const storage = new SimulatedStorage(new SeededRandom(seed));
      await storage.mkdirp('data');
      const file = await storage.openAppend('data/a.tmp');
      await file.append(bytes(1));
      await file.datasync();
      await storage.fsyncDir('data');
      await storage.rename('data/a.tmp', 'data/a');

      storage.crash();
      storage.restart();

      const names = await storage.list('data');
      expect(names).toHaveLength(1);
      expect([...(await storage.readFile(`data/${names[0]}`))]).toEqual([1]);
      outcomes.add(names[0]!);
    }
    expect([...outcomes].sort()).toEqual(['a', 'a.tmp']);
  });
});
