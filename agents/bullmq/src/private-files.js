// The spool directory holds job names, errors and stack traces of the app: the agent's
// alone. Directories are created 0700 and files 0600 whatever the umask, and at start the
// tree is tightened, so a spool written by an older version (0755, 0644) is fixed, as
// jobwatch does with its data directory.
import { chmodSync, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
const SHARED_BITS = 0o077;
const STICKY_BIT = 0o1000;

/** `mkdir -p` whose new directories are 0700 (a umask only takes bits away). @param {string} dir */
export function mkdirPrivate(dir) {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Opens a file for writing that is 0600 afterwards, also when it existed with another mode. @param {string} path @returns {number} fd */
export function openPrivate(path) {
  const fd = openSync(path, 'w', PRIVATE_FILE_MODE);
  fchmodSync(fd, PRIVATE_FILE_MODE);
  return fd;
}

/**
 * Removes group and other access from `root` and everything under it (symbolic links are
 * neither followed nor changed). A shared directory (sticky, such as /tmp) is left as it
 * is: it is not the agent's to close. Returns lines for the log, none when nothing changed.
 * @param {string} root
 * @returns {string[]}
 */
export function tightenPrivateTree(root) {
  const changed = [];
  const failed = [];
  const walk = (path) => {
    let children = [];
    try {
      const stats = lstatSync(path);
      if (stats.isSymbolicLink()) return;
      const mode = stats.mode & 0o7777;
      if (path === root && stats.isDirectory() && (mode & STICKY_BIT) !== 0) {
        failed.push(`${root} is a shared directory (mode 0${mode.toString(8)}): its own mode is left as it is; give the agent a directory of its own`);
      } else if ((mode & SHARED_BITS) !== 0) {
        chmodSync(path, mode & ~SHARED_BITS);
        changed.push(`${path === root ? '.' : path.slice(root.length + 1)} 0${mode.toString(8)} -> 0${(mode & ~SHARED_BITS).toString(8)}`);
      }
      if (stats.isDirectory()) children = readdirSync(path);
    } catch (error) {
      if (/** @type {any} */ (error).code !== 'ENOENT') failed.push(`could not tighten ${path} (${/** @type {Error} */ (error).message})`);
    }
    for (const name of children) walk(join(path, name));
  };
  walk(root);
  const lines = [];
  if (changed.length > 0) {
    const more = changed.length > 10 ? `, and ${changed.length - 10} more` : '';
    lines.push(`removed group/other access from ${changed.length} path(s) under ${root} (job names, errors and stack traces are kept there): ${changed.slice(0, 10).join(', ')}${more}`);
  }
  return [...lines, ...failed.slice(0, 10)];
}
