/** The error body of the interface, `{error:{code,message,docs_url,details?}}`, and statuses. */
import type { ErrorCode, FieldErrors } from '../../actors/domain-error.ts';

export const STATUS_OF: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_STATE: 409,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  DAILY_LIMIT_EXCEEDED: 429,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export interface ErrorResponseParts {
  code: ErrorCode;
  message: string;
  details?: FieldErrors;
  extraBody?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * `docsBase` is PUBLIC_URL or '' (a relative `docs_url`). Never the request's Host: a
 * client-chosen header must not end up in our answers, and an unparsable one must not
 * turn an error answer into a crash.
 */
export function errorResponse(docsBase: string, parts: ErrorResponseParts): Response {
  const error: Record<string, unknown> = {
    code: parts.code,
    message: parts.message,
    docs_url: `${docsBase}/docs/errors#${parts.code}`,
  };
  if (parts.details !== undefined) error.details = parts.details;
  return new Response(JSON.stringify({ error, ...parts.extraBody }), {
    status: STATUS_OF[parts.code],
    headers: { 'content-type': 'application/json', ...parts.headers },
  });
}
