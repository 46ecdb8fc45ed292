// One line per message on stderr, with time, level and the part of the agent that speaks,
// so an operator can grep a log without a logging library. Messages carry names from
// Redis and jobwatch (queue names, job ids, errors): their control characters are
// written escaped, so no name can end a line and forge the next one.
const LEVELS = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };
let threshold = LEVELS.INFO;
// C0 and C1 controls, DEL, and the two Unicode line separators
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** @param {string} level one of DEBUG, INFO, WARNING, ERROR */
export function setLogLevel(level) {
  threshold = LEVELS[level] ?? LEVELS.INFO;
}

/** `text` with every control character written as an escape (`\n`, `\x1b`, `\u2028`). @param {string} text */
export function printable(text) {
  return text.replace(CONTROL, (char) => SHORT[char] ?? (char.charCodeAt(0) < 0x100 ? `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${char.charCodeAt(0).toString(16)}`));
}

/** @param {string} part */
export function logger(part) {
  const write = (level, message) => {
    if (LEVELS[level] < threshold) return;
    process.stderr.write(`${new Date().toISOString()} ${level} jobwatch_bullmq.${part}: ${printable(String(message))}\n`);
  };
  return {
    debug: (message) => write('DEBUG', message),
    info: (message) => write('INFO', message),
    warn: (message) => write('WARNING', message),
    error: (message) => write('ERROR', message),
  };
}
