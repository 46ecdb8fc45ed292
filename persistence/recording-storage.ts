import type { Storage, StorageFile } from './storage.ts';

/**
 * A Storage decorator that records every operation and lets a test fail chosen ones:
 * count fdatasyncs for group commit, check that old segments are removed only after
 * the snapshot rename, make the third sync fail. Used by tests and by anyone who wants
 * to see what persistence does to the disk.
 */
export type StorageOperationName =
  | 'mkdirp'
  | 'list'
  | 'exists'
  | 'readFile'
  | 'openAppend'
  | 'truncate'
  | 'rename'
  | 'remove'
  | 'fsyncDir'
  | 'append'
  | 'datasync'
  | 'close';

export interface StorageOperation {
  name: StorageOperationName;
  path: string;
  /** For rename, the new path. */
  toPath?: string;
}

export class RecordingStorage implements Storage {
  readonly operations: StorageOperation[] = [];
  /** Runs before each operation reaches the wrapped storage; throw from it to make the operation fail. */
  beforeOperation: ((operation: StorageOperation) => void) | undefined;

  constructor(private readonly inner: Storage) {}

  /** Operations of `name`, on files whose path ends with `pathEnd` when it is given (`.seg`: the log's). */
  count(name: StorageOperationName, pathEnd?: string): number {
    return this.operations.filter((operation) => operation.name === name && (pathEnd === undefined || operation.path.endsWith(pathEnd))).length;
  }

  async mkdirp(dir: string): Promise<void> {
    this.record({ name: 'mkdirp', path: dir });
    return this.inner.mkdirp(dir);
  }

  async list(dir: string): Promise<string[]> {
    this.record({ name: 'list', path: dir });
    return this.inner.list(dir);
  }

  async exists(path: string): Promise<boolean> {
    this.record({ name: 'exists', path });
    return this.inner.exists(path);
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.record({ name: 'readFile', path });
    return this.inner.readFile(path);
  }

  /** Recorded as a read: to the sequence of operations, mapping a file is reading it. */
  async readFinishedFile(path: string): Promise<Uint8Array> {
    this.record({ name: 'readFile', path });
    return this.inner.readFinishedFile(path);
  }

  async openAppend(path: string): Promise<StorageFile> {
    this.record({ name: 'openAppend', path });
    return new RecordingFile(this, path, await this.inner.openAppend(path));
  }

  async truncate(path: string, sizeBytes: number): Promise<void> {
    this.record({ name: 'truncate', path });
    return this.inner.truncate(path, sizeBytes);
  }

  async rename(from: string, to: string): Promise<void> {
    this.record({ name: 'rename', path: from, toPath: to });
    return this.inner.rename(from, to);
  }

  async remove(path: string): Promise<void> {
    this.record({ name: 'remove', path });
    return this.inner.remove(path);
  }

  async fsyncDir(dir: string): Promise<void> {
    this.record({ name: 'fsyncDir', path: dir });
    return this.inner.fsyncDir(dir);
  }

  /** @internal shared with the file wrapper */
  record(operation: StorageOperation): void {
    this.operations.push(operation);
    this.beforeOperation?.(operation);
  }
}

class RecordingFile implements StorageFile {
  constructor(
    private readonly storage: RecordingStorage,
    private readonly path: string,
    private readonly inner: StorageFile,
  ) {}

  async append(bytes: Uint8Array): Promise<void> {
    this.storage.record({ name: 'append', path: this.path });
    return this.inner.append(bytes);
  }

  async datasync(): Promise<void> {
    this.storage.record({ name: 'datasync', path: this.path });
    return this.inner.datasync();
  }

  async close(): Promise<void> {
    this.storage.record({ name: 'close', path: this.path });
    return this.inner.close();
  }
}
