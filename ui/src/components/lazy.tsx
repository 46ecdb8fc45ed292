/** A part of the dashboard loaded when first shown: "Loading…" meanwhile, and a way to retry when the load fails. */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

export function Lazy<Module>({ load, render }: { load: () => Promise<Module>; render: (module: Module) => ComponentChildren }) {
  const loaded = useSignal<Module | null>(null);
  const failed = useSignal(false);
  const attempt = () => {
    failed.value = false;
    load().then((module) => (loaded.value = module), () => (failed.value = true));
  };
  useEffect(attempt, [load]);
  if (failed.value) {
    return (
      <p class="error" role="alert">
        This page could not be loaded (is the service reachable?).{' '}
        <button type="button" class="link" onClick={attempt}>
          Try again
        </button>
      </p>
    );
  }
  return loaded.value === null ? <p class="loading">Loading…</p> : <>{render(loaded.value)}</>;
}
