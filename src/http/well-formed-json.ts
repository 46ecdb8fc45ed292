/**
 * Strings of a parsed request body made well-formed: a lone surrogate (which only a
 * `\uD800`-style escape can produce, since the body itself must be valid UTF-8) becomes
 * U+FFFD. The log and snapshots store strings as UTF-8, where a lone surrogate cannot be
 * written: kept as is, the live state would differ from the state after a restart (found
 * by the fuzz suite). Replacing it on the way in makes what is acknowledged exactly what
 * is kept, as in any UTF-8 store.
 */

/** Escaped surrogates (a pair or not) are rare; bodies without one skip the walk. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

export function mayHoldLoneSurrogates(jsonText: string): boolean {
  return ESCAPED_SURROGATE.test(jsonText);
}

/** Replaces lone surrogates in every string and key of `value`, in place where it can. */
export function wellFormedJson(value: unknown): unknown {
  const root = { value };
  // explicit stack: a body may nest far deeper than the call stack allows
  const stack: Array<Record<string, unknown> | unknown[]> = [root];
  for (let container = stack.pop(); container !== undefined; container = stack.pop()) {
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index++) container[index] = visit(container[index], stack);
      continue;
    }
    for (const key of Object.keys(container)) {
      const child = visit(container[key], stack);
      if (key.isWellFormed()) container[key] = child;
      else {
        delete container[key];
        container[key.toWellFormed()] = child;
      }
    }
  }
  return root.value;
}

function visit(value: unknown, stack: Array<Record<string, unknown> | unknown[]>): unknown {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (value !== null && typeof value === 'object') stack.push(value as Record<string, unknown> | unknown[]);
  return value;
}
