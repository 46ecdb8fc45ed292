import { dirname } from 'node:path';
import { invariant } from './invariant.ts';
import type { SeededRandom } from './seeded-random.ts';
import type { Storage, StorageFile } from './storage.ts';

/**
 * An in-memory disk for simulation tests (practice 13, after TigerBeetle). It keeps
 * what a real disk keeps and loses what a real disk may lose, choosing with a seeded
 * generator so a failing seed replays exactly:
 *
 * - file data is durable up to the last `datasync`; names (create, rename, remove) are
 *   durable up to the last `fsyncDir` of their directory;
 * - `crash()` cuts the power: undurable names are undone, and each surviving file keeps
 *   its durable bytes plus a random prefix of its unsynced bytes (none, all, or a torn
 *   cut), whose end may read back as zeros (a file size that reached the disk before
 *   its data did);
 * - with the configured probabilities an append fails after writing a random prefix of
 *   its bytes, and a datasync or fsyncDir fails without making anything durable;
 * - every operation first yields a random number of microtasks, so concurrent callers
 *   interleave differently per seed but identically per replay.
 *
 * Simplifications: directories are durable as soon as they exist, and unsynced bytes
 * never reach the disk out of order (no holes before a surviving byte).
 */
export interface SimulatedFaults {
  writeFailureProbability: number;
  syncFailureProbability: number;
}

export const NO_FAULTS: Readonly<SimulatedFaults> = { writeFailureProbability: 0, syncFailureProbability: 0 };

/** Thrown by every operation from the moment the power is cut until `restart()`. */
export class SimulatedPowerLoss extends Error {
  override readonly name = 'SimulatedPowerLoss';
}

/** An injected I/O failure (the EIO or ENOSPC a real disk may return). */
export class SimulatedIoFault extends Error {
  override readonly name = 'SimulatedIoFault';
}

export class SimulatedStorage implements Storage {
  faults: SimulatedFaults;
  readonly counters = { operations: 0, appends: 0, datasyncs: 0, dirSyncs: 0, crashes: 0 };
  private names = new Map<string, SimulatedInode>();
  private durableNames = new Map<string, SimulatedInode>();
  private readonly directories = new Set<string>();
  private epoch = 0;
  private poweredOff = false;
  private crashAtOperation: number | undefined;

  constructor(
    private readonly random: SeededRandom,
    faults: SimulatedFaults = NO_FAULTS,
  ) {
    this.faults = { ...faults };
  }

  get isPoweredOff(): boolean {
    return this.poweredOff;
  }

  /** Cuts the power as the n-th operation from now starts (n >= 1); that operation fails. */
  scheduleCrash(afterOperations: number): void {
    invariant(afterOperations >= 1, 'a crash is scheduled at least one operation ahead');
    this.crashAtOperation = this.counters.operations + afterOperations;
  }

  crash(): void {
    this.poweredOff = true;
    this.crashAtOperation = undefined;
    this.epoch += 1;
    this.counters.crashes += 1;
    const survivors = new Map(this.durableNames);
    for (const inode of new Set(survivors.values())) inode.loseUnsyncedBytes(this.random);
    this.names = survivors;
    this.durableNames = new Map(survivors);
  }

  /** Powers the disk back on; handles opened before the crash stay dead. */
  restart(): void {
    this.poweredOff = false;
  }

  async mkdirp(dir: string): Promise<void> {
    await this.beginOperation();
    for (let path = dir; !this.directories.has(path); path = dirname(path)) {
      this.directories.add(path);
      if (dirname(path) === path) break;
    }
  }

  async list(dir: string): Promise<string[]> {
    await this.beginOperation();
    this.requireDirectory(dir);
    const entries: string[] = [];
    for (const path of this.names.keys()) {
      if (dirname(path) === dir) entries.push(path.slice(dir.length + 1));
    }
    return entries.sort();
  }

  async exists(path: string): Promise<boolean> {
    await this.beginOperation();
    return this.names.has(path) || this.directories.has(path);
  }

  async readFile(path: string): Promise<Uint8Array> {
    await this.beginOperation();
    return this.requireFile(path).content().slice();
  }

  async openAppend(path: string): Promise<StorageFile> {
    await this.beginOperation();
    this.requireDirectory(dirname(path));
    let inode = this.names.get(path);
    if (!inode) {
      inode = new SimulatedInode();
      this.names.set(path, inode);
    }
    return new SimulatedFileHandle(this, inode, this.epoch);
  }

  async truncate(path: string, sizeBytes: number): Promise<void> {
    await this.beginOperation();
    this.requireFile(path).truncate(sizeBytes);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.beginOperation();
    const inode = this.requireFile(from);
    this.requireDirectory(dirname(to));
    this.names.delete(from);
    this.names.set(to, inode);
  }

  async remove(path: string): Promise<void> {
    await this.beginOperation();
    this.requireFile(path);
    this.names.delete(path);
  }

