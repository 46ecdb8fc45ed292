/**
 * What `npm run mutate` mutates, module by module, and the test files that cover it.
 * With Stryker's command runner every mutant runs one whole test command, so a module is
 * split into parts, each with only the tests that exercise its files: that keeps a full
 * run under 30 minutes on a 2-core machine. When a new test covers one of these files,
 * add it to the part's `tests`.
 *
 * Bun runs the files in name order and `--bail` stops at the first failure, so a killed
 * mutant costs only the tests up to the one that catches it. `env` is set for the command.
 * `mutate` entries are Stryker globs; `file.ts:from-to` limits a file to those lines
 * (used where only part of a file is in scope, e.g. retention inside the connection actor).
 */
const P = 'test/persistence';

export const MODULES = {
  persistence: {
    what: 'log, frames, snapshots, recovery, data-directory lock',
    // not mutated: the simulation's own tools (simulated-storage, recording-storage, seeded-random)
    parts: [
      { mutate: ['persistence/data-dir-lock.ts'], tests: [`${P}/data-dir-lock.test.ts`] },
      {
        mutate: [
          'persistence/frame.ts',
          'persistence/file-names.ts',
          'persistence/log-scan.ts',
          'persistence/recovery.ts',
          'persistence/recovery-assessment.ts',
          'persistence/recovery-decisions.ts',
          'persistence/errors.ts',
          'persistence/invariant.ts',
        ],
        tests: [
          `${P}/frame.test.ts`,
          `${P}/frame-edges.test.ts`,
          `${P}/log-refusals.test.ts`,
          `${P}/names-errors-decisions.test.ts`,
          `${P}/recovery.test.ts`,
          `${P}/recovery-details.test.ts`,
          `${P}/recovery-releases-input.test.ts`,
          `${P}/snapshot-integrity.test.ts`,
        ],
      },
      { mutate: ['persistence/snapshot-file.ts'], tests: [`${P}/snapshot-integrity.test.ts`, `${P}/snapshot.test.ts`, `${P}/recovery.test.ts`] },
      {
        mutate: ['persistence/log-writer.ts', 'persistence/durable-store.ts', 'persistence/file-storage.ts', 'persistence/record-codec.ts'],
        // the simulation with 15 seeds per fsync policy instead of up to 200: every seed runs for every mutant
        env: { PERSISTENCE_SIM_SEEDS: '15' },
        tests: [
          `${P}/durable-store-edges.test.ts`,
          `${P}/durable-store-log.test.ts`,
          `${P}/file-storage.test.ts`,
          `${P}/snapshot.test.ts`,
          `${P}/recovery.test.ts`,
          `${P}/recovery-releases-input.test.ts`,
          `${P}/simulation.test.ts`,
        ],
      },
    ],
  },
  auth: {
    what: 'accounts, sessions, login and its limiter, session cookie and API-key checks',
    // every login hashes a password (argon2id), so these route tests are the slow ones
    parts: [
      {
        mutate: ['actors/accounts/accounts-actor.ts', 'actors/accounts/secrets.ts', 'src/http/dashboard-auth.ts', 'src/http/api-key.ts'],
        tests: ['test/routes/auth.test.ts', 'test/routes/connections.test.ts', 'test/routes/time-boundaries.test.ts'],
      },
      {
        mutate: ['actors/accounts/login-limiter.ts', 'actors/services/account-service.ts', 'src/routes/auth.ts', 'src/routes/users.ts'],
        tests: ['test/routes/auth.test.ts', 'test/routes/time-boundaries.test.ts'],
      },
    ],
  },
  ingest: {
    what: 'event validation, dedup keys and cache, daily quota, the ingest decision',
    parts: [
      {
        mutate: ['actors/ingest/*.ts', '!actors/ingest/dedup-key.ts', 'actors/services/ingest-service.ts'],
        tests: ['test/routes/ingest-envelope.test.ts', 'test/routes/ingest-event-rules.test.ts'],
      },
      {
        mutate: [
          'actors/ingest/dedup-key.ts',
          'actors/connection/dedup-cache.ts',
          'actors/connection/daily-quota.ts',
          'actors/connection/batch-ids.ts',
          'actors/connection/connection-actor.ts:73-120',
        ],
        tests: ['test/actors/dedup-cache.test.ts', 'test/actors/ingest-decision.test.ts', 'test/routes/ingest-dedup-quota.test.ts'],
      },
    ],
  },
  retention: {
    what: 'expiry of jobs, commands and workers; the retention and snapshot timers of the running service',
    parts: [
      {
        mutate: [
          'actors/connection/connection-actor.ts:176-186',
          'actors/connection/command-queue.ts:57-62',
          'actors/engine.ts:113-115',
          'src/server.ts:84-101',
        ],
        tests: ['test/routes/time-boundaries.test.ts', 'test/routes/job-actions.test.ts', 'test/server/service-timers.test.ts'],
      },
    ],
  },
};
