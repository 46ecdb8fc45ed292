/**
 * The path of a request, without the query, read from `request.url` as text. Bun builds
 * that URL from the client's Host header, so `new URL(request.url)` throws for a Host
 * such as `[`; code that answers errors must not depend on it.
 */
export function requestPath(request: Request): string {
  const url = request.url;
  const authorityStart = url.indexOf('//');
  const pathStart = authorityStart === -1 ? 0 : url.indexOf('/', authorityStart + 2);
  if (pathStart === -1) return '/';
  const queryStart = url.indexOf('?', pathStart);
  return url.slice(pathStart, queryStart === -1 ? undefined : queryStart);
}
