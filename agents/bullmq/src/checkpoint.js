// Where the agent stopped in each queue's event stream, kept in the spool directory so a
// restart resumes there. A position is recorded only once the events read up to it are
// delivered or spooled (at-least-once); the file is replaced atomically (temporary file,
// fsync, rename), so a crash leaves the old positions or the new ones, never half.
import { closeSync, fsyncSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { compareStreamIds } from './limits.js';
import { logger } from './log.js';
import { mkdirPrivate, openPrivate, PRIVATE_FILE_MODE } from './private-files.js';

const log = logger('checkpoint');
const STREAM_ID = /^\d+-\d+$/;

export class Checkpoints {
  /** @param {string} directory @param {string} prefix */
  constructor(directory, prefix) {
    mkdirPrivate(directory);
    // One file per prefix: two agents watching different prefixes may share a spool directory's parent.
    this.path = join(directory, `checkpoints-${encodeURIComponent(prefix)}.json`);
    /** @type {Map<string, string>} */
    this.positions = new Map();
    this.dirty = false;
    this.saving = false;
    let text;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return; // first start
    }
    try {
      const stored = JSON.parse(text);
      for (const [queue, id] of Object.entries(stored.queues ?? {})) {
        if (typeof id === 'string' && STREAM_ID.test(id)) this.positions.set(queue, id);
      }
      log.info(`resuming ${this.positions.size} queues from ${this.path}`);
    } catch (error) {
      log.error(`${this.path} is unreadable (${/** @type {Error} */ (error).message}): every queue is reconciled from its state sets as on a first start`);
    }
  }

  /** @param {string} queue */
  get(queue) {
    return this.positions.get(queue) ?? null;
  }

  /** Moves a queue's position forward (never back). @param {string} queue @param {string} id */
  advance(queue, id) {
    const current = this.positions.get(queue);
    if (current !== undefined && compareStreamIds(id, current) <= 0) return;
    this.positions.set(queue, id);
    this.dirty = true;
  }

  /** Writes the positions when they moved (temporary file, fsync, rename), off the event loop. */
  async save() {
    if (!this.dirty || this.saving) return;
    this.dirty = false;
    this.saving = true;
    const temporary = `${this.path}.tmp`;
    try {
      const file = await open(temporary, 'w', PRIVATE_FILE_MODE);
      try {
        await file.chmod(PRIVATE_FILE_MODE);
        await file.writeFile(this.serialize());
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, this.path);
    } catch (error) {
      this.dirty = true;
      throw error;
    } finally {
      this.saving = false;
    }
  }

  /** The same, blocking: for the last save on shutdown. */
  saveNow() {
    if (!this.dirty) return;
    const temporary = `${this.path}.tmp`;
    const fd = openPrivate(temporary);
    try {
      writeSync(fd, this.serialize());
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
    this.dirty = false;
  }

  serialize() {
    return JSON.stringify({ version: 1, savedAt: new Date().toISOString(), queues: Object.fromEntries(this.positions) });
  }
}
