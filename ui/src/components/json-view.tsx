/** A JSON value, indented, monospace, copyable; "none" when empty. */
import { CopyButton } from './copy-button.tsx';

export function JsonView({ value }: { value: unknown }) {
  const empty = value === null || value === undefined || (typeof value === 'object' && Object.keys(value).length === 0);
  if (empty) return <span class="muted">none</span>;
  const text = JSON.stringify(value, null, 2);
  return (
    <div class="code-block">
      <CopyButton text={text} />
      <pre>{text}</pre>
    </div>
  );
}
