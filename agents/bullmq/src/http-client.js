// The few HTTP calls the agent makes to jobwatch, over Node's fetch.
import { readFileSync } from 'node:fs';

const USER_AGENT = `jobwatch-bullmq/${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}`;

export class NetworkError extends Error {}

export class HttpClient {
  /** @param {string} baseUrl @param {string} apiKey @param {number} [timeoutMs] */
  constructor(baseUrl, apiKey, timeoutMs = 10_000) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
  }

  /**
   * @param {string} method @param {string} path @param {string} [body] JSON text
   * @returns {Promise<{status: number, body: any, retryAfterMs: number | null}>}
   */
  async request(method, path, body) {
    const headers = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json', 'user-agent': USER_AGENT };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await fetch(this.baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      const cause = /** @type {any} */ (error).cause;
      throw new NetworkError(cause?.code ?? cause?.message ?? /** @type {Error} */ (error).message);
    }
    let text;
    try {
      text = await response.text();
    } catch (error) {
      throw new NetworkError(/** @type {Error} */ (error).message);
    }
    let parsed;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text.slice(0, 300);
    }
    return { status: response.status, body: parsed, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
  }

  get(path) {
    return this.request('GET', path);
  }

  post(path, value) {
    return this.request('POST', path, JSON.stringify(value));
  }
}

/** `Retry-After` as seconds or an HTTP date, in ms; null when absent or unreadable. @param {string | null} value */
export function parseRetryAfter(value) {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** `CODE: message` of jobwatch's error envelope, for logs. */
export function errorText(body) {
  const error = body && typeof body === 'object' ? body.error : null;
  if (error && typeof error === 'object') return `${error.code}: ${error.message}`;
  return String(body).slice(0, 300);
}
