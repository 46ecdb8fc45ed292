/** Copies a text; the Clipboard API needs a secure context, so plain HTTP falls back to a selection copy. */
import { useSignal } from '@preact/signals';

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const copied = useSignal(false);
  const onClick = () =>
    copyText(text).then(() => {
      copied.value = true;
      setTimeout(() => (copied.value = false), 1500);
    });
  return (
    <button type="button" class="small" onClick={onClick} aria-live="polite">
      {copied.value ? 'Copied' : label}
    </button>
  );
}
