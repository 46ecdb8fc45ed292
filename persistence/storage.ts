/**
 * The file operations persistence needs, and nothing more. Injected (for deterministic
 * simulation) so
 * the same log, snapshot and recovery code runs on real files (FileStorage) and on an
 * in-memory disk that loses unsynced bytes and fails on purpose (SimulatedStorage).
 *
 * Durability contract every implementation follows, as POSIX does:
 * - bytes given to `append` may be lost on a crash until `datasync` on that handle
 *   resolves;
 * - a created, renamed or removed name may be undone by a crash until `fsyncDir` on
 *   its directory resolves.
 */
export interface StorageFile {
  /** Appends all bytes at the end of the file (retrying short writes). */
  append(bytes: Uint8Array): Promise<void>;
  /** Makes the file's data durable (fdatasync). */
  datasync(): Promise<void>;
  close(): Promise<void>;
}

export interface Storage {
  mkdirp(dir: string): Promise<void>;
  /** Names (not paths) of the entries in `dir`. */
  list(dir: string): Promise<string[]>;
  exists(path: string): Promise<boolean>;
  readFile(path: string): Promise<Uint8Array>;
  /**
   * The bytes of a file nobody changes any more (a finished snapshot: written under another
   * name, then renamed), possibly mapped rather than read: its pages then come from the page
   * cache as they are touched, with no buffer of the file's size to fill first. The file may
   * be removed while the bytes are in use; it must not be truncated or rewritten.
   */
  readFinishedFile(path: string): Promise<Uint8Array>;
  /** Opens for appending, creating the file when missing. */
  openAppend(path: string): Promise<StorageFile>;
  truncate(path: string, sizeBytes: number): Promise<void>;
  /** Atomically replaces `to` when it exists. */
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  /** Makes the directory's entries (creations, renames, removals) durable. */
  fsyncDir(dir: string): Promise<void>;
}
