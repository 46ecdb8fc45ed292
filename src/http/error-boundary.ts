/**
 * The one error boundary: domain errors become the envelope with their status;
 * framework errors (unknown route, unparsable JSON, validation) are mapped to ours;
 * anything else is logged with context and answered 500 without internals.
 * It must be registered before the routes it covers. Nothing here parses the request
 * URL: a request with an odd Host must still get its envelope, not a crash.
 */
import { Elysia } from 'elysia';
import { DomainError } from '../../actors/domain-error.ts';
import { errorResponse } from './error-envelope.ts';
import { requestPath } from './request-path.ts';

/** `publicUrl`: PUBLIC_URL (absolute `docs_url`) or null (relative `docs_url`). */
export function errorBoundary(logError: (line: string) => void, publicUrl: string | null) {
  const docsBase = publicUrl ?? '';
  return new Elysia({ name: 'error-boundary' }).onError({ as: 'global' }, ({ code, error, request }) => {
    if (error instanceof DomainError) {
      const parts = { code: error.code, message: error.message, details: error.details, extraBody: error.extraBody, headers: error.headers };
      return errorResponse(docsBase, parts);
    }
    switch (code) {
      case 'NOT_FOUND':
        return errorResponse(docsBase, { code: 'NOT_FOUND', message: `no route for ${request.method} ${requestPath(request)}` });
      case 'PARSE':
        return errorResponse(docsBase, { code: 'VALIDATION_ERROR', message: 'request body is not valid JSON', details: { body: ['must be valid JSON'] } });
      case 'VALIDATION':
        return errorResponse(docsBase, { code: 'VALIDATION_ERROR', message: 'request failed validation' });
    }
    const description = error instanceof Error ? (error.stack ?? error.message) : String(error);
    logError(`unhandled error on ${request.method} ${requestPath(request)}: ${description}`);
    return errorResponse(docsBase, { code: 'INTERNAL_ERROR', message: 'internal error' });
  });
}
