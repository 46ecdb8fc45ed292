/** The DomainError a synchronous step throws; any other outcome fails the test. */
import { DomainError } from '../../actors/domain-error.ts';

export function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}
