// @ts-check
/**
 * StrykerJS over the code where a silent break loses data or lets someone in (module map:
 * test/mutation/modules.mjs). Run it with `npm run mutate [-- <module>...]`, which runs one
 * Stryker pass per part of a module with STRYKER_MODULE and STRYKER_PART set; see docs/testing.md, "Test strength".
 *
 * Bun has no Stryker runner on npm, so this uses the command runner with mutation
 * switching: the code is instrumented once in a sandbox copy of the repository, and each
 * mutant is one `bun test` of the module's test files with __STRYKER_ACTIVE_MUTANT__ set.
 * The variable is inherited by the service processes the black-box tests spawn, and those
 * run the sandbox's (instrumented) files because the harness resolves the repository root
 * from its own location.
 */
import { MODULES } from './test/mutation/modules.mjs';

const name = process.env.STRYKER_MODULE ?? 'persistence';
const partIndex = Number(process.env.STRYKER_PART ?? 0);
const module = MODULES[/** @type {keyof typeof MODULES} */ (name)]?.parts[partIndex];
if (!module) throw new Error(`unknown mutation module '${name}' part ${partIndex}; known: ${Object.keys(MODULES).join(', ')}`);
const reportName = `${name}-${partIndex + 1}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  commandRunner: {
    // --bail: a killed mutant stops at its first failing test; only survivors pay the whole run
    command: [
      ...Object.entries(module.env ?? {}).map(([key, value]) => `${key}=${value}`),
      // the BullMQ agent's tests are node's own (`node --test`, which has no --bail in Node 20)
      module.runner === 'node' ? `node --test ${module.tests.join(' ')}` : `node_modules/.bin/bun test --bail --timeout 30000 ${module.tests.join(' ')}`,
    ].join(' '),
  },
  coverageAnalysis: 'off', // the command runner cannot tell which tests cover a mutant
  mutate: module.mutate,
  // the tests the command runs, and what bun needs to run them, must be in the sandbox
  ignorePatterns: ['/reports', '/data', '/.stryker-tmp', '/load'],
  symlinkNodeModules: true,
  tempDirName: `.stryker-tmp/${reportName}`, // one per part, so parts can run side by side
  cleanTempDir: 'always',
  concurrency: 2,
  // a mutant that makes a test hang is a timeout; the budget scales with the dry run's time,
  // generously: on a shared machine a run can take twice as long as the dry run did, and a
  // slow moment must not pass for a hang
  timeoutFactor: 3,
  timeoutMS: 5_000,
  disableTypeChecks: true,
  // Stryker rewrites the sandbox's tsconfig with TypeScript's JS API, which TypeScript 7
  // (native) no longer has; the sandbox is a full copy, so its relative paths need no
  // rewrite. A name that matches no file turns the rewrite off.
  tsconfigFile: 'tsconfig.stryker-no-rewrite.json',
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${reportName}.json` },
  htmlReporter: { fileName: `reports/mutation/${reportName}.html` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  thresholds: { high: 90, low: 80, break: null },
  logLevel: 'info',
  fileLogLevel: 'off',
};
