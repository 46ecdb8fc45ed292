/**
 * `flock(2)` through Bun's FFI: an advisory lock the kernel drops when the holding
 * process dies, however it dies (as LevelDB and SQLite lock their files). A pid check
 * cannot do that: a SIGKILLed process lingers as a zombie until its parent reaps it, and
 * `kill(pid, 0)` calls it alive.
 */
import { dlopen, FFIType, read, type Pointer } from 'bun:ffi';

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const EWOULDBLOCK = process.platform === 'darwin' ? 35 : 11;
const EINTR = 4;

const LIBC_CANDIDATES =
  process.platform === 'darwin' ? ['/usr/lib/libSystem.B.dylib'] : ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1', 'libc.so'];
const ERRNO_SYMBOL = process.platform === 'darwin' ? '__error' : '__errno_location';

interface Libc {
  flock(fd: number, operation: number): number;
  errno(): number;
}

let libc: Libc | undefined;

function loadLibc(): Libc {
  if (libc !== undefined) return libc;
  const failures: string[] = [];
  for (const name of LIBC_CANDIDATES) {
    try {
      const { symbols } = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [ERRNO_SYMBOL]: { args: [], returns: FFIType.ptr },
      });
      const errnoPointer = symbols[ERRNO_SYMBOL] as () => Pointer | null;
      libc = {
        flock: (fd, operation) => symbols.flock(fd, operation),
        errno: () => {
          const pointer = errnoPointer();
          return pointer === null ? 0 : read.i32(pointer, 0);
        },
      };
      return libc;
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`cannot load the C library to lock the data directory (${failures.join('; ')})`);
}

/** True when the exclusive lock was taken; false when another open file holds it. */
export function tryLockExclusive(fd: number): boolean {
  const c = loadLibc();
  for (;;) {
    if (c.flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
    const errno = c.errno();
    if (errno === EINTR) continue;
    if (errno === EWOULDBLOCK) return false;
    throw new Error(`flock failed (errno ${errno})`);
  }
}

export function unlock(fd: number): void {
  loadLibc().flock(fd, LOCK_UN);
}
