/**
 * The dashboard's HTTP client: same-origin JSON only (mutations send
 * `content-type: application/json`), errors turned into `ApiError` carrying the
 * envelope's message, and a 401 anywhere but the login itself ends the session.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, string[]>,
  ) {
    super(message);
  }
}

type UnauthorizedHandler = () => void;
let onUnauthorized: UnauthorizedHandler = () => undefined;

/** The session module registers how to react to an expired session (back to sign in). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler): void {
  onUnauthorized = handler;
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  // every POST and PATCH carries a JSON body, even an empty one: the service accepts only application/json
  const payload = method === 'POST' || method === 'PATCH' ? JSON.stringify(body ?? {}) : undefined;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: payload,
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service cannot be reached. Check that it is running; the page retries on your next action.');
  }
  if (response.status === 204) return undefined as T;
  const answer = await response.json().catch(() => null);
  if (response.ok) return answer as T;
  const error = envelopeError(response.status, answer);
  if (response.status === 401 && path !== '/api/auth/login') onUnauthorized();
  throw error;
}

export function envelopeError(status: number, payload: unknown): ApiError {
  const error = (payload as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (error !== undefined && typeof error.message === 'string') {
    return new ApiError(status, String(error.code ?? 'ERROR'), error.message, error.details as Record<string, string[]> | undefined);
  }
  return new ApiError(status, 'HTTP_' + status, `The service answered HTTP ${status} without an explanation.`);
}

/** A query string from the set values only, so URLs and requests stay short. */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The message to show for anything thrown by a request. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = error.details === undefined ? '' : ` (${Object.entries(error.details).map(([field, messages]) => `${field}: ${messages.join(', ')}`).join('; ')})`;
    return error.message + fields;
  }
  return error instanceof Error ? error.message : String(error);
}
