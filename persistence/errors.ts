/**
 * The two ways persistence tells the engine "no": the data on disk cannot be trusted
 * to start from, or a write the engine asked for did not become durable. Both carry a
 * stable code so the process entry and the error boundary can react without matching
 * on message text.
 */

/** Recovery found damage it will not repair on its own; the message names the file and the operator's options. */
export class RecoveryRefusedError extends Error {
  override readonly name = 'RecoveryRefusedError';
  readonly code = 'RECOVERY_REFUSED';
}

/** A log write or sync failed: nothing in flight is acknowledged and the store accepts no more appends. */
export class DurabilityError extends Error {
  override readonly name = 'DurabilityError';
  readonly code = 'DURABILITY_FAILED';
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
