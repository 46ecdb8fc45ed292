/**
 * Masks the values of secret-looking keys in what a job was called with (arguments,
 * result, progress objects) before it is kept: the agents redact before anything leaves
 * the app's network, and the service applies the same rule again on ingest, so a key an
 * agent missed (an old agent, a client of its own) is not stored either.
 *
 * A key matches a pattern when its letters and digits, lower-cased, contain the pattern's
 * (`apiKey`, `X-Api-Key` and `API_KEY` all match `api_key`); a pattern of three characters
 * or fewer must be a whole word of the key instead (`ssn` matches `ssn` and `user_ssn`, not
 * `className`). Words are split at `_`, `-`, `.`, spaces and lower-to-upper case changes.
 * A matching key's value is replaced whole (an object or array under it too) by REDACTED.
 */
export const REDACTED = '[redacted]';

export const DEFAULT_REDACT_KEYS: readonly string[] = ['password', 'passwd', 'secret', 'token', 'api_key', 'apikey', 'authorization', 'cookie', 'credit_card', 'card_number', 'ssn'];

/** Patterns this short match whole words only: as substrings they hit ordinary names. */
const WORD_PATTERN_CHARS_MAX = 3;
/** Distinct keys whose verdict is remembered: a client inventing keys cannot grow it past this. */
const VERDICTS_MAX = 10_000;

const compact = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]/g, '');
const wordsOf = (key: string): string[] =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);

export class KeyRedactor {
  private readonly substrings: string[];
  private readonly words: Set<string>;
  private readonly verdicts = new Map<string, boolean>();

  constructor(readonly patterns: readonly string[]) {
    const compacted = patterns.map(compact).filter((pattern) => pattern.length > 0);
    this.substrings = compacted.filter((pattern) => pattern.length > WORD_PATTERN_CHARS_MAX);
    this.words = new Set(compacted.filter((pattern) => pattern.length <= WORD_PATTERN_CHARS_MAX));
  }

  /** Whether the value under `key` is masked. */
  matches(key: string): boolean {
    let verdict = this.verdicts.get(key);
    if (verdict === undefined) {
      const letters = compact(key);
      verdict = this.substrings.some((pattern) => letters.includes(pattern)) || (this.words.size > 0 && wordsOf(key).some((word) => this.words.has(word)));
      if (this.verdicts.size >= VERDICTS_MAX) this.verdicts.clear();
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }

  /** `value` as JSON text, every matching key's value masked, at any depth. */
  json(value: unknown): string {
    if (this.substrings.length === 0 && this.words.size === 0) return JSON.stringify(value);
    // the replacer is called with array indices as keys too: digits match no pattern of letters
    return JSON.stringify(value, (key, inner: unknown) => (key !== '' && this.matches(key) ? REDACTED : inner));
  }
}
