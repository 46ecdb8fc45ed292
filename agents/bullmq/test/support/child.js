/**
 * A child process whose stdout and stderr are kept, in arrival order, for the tests'
 * assertions and failure messages: redis-server, the fixture app's worker, jobwatch, the
 * agent. Every one still running when the test process ends is killed.
 */
import { spawn } from 'node:child_process';

/** @type {Set<ChildOutput>} */
const live = new Set();
process.on('exit', () => {
  for (const child of live) child.process.kill('SIGKILL');
});

export class ChildOutput {
  /** @param {string[]} command @param {{ cwd?: string, env?: NodeJS.ProcessEnv }} [options] */
  constructor(command, options = {}) {
    const [program, ...args] = command;
    this.process = spawn(/** @type {string} */ (program), args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.text = '';
    /** @type {number | null} */
    this.exitCode = null;
    /** @type {Array<() => void>} */
    this.waiters = [];
    live.add(this);
    const append = (/** @type {Buffer} */ chunk) => {
      this.text += chunk.toString('utf8');
      this.notify();
    };
    this.process.stdout?.on('data', append);
    this.process.stderr?.on('data', append);
    /** @type {Promise<number>} */
    this.exited = new Promise((resolve) => {
      this.process.on('error', (error) => {
        this.text += `\n(could not start ${program}: ${error.message})\n`;
      });
      this.process.on('close', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : 1);
        live.delete(this);
        this.notify();
        resolve(this.exitCode);
      });
    });
  }

  get pid() {
    return /** @type {number} */ (this.process.pid);
  }

  /** Everything the process printed so far. */
  get output() {
    return this.text;
  }

  /** The first match of `pattern` in the output; rejects when the process exits first or on timeout. @param {RegExp} pattern */
  async waitFor(pattern, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.text.match(pattern);
      if (match) return match;
      if (this.exitCode !== null) throw new Error(`process exited (${this.exitCode}) before printing ${pattern}; output:\n${this.text}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}; output:\n${this.text}`);
      await new Promise((wake) => {
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          wake(undefined);
        });
      });
    }
  }

  /** SIGTERM and wait for the exit; SIGKILL (and the timeout's error) when it hangs. */
  async stop(timeoutMs = 20_000) {
    if (this.exitCode !== null) return this.exitCode;
    this.process.kill('SIGTERM');
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`process ${this.pid} did not exit within ${timeoutMs} ms of SIGTERM; output:\n${this.text}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } catch (error) {
      this.process.kill('SIGKILL');
      await this.exited;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL: no chance to flush or save anything. */
  async kill() {
    if (this.exitCode !== null) return this.exitCode;
    this.process.kill('SIGKILL');
    return this.exited;
  }

  notify() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
