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
// Stryker disable next-line ConditionalExpression,StringLiteral: the macOS value; the tests run on Linux
const EWOULDBLOCK = process.platform === 'darwin' ? 35 : 11;
const EINTR = 4;

const LIBC_CANDIDATES =
  // Stryker disable next-line ConditionalExpression,ArrayDeclaration,StringLiteral: the macOS library and the musl fallbacks; on the glibc Linux the tests run on, libc.so.6 loads first
  process.platform === 'darwin' ? ['/usr/lib/libSystem.B.dylib'] : ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1', 'libc.so'];
// Stryker disable next-line ConditionalExpression,StringLiteral: the macOS symbol; the tests run on Linux
const ERRNO_SYMBOL = process.platform === 'darwin' ? '__error' : '__errno_location';

interface Libc {
  flock(fd: number, operation: number): number;
  errno(): number;
}

let libc: Libc | undefined;

function loadLibc(): Libc {
  // Stryker disable next-line ConditionalExpression: loading again gives the same functions; the cache only saves the work
  if (libc !== undefined) return libc;
  // Stryker disable ArrayDeclaration,BlockStatement,StringLiteral: what follows a failed load is reached only when a candidate does not load, which libc.so.6 does on the test machines
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
          // Stryker disable next-line ConditionalExpression: __errno_location never returns null; the check keeps a broken libc from crashing the read
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

// Stryker restore ArrayDeclaration,BlockStatement,StringLiteral
/** True when the exclusive lock was taken; false when another open file holds it. */
export function tryLockExclusive(fd: number): boolean {
  const c = loadLibc();
  for (;;) {
    if (c.flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
    const errno = c.errno();
    // Stryker disable next-line ConditionalExpression: a non-blocking flock does not wait, so no test can have a signal interrupt it (true and !== loop forever: timeouts)
    if (errno === EINTR) continue;
    if (errno === EWOULDBLOCK) return false;
    throw new Error(`flock failed (errno ${errno})`);
  }
}

export function unlock(fd: number): void {
  loadLibc().flock(fd, LOCK_UN);
}