  async fsyncDir(dir: string): Promise<void> {
    await this.beginOperation();
    this.requireDirectory(dir);
    this.counters.dirSyncs += 1;
    if (this.random.chance(this.faults.syncFailureProbability)) {
      throw new SimulatedIoFault(`simulated fsync failure on directory ${dir}`);
    }
    for (const path of [...this.durableNames.keys()]) {
      if (dirname(path) === dir && !this.names.has(path)) this.durableNames.delete(path);
    }
    for (const [path, inode] of this.names) {
      if (dirname(path) === dir) this.durableNames.set(path, inode);
    }
  }

  /** @internal used by handles: same power, fault and interleaving rules as path operations. */
  async beginHandleOperation(epoch: number): Promise<void> {
    await this.beginOperation();
    if (epoch !== this.epoch) throw new SimulatedPowerLoss('file handle was opened before the power was cut');
  }

  /** @internal */
  appendThroughHandle(inode: SimulatedInode, bytes: Uint8Array): void {
    this.counters.appends += 1;
    if (this.random.chance(this.faults.writeFailureProbability)) {
      inode.append(bytes.subarray(0, this.random.int(bytes.length + 1)));
      throw new SimulatedIoFault('simulated write failure after a partial write');
    }
    inode.append(bytes);
  }

  /** @internal */
  datasyncThroughHandle(inode: SimulatedInode): void {
    this.counters.datasyncs += 1;
    if (this.random.chance(this.faults.syncFailureProbability)) {
      throw new SimulatedIoFault('simulated fdatasync failure');
    }
    inode.makeDurable();
  }

  private async beginOperation(): Promise<void> {
    for (let turns = this.random.int(3); turns > 0; turns--) await Promise.resolve();
    if (this.poweredOff) throw new SimulatedPowerLoss('the simulated disk has no power');
    this.counters.operations += 1;
    if (this.counters.operations === this.crashAtOperation) {
      this.crash();
      throw new SimulatedPowerLoss('the power was cut during this operation');
    }
  }

  private requireFile(path: string): SimulatedInode {
    const inode = this.names.get(path);
    if (!inode) throw missingEntry(path);
    return inode;
  }

  private requireDirectory(dir: string): void {
    if (!this.directories.has(dir)) throw missingEntry(dir);
  }
}

class SimulatedFileHandle implements StorageFile {
  private closed = false;

  constructor(
    private readonly storage: SimulatedStorage,
    private readonly inode: SimulatedInode,
    private readonly epoch: number,
  ) {}

  async append(bytes: Uint8Array): Promise<void> {
    await this.begin();
    this.storage.appendThroughHandle(this.inode, bytes);
  }

  async datasync(): Promise<void> {
    await this.begin();
    this.storage.datasyncThroughHandle(this.inode);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async begin(): Promise<void> {
    invariant(!this.closed, 'simulated file handle used after close');
    await this.storage.beginHandleOperation(this.epoch);
  }
}

/** One file's bytes, apart from its names, as a disk holds them. */
class SimulatedInode {
  private buffer: Uint8Array = new Uint8Array(256);
  private lengthBytes = 0;
  private durable: Uint8Array = new Uint8Array(0);
  /** Truncated below the durable length since the last sync: the disk holds either version. */
  private durablePrefixChanged = false;

  content(): Uint8Array {
    return this.buffer.subarray(0, this.lengthBytes);
  }

  append(bytes: Uint8Array): void {
    const needed = this.lengthBytes + bytes.length;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.content());
      this.buffer = grown;
    }
    this.buffer.set(bytes, this.lengthBytes);
    this.lengthBytes = needed;
  }

  truncate(sizeBytes: number): void {
    invariant(sizeBytes >= 0 && sizeBytes <= this.lengthBytes, 'simulated truncate only shortens a file');
    if (sizeBytes < this.durable.length) this.durablePrefixChanged = true;
    this.lengthBytes = sizeBytes;
  }

  makeDurable(): void {
    this.durable = this.content().slice();
    this.durablePrefixChanged = false;
  }

  loseUnsyncedBytes(random: SeededRandom): void {
    const survivor = this.durablePrefixChanged
      ? (random.chance(0.5) ? this.content().slice() : this.durable.slice())
      : this.durableWithTornTail(random);
    this.buffer = survivor.length > 0 ? survivor : new Uint8Array(256);
    this.lengthBytes = survivor.length;
    this.durable = survivor.slice();
    this.durablePrefixChanged = false;
  }

  private durableWithTornTail(random: SeededRandom): Uint8Array {
    const unsyncedBytes = this.lengthBytes - this.durable.length;
    const choice = random.int(3);
    const keptBytes = choice === 0 ? 0 : choice === 1 ? unsyncedBytes : random.int(unsyncedBytes + 1);
    const survivor = this.content().slice(0, this.durable.length + keptBytes);
    if (keptBytes > 0 && random.chance(0.25)) {
      survivor.fill(0, this.durable.length + random.int(keptBytes));
    }
    return survivor;
  }
}

function missingEntry(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, ${path}`), { code: 'ENOENT' });
}
