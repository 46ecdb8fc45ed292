/** A job or worker state as a coloured label (the colour repeats the word, never replaces it). */
export function StateBadge({ state }: { state: string }) {
  return <span class={`badge state-${state}`}>{state}</span>;
}
