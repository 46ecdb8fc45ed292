/**
 * The error answers of each operation: which codes it can give, and the envelope of
 * each status with exactly those codes. Codes that come from the edge rather than the
 * route (a malformed Host, the cross-site guard, the body reader, authentication) are
 * derived here from what the operation is, so the table in operations.ts lists only a
 * route's own codes.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../../actors/domain-error.ts';
import { STATUS_OF } from '../http/error-envelope.ts';
import { literals } from '../routes/list-params.ts';
import { Usage } from './response-models.ts';

/** `sessionOrApiKey`: either one (a marker from the dashboard or from a CI step) */
export type Auth = 'apiKey' | 'session' | 'sessionOrApiKey' | 'metricsToken' | 'none';

export interface ErrorSources {
  method: string;
  auth: Auth;
  /** the route reads a JSON body (bodyReader): size cap, deadline, content type, JSON */
  readsBody: boolean;
  /** the route's own codes */
  errors: readonly ErrorCode[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function errorCodesOf({ method, auth, readsBody, errors }: ErrorSources): ErrorCode[] {
  const codes = new Set<ErrorCode>(['VALIDATION_ERROR', 'INTERNAL_ERROR']); // a malformed Host is a 400 everywhere
  if (auth !== 'none') codes.add('UNAUTHORIZED');
  // the cross-site guard: a mutating request that carries the session cookie must be JSON from this origin
  if (!SAFE_METHODS.has(method)) for (const code of ['UNSUPPORTED_MEDIA_TYPE', 'FORBIDDEN'] as const) codes.add(code);
  if (readsBody) for (const code of ['PAYLOAD_TOO_LARGE', 'REQUEST_TIMEOUT', 'UNSUPPORTED_MEDIA_TYPE'] as const) codes.add(code);
  for (const code of errors) codes.add(code);
  return [...codes];
}

const FieldErrors = Type.Record(Type.String(), Type.Array(Type.String()), { description: 'field name -> its messages' });

/** `{error:{code,message,docs_url,details?}}` with the given codes; `usage` beside it for DAILY_LIMIT_EXCEEDED. */
export function errorEnvelope(codes: readonly ErrorCode[]): TSchema {
  const error = Type.Object(
    {
      code: literals(codes),
      message: Type.String(),
      docs_url: Type.String({ description: '`/docs/errors#<code>`, absolute under PUBLIC_URL when set' }),
      details: Type.Optional(FieldErrors),
    },
    { additionalProperties: false },
  );
  const options = { additionalProperties: false, description: codes.map((code) => `\`${code}\``).join(', ') };
  return codes.includes('DAILY_LIMIT_EXCEEDED') ? Type.Object({ error, usage: Type.Optional(Usage) }, options) : Type.Object({ error }, options);
}

/** The codes grouped by their HTTP status. */
export function codesByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = STATUS_OF[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}
