/**
 * Reloads a page-based list (queues, workers) from the service: at once, when the live
 * stream reports a change it cares about (at most every 2 s), and on a slow timer so
 * time-based figures (rates, health buckets) move on when nothing is sent.
 */
import { useSignal, type Signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { onLive, type LiveBatch } from '../api/stream.ts';

const RELOAD_AFTER_EVENT_MS = 2000;
const RELOAD_EVERY_MS = 30_000;

export function useLiveReload<T>(load: () => Promise<T>, cares: (batch: LiveBatch) => boolean, key: string): { data: Signal<T | null>; error: Signal<unknown>; reload: () => void } {
  const data = useSignal<T | null>(null);
  const error = useSignal<unknown>(null);
  const reloadNow = useRef<() => void>(() => undefined);
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const reload = () =>
      load().then(
        (value) => {
          if (!current) return;
          data.value = value;
          error.value = null;
        },
        (failure) => current && (error.value = failure),
      );
    data.value = null;
    reloadNow.current = () => void reload();
    void reload();
    const stop = onLive((batch) => {
      if (!batch.reset && !cares(batch)) return;
      timer ??= setTimeout(() => {
        timer = null;
        void reload();
      }, batch.reset ? 0 : RELOAD_AFTER_EVENT_MS);
    });
    const interval = setInterval(reload, RELOAD_EVERY_MS);
    return () => {
      current = false;
      stop();
      clearInterval(interval);
      if (timer !== null) clearTimeout(timer);
    };
  }, [key]);
  return { data, error, reload: () => reloadNow.current() };
}
