/**
 * A table of routes (`'GET /api/jobs/:id'` -> a value) and its lookup by a request's method
 * and path, as the app's router matches them: a static segment wins over a parameter
 * (`/api/jobs/bulk/retry` is not `/api/jobs/:id/retry`), and HEAD is looked up as GET.
 * The cluster front (replica-routes.ts) and the shards' front (src/shards/shard-routes.ts)
 * each classify every route in one such table.
 */
interface Pattern<T> {
  method: string;
  segments: string[];
  value: T;
}

export function routeTable<T>(entries: Readonly<Record<string, T>>): (method: string, pathname: string) => T | undefined {
  const patterns: Pattern<T>[] = Object.entries(entries).map(([key, value]) => {
    const [method, path] = key.split(' ') as [string, string];
    return { method, segments: path.split('/'), value };
  });
  return (method, pathname) => {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const segments = pathname.split('/');
    let best: { value: T; parameters: number } | undefined;
    for (const pattern of patterns) {
      if (pattern.method !== wanted || pattern.segments.length !== segments.length) continue;
      let parameters = 0;
      const matches = pattern.segments.every((segment, index) => {
        if (segment.startsWith(':')) {
          parameters += 1;
          return segments[index] !== '';
        }
        return segment === segments[index];
      });
      if (matches && (best === undefined || parameters < best.parameters)) best = { value: pattern.value, parameters };
    }
    return best?.value;
  };
}
