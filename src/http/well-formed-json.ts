/**
 * Whether a parsed request body holds a string that is not well-formed Unicode: a lone
 * surrogate, which only a `\uD800`-style escape can produce (the body itself must be valid
 * UTF-8). The log and snapshots store strings as UTF-8, where a lone surrogate cannot be
 * written: kept as is, the live state would differ from the state after a restart (found
 * by the fuzz suite), and dedup would fail after it. Such bodies are refused, not
 * repaired: what is acknowledged is exactly what is kept.
 */

/** Escaped surrogates (a pair or not) are rare; bodies without one skip the walk. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

export function mayHoldLoneSurrogates(jsonText: string): boolean {
  return ESCAPED_SURROGATE.test(jsonText);
}

/** The first string or key of `value` that is not well-formed, as found; null when all are. */
export function firstIllFormedString(value: unknown): string | null {
  // explicit stack: a body may nest far deeper than the call stack allows
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (!item.isWellFormed()) return item;
    } else if (Array.isArray(item)) {
      stack.push(...item);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        if (!key.isWellFormed()) return key;
        stack.push(child);
      }
    }
  }
  return null;
}
