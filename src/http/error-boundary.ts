/**
 * The one error boundary: domain errors become the envelope with their status;
 * framework errors (unknown route, unparsable JSON, validation) are mapped to ours;
 * anything else is logged with context and answered 500 without internals.
 * It must be registered before the routes it covers.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { errorResponse } from './error-envelope.ts';

export function errorBoundary(logError: (line: string) => void) {
  return new Elysia({ name: 'error-boundary' }).onError({ as: 'global' }, ({ code, error, request }) => {
    if (error instanceof DomainError) {
      const parts = { code: error.code, message: error.message, details: error.details, extraBody: error.extraBody, headers: error.headers };
      return errorResponse(request, parts);
    }
    switch (code) {
      case 'NOT_FOUND':
        return errorResponse(request, { code: 'NOT_FOUND', message: `no route for ${request.method} ${new URL(request.url).pathname}` });
      case 'PARSE':
        return errorResponse(request, { code: 'VALIDATION_ERROR', message: 'request body is not valid JSON', details: { body: ['must be valid JSON'] } });
      case 'VALIDATION':
        return errorResponse(request, { code: 'VALIDATION_ERROR', message: 'request failed validation' });
    }
    const description = error instanceof Error ? (error.stack ?? error.message) : String(error);
    logError(`unhandled error on ${request.method} ${new URL(request.url).pathname}: ${description}`);
    return errorResponse(request, { code: 'INTERNAL_ERROR', message: 'internal error' });
  });
}
