// Which keys of a job's data, return value and progress hold secrets: their values are
// masked before anything leaves the app's network (bound-json.js applies it while it
// bounds). The rule is jobwatch's own, which masks again on ingest: a key matches when its
// letters and digits, lower-cased, contain a pattern's (`apiKey`, `X-Api-Key` and
// `API_KEY` all match `api_key`); a pattern of three characters or fewer must be a whole
// word of the key instead (`ssn` matches `user_ssn` and `ssnLast4`, not `className`),
// words split at `_`, `-`, `.`, spaces and lower-to-upper case changes. The same cases
// (agents/redaction-cases.json) run against the three agents and the service.

export const DEFAULT_REDACT_KEYS = Object.freeze(['password', 'passwd', 'secret', 'token', 'api_key', 'apikey', 'authorization', 'cookie', 'credit_card', 'card_number', 'ssn']);
/** What a masked value becomes. */
export const REDACTED = '[redacted]';

/** Patterns this short match whole words only: as substrings they hit ordinary names. */
const WORD_PATTERN_CHARS_MAX = 3;
/** Distinct keys whose verdict is remembered: an app inventing keys cannot grow it past this. */
const VERDICTS_MAX = 10_000;

/** @param {string} text */
const compact = (text) => text.toLowerCase().replace(/[^a-z0-9]/g, '');
/** @param {string} key */
const wordsOf = (key) =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);

export class Redactor {
  /** @param {readonly string[]} patterns */
  constructor(patterns = DEFAULT_REDACT_KEYS) {
    const compacted = patterns.map(compact).filter((pattern) => pattern.length > 0);
    this.patterns = [...patterns];
    this.substrings = compacted.filter((pattern) => pattern.length > WORD_PATTERN_CHARS_MAX);
    this.words = new Set(compacted.filter((pattern) => pattern.length <= WORD_PATTERN_CHARS_MAX));
    /** @type {Map<string, boolean>} */
    this.verdicts = new Map();
  }

  /** Whether the value under `key` is masked. @param {string} key */
  matches(key) {
    let verdict = this.verdicts.get(key);
    if (verdict === undefined) {
      const letters = compact(key);
      verdict = this.substrings.some((pattern) => letters.includes(pattern)) || (this.words.size > 0 && wordsOf(key).some((word) => this.words.has(word)));
      if (this.verdicts.size >= VERDICTS_MAX) this.verdicts.clear();
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }
}

/**
 * Job names whose arguments are never sent (`--omit-args`): exact names, or with `*`
 * standing for any run of characters (`billing.*`).
 */
export class OmittedNames {
  /** @param {readonly string[]} names */
  constructor(names = []) {
    this.names = [...names];
    this.exact = new Set(names.filter((name) => !name.includes('*')));
    const globs = names.filter((name) => name.includes('*'));
    this.glob = globs.length === 0 ? null : new RegExp(`^(?:${globs.map((glob) => glob.split('*').map(escapeRegExp).join('.*')).join('|')})$`, 's');
  }

  /** @param {string} name */
  has(name) {
    return this.exact.has(name) || (this.glob !== null && this.glob.test(name));
  }
}

/** @param {string} text */
function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
