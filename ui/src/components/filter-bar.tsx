/**
 * Filters that live in the address: each change replaces the URL (so Back leaves the
 * page rather than undoing keystrokes) and the page reloads its list from it. Text
 * fields wait until typing pauses.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { route, navigate, withQuery } from '../router.ts';

export interface FilterField {
  key: string;
  label: string;
  /** A select of these values (value, label); otherwise a text field. */
  options?: Array<[string, string]>;
  /** Suggestions for a text field. */
  suggestions?: string[];
  placeholder?: string;
}

const TYPING_PAUSE_MS = 300;

export function FilterBar({ fields }: { fields: FilterField[] }) {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  const set = (key: string, value: string, wait: boolean) => {
    if (timer.current) clearTimeout(timer.current);
    const apply = () => navigate(withQuery({ [key]: value.trim() === '' ? undefined : value, cursor: undefined }), { replace: true });
    if (wait) timer.current = setTimeout(apply, TYPING_PAUSE_MS);
    else apply();
  };
  const query = route.value.query;
  const active = fields.some((field) => query.get(field.key));
  return (
    <form class="filters" role="search" onSubmit={(event) => event.preventDefault()}>
      {fields.map((field) => (
        <label key={field.key}>
          <span>{field.label}</span>
          {field.options ? (
            <select value={query.get(field.key) ?? ''} onChange={(event) => set(field.key, event.currentTarget.value, false)}>
              <option value="">All</option>
              {field.options.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          ) : (
            <TextFilter field={field} urlValue={query.get(field.key) ?? ''} onInput={(value) => set(field.key, value, true)} />
          )}
        </label>
      ))}
      {active && (
        <button type="button" class="link" onClick={() => navigate(withQuery(Object.fromEntries(fields.map((field) => [field.key, undefined]))), { replace: true })}>
          Clear filters
        </button>
      )}
    </form>
  );
}

/** A text field that follows the address unless the user is typing in it. */
function TextFilter({ field, urlValue, onInput }: { field: FilterField; urlValue: string; onInput: (value: string) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const text = useSignal(urlValue);
  useEffect(() => {
    if (document.activeElement !== input.current) text.value = urlValue;
  }, [urlValue]);
  return (
    <>
      <input
        ref={input}
        type="search"
        name={field.key}
        placeholder={field.placeholder}
        list={field.suggestions ? `${field.key}-suggestions` : undefined}
        value={text.value}
        onInput={(event) => {
          text.value = event.currentTarget.value;
          onInput(text.value);
        }}
      />
      {field.suggestions && (
        <datalist id={`${field.key}-suggestions`}>
          {field.suggestions.map((value) => (
            <option key={value} value={value} />
          ))}
        </datalist>
      )}
    </>
  );
}
