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

/**
 * The route a path names as the router sees it: Elysia answers `/api/auth/login/` with the
 * `/api/auth/login` handler, so code that decides by path (the cross-site guard, cluster
 * routing) must judge both alike. Trailing slashes are dropped; the root stays `/`.
 */
export function routePath(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}
