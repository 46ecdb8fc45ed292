/**
 * Typed errors for what users can cause. The engine throws these; the one error
 * boundary at the HTTP edge maps `code` to a status and the envelope. Anything that is
 * not a DomainError is a bug and becomes a 500 without internals.
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'INVALID_STATE'
  | 'REQUEST_TIMEOUT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'DAILY_LIMIT_EXCEEDED'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

/** field name -> messages, as the interface's `details` */
export type FieldErrors = Record<string, string[]>;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldErrors,
    /** extra top-level members of the error body, e.g. `usage` next to `error` */
    readonly extraBody?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export function validationError(field: string, message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', 'request failed validation', { [field]: [message] });
}

/** For what must never happen: a broken invariant is a bug, not a user error. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}
