import { dirname } from 'node:path';
import { invariant } from './invariant.ts';
import type { SeededRandom } from './seeded-random.ts';
import type { Storage, StorageFile } from './storage.ts';

/**
 * An in-memory disk for simulation tests (deterministic simulation, after TigerBeetle). It keeps
 * what a real disk keeps and loses what a real disk may lose, choosing with a seeded
 * generator so a failing seed replays exactly:
 *
 * - file data is durable up to the last `datasync`; name changes (create, rename,
 *   remove) are durable once `fsyncDir` of their directory returns, and before that
 *   each one, atomically, may or may not survive a crash, in any combination;
 * - `crash()` cuts the power: name changes are kept or undone as above, each file keeps
 *   its durable bytes plus a random prefix of its unsynced bytes (none, all, or a torn
 *   cut), whose end may read back as zeros (a file size that reached the disk before
 *   its data did);
 * - `killProcess()` kills only the process: the next one reads every byte written, even
 *   unsynced ones, which a later power loss may still take;
 * - after either, nothing the crashed process started can touch the disk, and
 *   `restart()` lets the next process in;
 * - with the configured probabilities an append fails after writing a random prefix of
 *   its bytes, and a datasync or fsyncDir fails without making anything durable;
 * - every operation first yields a random number of microtasks, so concurrent callers
 *   interleave differently per seed but identically per replay.
 *
 * Simplifications: directories are durable as soon as they exist (and are never removed:
 * an emptied one stays, listed as readdir would list it), and unsynced bytes never reach the
 * disk out of order (no holes before a surviving byte).
 */
export interface SimulatedFaults {
  writeFailureProbability: number;
  syncFailureProbability: number;
}

export const NO_FAULTS: Readonly<SimulatedFaults> = { writeFailureProbability: 0, syncFailureProbability: 0 };

/** Thrown by every operation from a crash (power loss or process kill) until `restart()`. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

/** An injected I/O failure (the EIO or ENOSPC a real disk may return). */
export class SimulatedIoFault extends Error {
  override readonly name = 'SimulatedIoFault';
}

export type SimulatedCrashKind = 'power-loss' | 'process-kill';

export class SimulatedStorage implements Storage {
  faults: SimulatedFaults;
  readonly counters = { operations: 0, appends: 0, datasyncs: 0, dirSyncs: 0, crashes: 0 };
  private names = new Map<string, SimulatedInode>();
  private durableNames = new Map<string, SimulatedInode>();
  /** Creations, renames and removals not yet made durable by fsyncDir, in call order. */
  private pendingNameChanges: NameChange[] = [];
  private readonly directories = new Set<string>();
  private epoch = 0;
  private down = false;
  private scheduledCrash: { atOperation: number; kind: SimulatedCrashKind } | undefined;

  constructor(
    private readonly random: SeededRandom,
    faults: SimulatedFaults = NO_FAULTS,
  ) {
    this.faults = { ...faults };
  }

  /** True from a crash until restart(): the crashed process can do nothing more. */
  get isDown(): boolean {
    return this.down;
  }

  /** Crashes as the n-th operation from now starts (n >= 1); that operation fails. */
  scheduleCrash(afterOperations: number, kind: SimulatedCrashKind = 'power-loss'): void {
    invariant(afterOperations >= 1, 'a crash is scheduled at least one operation ahead');
    this.scheduledCrash = { atOperation: this.counters.operations + afterOperations, kind };
  }

  /** Power loss: undurable names are undone and unsynced bytes lost or torn. */
  crash(): void {
    this.stopProcess();
    // Each pending name change may or may not have reached the disk, independently.
    for (const change of this.pendingNameChanges) {
      if (this.random.chance(0.5)) applyNameChange(this.durableNames, change);
    }
    this.pendingNameChanges = [];
    const survivors = new Map(this.durableNames);
    for (const inode of new Set(survivors.values())) inode.loseUnsyncedBytes(this.random);
    this.names = survivors;
    this.durableNames = new Map(survivors);
  }

  /**
   * The process dies but the kernel lives: every byte written stays readable, durable
   * or not, so the next process may read (and build on) bytes a later power loss takes.
   */
  killProcess(): void {
    this.stopProcess();
  }

  /** Starts the next process; handles opened before the crash stay dead. */
  restart(): void {
    this.down = false;
  }

  mkdirp(dir: string): Promise<void> {
    return this.operation(() => {
      for (let path = dir; !this.directories.has(path); path = dirname(path)) {
        this.directories.add(path);
        if (dirname(path) === path) break;
      }
    });
  }

