/**
 * What a NATS refusal means, told by its JetStream error code rather than by its message
 * text, in one place. The refusals cluster mode acts on are the fence and the revision
 * check: a publish whose expected last subject sequence is stale, and a key-value create on
 * a key that exists or update on a revision that moved (both the same check underneath).
 * Errors may arrive wrapped (`cause`), as a DurabilityError carries what NATS said.
 */
import { JetStreamApiCodes } from '@nats-io/jetstream';

/** The shape of @nats-io/jetstream's JetStreamApiError, matched by shape: a bundled copy of the class would fail `instanceof`. */
interface JetStreamApiErrorLike {
  /** the JetStream error code (`err_code`), e.g. 10071 */
  code: number;
  apiError(): { err_code?: number; code?: number; description?: string };
}

function isJetStreamApiError(error: unknown): error is JetStreamApiErrorLike {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'number' && typeof (error as { apiError?: unknown }).apiError === 'function';
}

/** The JetStream API error in `error` or its chain of causes, if any. */
function jetStreamApiErrorIn(error: unknown): JetStreamApiErrorLike | null {
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    if (isJetStreamApiError(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

const WRONG_LAST_SEQUENCE_CODES: ReadonlySet<number> = new Set([JetStreamApiCodes.StreamWrongLastSequence, JetStreamApiCodes.StreamWrongLastSequenceUnknown]);

/**
 * The expected last sequence (a publish's fence, a key's revision) was stale: another
 * writer got there first. Also what a key-value `create` of an existing key is refused with.
 */
export function isWrongLastSequence(error: unknown): boolean {
  const apiError = jetStreamApiErrorIn(error);
  return apiError !== null && WRONG_LAST_SEQUENCE_CODES.has(apiError.code);
}

/**
 * The subject's last sequence as a wrong-last-sequence refusal names it (the server writes
 * `wrong last sequence: <n>`), so a writer can fence on it without asking; null when the
 * refusal is another or names none.
 */
export function lastSequenceNamedBy(error: unknown): number | null {
  const apiError = jetStreamApiErrorIn(error);
  if (apiError === null || !WRONG_LAST_SEQUENCE_CODES.has(apiError.code)) return null;
  const named = Number(/:\s*(\d+)\s*$/.exec(apiError.apiError().description ?? '')?.[1]);
  return Number.isSafeInteger(named) ? named : null;
}
