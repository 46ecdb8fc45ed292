/**
 * The end of a `bun -e` script a test spawns to hold something (a lock) until killed:
 * it also exits when its stdin, a pipe from the test process, closes. So a test that fails
 * (or a `--bail` run that stops) before its kill leaves no process behind. Spawn the child
 * with `stdin: 'pipe'`.
 */
export const EXIT_WITH_PARENT = "process.stdin.on('end', () => process.exit(0)); process.stdin.resume();";
