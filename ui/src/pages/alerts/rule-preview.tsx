/**
 * What a rule's condition measures now, asked of the service as the fields change (and
 * again every few seconds while the form is open: the value moves with the jobs), so a
 * threshold can be set against what the system actually does.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../../api/client.ts';
import type { DescribedMeasure } from '../../api/types.ts';
import { ruleFields, type Draft } from './rule-draft.ts';

const PREVIEW_DELAY_MS = 400;
const PREVIEW_EVERY_MS = 10_000;

export function RulePreview({ draft: d }: { draft: Draft }) {
  const preview = useSignal<DescribedMeasure | null>(null);
  const failed = useSignal(false);
  useEffect(() => {
    if (d.connectionId === '') return;
    const ask = () =>
      api<DescribedMeasure>('POST', '/api/alert-rules/preview', { connectionId: d.connectionId, ...ruleFields(d) }).then(
        (measure) => {
          preview.value = measure;
          failed.value = false;
        },
        () => {
          preview.value = null;
          failed.value = true;
        },
      );
    const timer = setTimeout(ask, PREVIEW_DELAY_MS);
    const again = setInterval(ask, PREVIEW_EVERY_MS);
    return () => {
      clearTimeout(timer);
      clearInterval(again);
    };
  }, [d.connectionId, d.kind, d.queue, d.task, d.threshold, d.windowMinutes, d.relativeTo, d.includePaused]);
  return (
    <p class="preview wide" role="status" data-testid="rule-preview">
      {preview.value === null ? (
        <span class="muted">Value now: {failed.value ? 'check the fields' : '…'}</span>
      ) : (
        <>
          Value now: <strong>{preview.value.text}</strong>{' '}
          {preview.value.breached ? <span class="badge state-failed">condition holds</span> : <span class="badge">condition does not hold</span>}
        </>
      )}
    </p>
  );
}
