/**
 * A page whose code is fetched when it is first shown: a chunk of its own outside the
 * first download (the dashboard's first load keeps to its size budget, ui/build.ts).
 */
import { signal } from '@preact/signals';
import type { ComponentType } from 'preact';
import { ErrorText } from './error-text.tsx';

export function lazyPage(load: () => Promise<ComponentType>): ComponentType {
  const page = signal<ComponentType | null>(null);
  const failure = signal<unknown>(null);
  let loading = false;
  return function LazyPage() {
    if (page.value === null && !loading) {
      loading = true;
      failure.value = null;
      load().then(
        (loaded) => (page.value = loaded),
        (error) => {
          loading = false; // the next visit tries again
          failure.value = error;
        },
      );
    }
    const Page = page.value;
    if (Page !== null) return <Page />;
    return failure.value === null ? <p class="loading">Loading…</p> : <ErrorText error={failure.value} />;
  };
}
