// Jittered exponential backoff that starts over after a success, so many agents
// retrying against one jobwatch do not retry in step.
export class Backoff {
  /** @param {{baseMs?: number, capMs?: number, random?: () => number}} [options] */
  constructor({ baseMs = 250, capMs = 30_000, random = Math.random } = {}) {
    this.baseMs = baseMs;
    this.capMs = capMs;
    this.random = random;
    this.failures = 0;
  }

  /** Half the exponential step plus a random half; a server's Retry-After is a floor. @param {number | null} [retryAfterMs] */
  nextDelayMs(retryAfterMs = null) {
    const step = Math.min(this.capMs, this.baseMs * 2 ** this.failures);
    this.failures += 1;
    const delay = step / 2 + this.random() * (step / 2);
    return retryAfterMs != null ? Math.max(delay, retryAfterMs) : delay;
  }

  reset() {
    this.failures = 0;
  }
}
