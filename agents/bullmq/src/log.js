// One line per message on stderr, with time, level and the part of the agent that speaks,
// so an operator can grep a log without a logging library.
const LEVELS = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };
let threshold = LEVELS.INFO;

/** @param {string} level one of DEBUG, INFO, WARNING, ERROR */
export function setLogLevel(level) {
  threshold = LEVELS[level] ?? LEVELS.INFO;
}

/** @param {string} part */
export function logger(part) {
  const write = (level, message) => {
    if (LEVELS[level] < threshold) return;
    process.stderr.write(`${new Date().toISOString()} ${level} jobwatch_bullmq.${part}: ${message}\n`);
  };
  return {
    debug: (message) => write('DEBUG', message),
    info: (message) => write('INFO', message),
    warn: (message) => write('WARNING', message),
    error: (message) => write('ERROR', message),
  };
}
