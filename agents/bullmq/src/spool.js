// A bounded on-disk queue of event batches for while jobwatch cannot be reached.
//
// One file per batch, `<sequence>-<event count>.json`, written to a temporary name,
// fsynced and renamed, so a crash of the agent leaves whole batches only (files 0600 in a
// 0700 directory: they hold the app's job names and errors). Batches are
// sent oldest first; past the byte bound the oldest are dropped and the drop is logged
// with its count (the newest events say what the queues look like now).
import { closeSync, fsyncSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { logger } from './log.js';
import { mkdirPrivate, openPrivate } from './private-files.js';

const log = logger('spool');
const BATCH_FILE = /^(\d{12})-(\d+)\.json$/;

export class Spool {
  /** @param {string} directory @param {number} bytesMax */
  constructor(directory, bytesMax) {
    this.directory = directory;
    this.bytesMax = bytesMax;
    this.droppedEvents = 0;
    mkdirPrivate(directory);
    /** @type {Array<{sequence: number, count: number, bytes: number}>} oldest first */
    this.files = [];
    for (const name of readdirSync(directory)) {
      const match = BATCH_FILE.exec(name);
      if (match) {
        this.files.push({ sequence: Number(match[1]), count: Number(match[2]), bytes: statSync(join(directory, name)).size });
      } else if (name.endsWith('.tmp')) {
        unlinkSync(join(directory, name)); // a write the agent did not finish
      }
    }
    this.files.sort((a, b) => a.sequence - b.sequence);
    this.events = this.files.reduce((sum, file) => sum + file.count, 0);
    this.bytes = this.files.reduce((sum, file) => sum + file.bytes, 0);
    this.next = this.files.length > 0 ? this.files[this.files.length - 1].sequence + 1 : 1;
    if (this.files.length > 0) log.info(`${this.events} events in ${this.files.length} batches kept from a previous run; sending them first`);
  }

  get isEmpty() {
    return this.files.length === 0;
  }

  /** @param {string[]} encodedEvents JSON texts of ingest events */
  append(encodedEvents) {
    if (encodedEvents.length === 0) return;
    const data = Buffer.from(`[${encodedEvents.join(',')}]`);
    const sequence = this.next++;
    const path = this.path(sequence, encodedEvents.length);
    const fd = openPrivate(`${path}.tmp`);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(`${path}.tmp`, path);
    this.files.push({ sequence, count: encodedEvents.length, bytes: data.length });
    this.events += encodedEvents.length;
    this.bytes += data.length;
    this.enforceBound();
  }

  /** The oldest batch; an unreadable file is dropped and logged. @returns {{sequence: number, events: string[]} | null} */
  oldest() {
    while (this.files.length > 0) {
      const { sequence, count } = this.files[0];
      try {
        const events = JSON.parse(readFileSync(this.path(sequence, count), 'utf8'));
        return { sequence, events: events.map((event) => JSON.stringify(event)) };
      } catch (error) {
        log.error(`dropped ${count} events: batch file ${sequence} unreadable (${/** @type {Error} */ (error).message})`);
        this.droppedEvents += count;
        this.remove(sequence);
      }
    }
    return null;
  }

  /** @param {number} sequence */
  remove(sequence) {
    const index = this.files.findIndex((file) => file.sequence === sequence);
    if (index < 0) return;
    const [file] = this.files.splice(index, 1);
    this.events -= file.count;
    this.bytes -= file.bytes;
    try {
      unlinkSync(this.path(file.sequence, file.count));
    } catch {
      // already gone
    }
  }

  enforceBound() {
    while (this.files.length > 1 && this.bytes > this.bytesMax) {
      const { sequence, count, bytes } = this.files[0];
      this.droppedEvents += count;
      log.error(`spool full (${Math.round(this.bytesMax / 1048576)} MB bound): dropped the ${count} oldest events (${bytes} bytes); ${this.droppedEvents} dropped since start`);
      this.remove(sequence);
    }
  }

  path(sequence, count) {
    return join(this.directory, `${String(sequence).padStart(12, '0')}-${count}.json`);
  }
}