  list(dir: string): Promise<string[]> {
    return this.operation(() => {
      this.requireDirectory(dir);
      const entries: string[] = [];
      for (const path of this.names.keys()) {
        if (dirname(path) === dir) entries.push(path.slice(dir.length + 1));
      }
      // subdirectories too, as readdir names them (a data directory's layout holds one per shard)
      for (const path of this.directories) {
        if (path !== dir && dirname(path) === dir) entries.push(path.slice(dir.length + 1));
      }
      return entries.sort();
    });
  }

  exists(path: string): Promise<boolean> {
    return this.operation(() => this.names.has(path) || this.directories.has(path));
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.operation(() => this.requireFile(path).content().slice());
  }

  /** A copy, as `readFile`: the simulated disk has nothing to map. */
  readFinishedFile(path: string): Promise<Uint8Array> {
    return this.readFile(path);
  }

  openAppend(path: string): Promise<StorageFile> {
    return this.operation(() => {
      this.requireDirectory(dirname(path));
      let inode = this.names.get(path);
      if (!inode) {
        inode = new SimulatedInode();
        this.changeName({ kind: 'create', path, inode });
      }
      return new SimulatedFileHandle(this, inode, this.epoch);
    });
  }

  truncate(path: string, sizeBytes: number): Promise<void> {
    return this.operation(() => this.requireFile(path).truncate(sizeBytes));
  }

  rename(from: string, to: string): Promise<void> {
    return this.operation(() => {
      const inode = this.requireFile(from);
      invariant(dirname(from) === dirname(to), 'simulated rename stays within one directory');
      this.changeName({ kind: 'rename', from, to, inode });
    });
  }

  remove(path: string): Promise<void> {
    return this.operation(() => {
      this.requireFile(path);
      this.changeName({ kind: 'remove', path });
    });
  }

  fsyncDir(dir: string): Promise<void> {
    return this.operation(() => {
      this.requireDirectory(dir);
      this.counters.dirSyncs += 1;
      if (this.random.chance(this.faults.syncFailureProbability)) {
        throw new SimulatedIoFault(`simulated fsync failure on directory ${dir}`);
      }
      const stillPending: NameChange[] = [];
      for (const change of this.pendingNameChanges) {
        if (nameChangeDirectory(change) === dir) applyNameChange(this.durableNames, change);
        else stillPending.push(change);
      }
      this.pendingNameChanges = stillPending;
    });
  }

  /** @internal the file handles' way in: same power, crash and interleaving rules. */
  handleOperation<T>(epoch: number, effect: () => T): Promise<T> {
    return this.operation(() => {
      if (epoch !== this.epoch) throw new SimulatedCrash('file handle belongs to a process that crashed');
      return effect();
    });
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

  /**
   * Yields first, so concurrent callers interleave per seed; then checks the power and
   * applies the effect in one synchronous step, so no crash can slip in between the
   * check and the effect and let a dead process write.
   */
  private async operation<T>(effect: () => T): Promise<T> {
    for (let turns = this.random.int(3); turns > 0; turns--) await Promise.resolve();
    if (this.down) throw new SimulatedCrash('the simulated process has crashed');
    this.counters.operations += 1;
    const crash = this.scheduledCrash;
    if (crash && this.counters.operations === crash.atOperation) {
      if (crash.kind === 'power-loss') this.crash();
      else this.killProcess();
      throw new SimulatedCrash(`the process crashed (${crash.kind}) during this operation`);
    }
    return effect();
  }

  private changeName(change: NameChange): void {
    applyNameChange(this.names, change);
    this.pendingNameChanges.push(change);
  }

  private stopProcess(): void {
    this.down = true;
    this.scheduledCrash = undefined;
    this.epoch += 1;
    this.counters.crashes += 1;
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

  append(bytes: Uint8Array): Promise<void> {
    this.assertOpen();
    return this.storage.handleOperation(this.epoch, () => this.storage.appendThroughHandle(this.inode, bytes));
  }

  datasync(): Promise<void> {
    this.assertOpen();
    return this.storage.handleOperation(this.epoch, () => this.storage.datasyncThroughHandle(this.inode));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    invariant(!this.closed, 'simulated file handle used after close');
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

type NameChange =
  | { kind: 'create'; path: string; inode: SimulatedInode }
  | { kind: 'rename'; from: string; to: string; inode: SimulatedInode }
  | { kind: 'remove'; path: string };

/** Each change is atomic on its own, as POSIX promises for rename. */
function applyNameChange(names: Map<string, SimulatedInode>, change: NameChange): void {
  if (change.kind === 'create') names.set(change.path, change.inode);
  if (change.kind === 'remove') names.delete(change.path);
  if (change.kind === 'rename') {
    names.delete(change.from);
    names.set(change.to, change.inode);
  }
}

function nameChangeDirectory(change: NameChange): string {
  return dirname(change.kind === 'rename' ? change.to : change.path);
}

function missingEntry(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, ${path}`), { code: 'ENOENT' });
}
