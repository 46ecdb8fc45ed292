/** Waiting in the tests: a plain sleep, and polling until something holds. */

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it returns something truthy; fails naming `what`, the last value and
 * the tail of `log` (the agent's output, usually).
 * @template T
 * @param {string} what
 * @param {() => Promise<T | undefined | null | false>} check
 * @param {() => string} [log]
 * @returns {Promise<T>}
 */
export async function eventually(what, check, timeoutMs = 20_000, log = () => '') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    /** @type {unknown} */
    let last;
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${String(last instanceof Error ? last.message : JSON.stringify(last)).slice(0, 2000)}\n${log().slice(-4000)}`);
    await sleep(150);
  }
}
