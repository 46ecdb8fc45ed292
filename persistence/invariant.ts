/**
 * Assertions for what must never happen, checked in production code rather than only in tests.
 * A failed invariant is a bug in
 * this process, not something a user or the disk caused, so it is a plain Error with a
 * recognisable name rather than a domain error with a status.
 */
export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
}

export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}
