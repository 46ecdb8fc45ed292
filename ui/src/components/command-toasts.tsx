/** The commands this page asked for and what became of each, in the corner of every page until dismissed. */
import { dismiss, outcomeText, tracked } from '../lib/command-tracker.ts';

export function CommandToasts() {
  if (tracked.value.length === 0) return null;
  return (
    <section class="toasts" aria-live="polite" aria-label="Commands asked">
      {tracked.value.map((each) => {
        const status = each.note !== null ? 'done' : (each.command?.status ?? 'pending');
        return (
          <div key={each.key} class={`toast toast-${status}`} role="status">
            <strong>{each.label}</strong>
            <span>{each.note ?? (each.command === null ? 'requested, waiting for the agent' : outcomeText(each.command))}</span>
            <button type="button" class="link" onClick={() => dismiss(each.key)} aria-label={`Dismiss ${each.label}`}>
              Dismiss
            </button>
          </div>
        );
      })}
    </section>
  );
}
