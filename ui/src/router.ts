/**
 * A small router over the History API: the address is the state, so every page and
 * every filter is bookmarkable. Pages read `route.value`; links and filters navigate.
 */
import { signal } from '@preact/signals';

export interface Route {
  path: string;
  query: URLSearchParams;
}

const current = (): Route => ({ path: location.pathname, query: new URLSearchParams(location.search) });

export const route = signal<Route>(current());

addEventListener('popstate', () => {
  route.value = current();
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  route.value = current();
  if (!options.replace) scrollTo(0, 0);
}

/** The current address with some query parameters changed (empty values removed). */
export function withQuery(changes: Record<string, string | undefined>): string {
  const query = new URLSearchParams(route.value.query);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || value === '') query.delete(key);
    else query.set(key, value);
  }
  const text = query.toString();
  return route.value.path + (text === '' ? '' : `?${text}`);
}

/** `/jobs/:id` against `/jobs/abc` gives `{id: 'abc'}`; null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(have[i]!);
    else if (part !== have[i]) return null;
  }
  return params;
}

/** The job list as last seen (with its filters), for the detail page's way back. */
let jobsAddress = '/jobs';
export const rememberJobsAddress = (): void => {
  jobsAddress = location.pathname + location.search;
};
export const lastJobsAddress = (): string => jobsAddress;
