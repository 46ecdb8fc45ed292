/** What an empty page says: what is missing and what to do next. */
import type { ComponentChildren } from 'preact';

export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <strong>{title}</strong>
      {children && <div>{children}</div>}
    </div>
  );
}
