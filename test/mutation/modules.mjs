/**
 * What `npm run mutate` mutates, module by module, and the test files that cover it.
 * With Stryker's command runner every mutant runs one whole test command, so a module is
 * split into parts, each with only the tests that exercise its files: that keeps a full
 * run under 30 minutes on a 2-core machine. When a new test covers one of these files,
 * add it to the part's `tests`.
 *
 * Bun runs the files in name order and `--bail` stops at the first failure, so a killed
 * mutant costs only the tests up to the one that catches it. `env` is set for the command;
 * `runner: 'node'` runs the part's tests with `node --test` instead (the BullMQ agent's).
 * `mutate` entries are Stryker globs; `file.ts:from-to` limits a file to those lines
 * (used where only part of a file is in scope, e.g. retention inside the connection actor).
 * Such ranges are found from the source text (`block`, `lines`), so they follow the code
 * when lines move instead of silently mutating whatever now sits at fixed numbers.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const P = 'test/persistence';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `file:a-b` from the first line containing `first` (after the line containing `after`, if
 * given) to the next line containing `last` (inclusive).
 */
function lines(file, first, last = first, after = '') {
  const text = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const start = after === '' ? 0 : text.findIndex((line) => line.includes(after));
  if (start < 0) throw new Error(`mutation scope: '${after}' not found in ${file}`);
  const from = text.findIndex((line, index) => index >= start && line.includes(first));
  if (from < 0) throw new Error(`mutation scope: '${first}' not found in ${file}`);
  const to = text.findIndex((line, index) => index >= from && line.includes(last));
  if (to < 0) throw new Error(`mutation scope: '${last}' not found in ${file} after line ${from + 1}`);
  return `${file}:${from + 1}-${to + 1}`;
}

/** `file:a-b` of the block (method, case) opened on the line containing `opening`, through its closing brace. */
function block(file, opening) {
  const text = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const from = text.findIndex((line) => line.includes(opening));
  if (from < 0) throw new Error(`mutation scope: '${opening}' not found in ${file}`);
  const indent = /^\s*/.exec(text[from])[0];
  const to = text.findIndex((line, index) => index > from && line.startsWith(`${indent}}`));
  if (to < 0) throw new Error(`mutation scope: no closing brace for '${opening}' in ${file}`);
  return `${file}:${from + 1}-${to + 1}`;
}
const ACTOR = 'actors/connection/connection-actor.ts';

export const MODULES = {
  persistence: {
    what: 'log, frames, snapshots, recovery, data-directory lock',
    // not mutated: the simulation's own tools (simulated-storage, recording-storage, seeded-random)
    parts: [
      { mutate: ['persistence/data-dir-lock.ts', 'persistence/flock.ts'], tests: [`${P}/data-dir-lock.test.ts`, `${P}/data-dir-lock-edges.test.ts`] },
      { mutate: ['persistence/private-files.ts'], tests: [`${P}/private-files.test.ts`] },
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
          `${P}/read-back-refusals.test.ts`,
          `${P}/data-dir-manifest.test.ts`,
        ],
      },
      { mutate: ['persistence/snapshot-file.ts'], tests: [`${P}/snapshot-integrity.test.ts`, `${P}/snapshot.test.ts`, `${P}/recovery.test.ts`, `${P}/read-back-refusals.test.ts`] },
      { mutate: ['persistence/data-dir-manifest.ts'], tests: [`${P}/data-dir-manifest.test.ts`, 'test/durability/damaged-snapshot.test.ts'] },
      {
        mutate: ['persistence/log-writer.ts', 'persistence/durable-store.ts', 'persistence/file-storage.ts', 'persistence/record-codec.ts'],
        // the simulation with 15 seeds per fsync policy instead of up to 200: every seed runs for every mutant
        env: { PERSISTENCE_SIM_SEEDS: '15' },
        tests: [
          `${P}/durable-store-edges.test.ts`,
          `${P}/durable-store-log.test.ts`,
          `${P}/file-storage.test.ts`,
          `${P}/log-writer-observer.test.ts`,
          `${P}/snapshot.test.ts`,
          `${P}/recovery.test.ts`,
          `${P}/recovery-releases-input.test.ts`,
          `${P}/simulation.test.ts`,
        ],
      },
    ],
  },
  auth: {
    what: 'accounts, sessions, login and its limiter, device cookies, session cookie and API-key checks, the cross-site guard',
    // direct tests first: a login through the routes verifies an argon2id hash, so route
    // tests are kept only for what the routes add (the cookie, statuses, body checks)
    parts: [
      {
        mutate: [
          'actors/accounts/accounts-actor.ts',
          'actors/accounts/secrets.ts',
          'src/http/dashboard-auth.ts',
          'src/http/api-key.ts',
          'src/http/dashboard-request-guard.ts',
          block('src/http/request-path.ts', 'export function routePath'),
        ],
        tests: ['test/auth/accounts-actor.test.ts', 'test/auth/dashboard-request-guard.test.ts', 'test/auth/secrets-and-credentials.test.ts'],
      },
      // the limiter apart: its own test takes milliseconds, the login tests seconds (they hash)
      { mutate: ['actors/accounts/login-limiter.ts'], tests: ['test/auth/login-limiter.test.ts'] },
      // the cookie's own checks; its route tests hash, so they come last
      { mutate: ['actors/accounts/device-cookie.ts'], tests: ['test/auth/device-cookie.test.ts'] },
      {
        mutate: ['actors/services/account-service.ts', 'src/routes/auth.ts', 'src/routes/users.ts'],
        tests: ['test/auth/account-service.test.ts', 'test/routes/auth-routes.test.ts'],
      },
    ],
  },
  teams: {
    what: 'teams, members and roles, who may read and do what (Access), the access rules and their guard, the upgrade to teams, users and password links, the audit log, single sign-on',
    parts: [
      {
        mutate: ['actors/accounts/team-book.ts', 'actors/accounts/access.ts', 'actors/accounts/roles.ts'],
        tests: ['test/auth/team-book.test.ts', 'test/auth/accounts-actor.test.ts'],
      },
      {
        mutate: ['actors/services/team-service.ts', 'src/routes/teams.ts', 'src/http/access-guard.ts', 'src/http/access-rules.ts', 'src/service/admin-bootstrap.ts'],
        tests: ['test/routes/teams.test.ts', 'test/routes/role-matrix.test.ts', 'test/blackbox/teams-upgrade.test.ts'],
      },
      {
        mutate: ['actors/accounts/saved-views.ts', 'actors/services/saved-view-service.ts', 'src/routes/saved-views.ts'],
        tests: ['test/routes/saved-views.test.ts', 'test/durability/saved-views-restart.test.ts', 'test/routes/role-matrix.test.ts'],
      },
      {
        mutate: ['actors/accounts/password-links.ts', 'actors/services/user-service.ts', 'src/routes/users.ts', 'src/http/public-address.ts', 'src/http/session-cookies.ts'],
        tests: ['test/routes/users.test.ts', 'test/routes/auth-routes.test.ts'],
      },
      {
        mutate: ['actors/services/sso-service.ts', 'src/sso/oidc-client.ts', 'src/sso/oidc-settings.ts', 'src/routes/oidc.ts'],
        tests: ['test/actors/oidc-settings.test.ts', 'test/routes/single-sign-on.test.ts'],
      },
      {
        mutate: ['actors/audit/audit-log.ts', 'actors/services/audit-service.ts', 'src/http/audit-trail.ts', 'src/routes/audit.ts'],
        tests: ['test/auth/audit-log.test.ts', 'test/routes/audit.test.ts', 'test/routes/role-matrix.test.ts'],
      },
    ],
  },
  ingest: {
    what: 'event validation, dedup keys and cache, daily quota, the ingest decision',
    parts: [
      {
        mutate: ['actors/ingest/*.ts', '!actors/ingest/dedup-key.ts', 'actors/services/ingest-service.ts'],
        tests: [
          'test/actors/event-bytes-and-ingest-service.test.ts',
          'test/actors/ingest-timings.test.ts',
          'test/actors/schema-errors.test.ts',
          'test/actors/timestamp-fast-path.test.ts',
          'test/actors/validate-event.test.ts',
        ],
      },
      {
        mutate: [
          'actors/ingest/dedup-key.ts',
          'actors/connection/dedup-cache.ts',
          'actors/connection/daily-quota.ts',
          'actors/connection/batch-ids.ts',
          block(ACTOR, 'quotaSpent('),
          block(ACTOR, 'quotaRefusal('),
          block(ACTOR, 'validateIngestEvent('),
          block(ACTOR, 'decideIngest('),
        ],
        tests: ['test/actors/dedup-cache.test.ts', 'test/actors/ingest-decision.test.ts', 'test/actors/ingest-limits.test.ts'],
      },
    ],
  },
  retention: {
    what: 'expiry of jobs, commands and workers; the retention and snapshot timers of the running service',
    parts: [
      {
        mutate: [
          block(ACTOR, 'expire(nowMs'),
          block(ACTOR, 'loadJobs('),
          lines(ACTOR, 'this.lateCreated.update(this.jobs.table.rowOfRef(ref));'), // in evolve: every changed job
          lines(ACTOR, 'this.lateCreated.delete(row);', undefined, 'private enforceJobCap('),
          'actors/connection/late-created-jobs.ts',
          block('actors/connection/command-queue.ts', 'createdBefore('),
          lines('actors/engine.ts', "case 'retention':", 'return null;'),
          'src/service/snapshot-schedule.ts',
          'src/service/retention-timer.ts',
          'src/service/background-work.ts',
          'src/service/store-snapshots.ts',
          lines('src/service/service-mode.ts', 'retentionRecords: (_opened, atMs) =>'),
          lines('src/service/service-mode.ts', 'retentionRecords: (opened, atMs) =>', '}),'),
        ],
        // direct tests of the actor; the service test for the timers as the running server wires them
        tests: ['test/actors/retention-late-created.test.ts', 'test/durability/partition-snapshots.test.ts', 'test/server/service-timers.test.ts'],
      },
    ],
  },
  memoryReturn: {
    what: 'giving memory back after a burst: when the idle collection runs (threshold, quiet time, the bound on its stops), what it reports',
    parts: [
      {
        mutate: ['src/service/memory-return.ts'],
        tests: ['test/server/memory-return.test.ts'],
      },
    ],
  },
  jobActions: {
    what: 'revoke and retry after the answer: what a job shows while its command is pending, the withdrawal of one refused or unconfirmed, the commands kept per job and their notes in the history, where each action can work',
    parts: [
      {
        mutate: [
          'actors/connection/command-outcomes.ts',
          'actors/connection/action-availability.ts',
          'actors/connection/job-actions.ts',
          'actors/views/state-history.ts',
          block(ACTOR, 'decideCommandExpiry('),
          block(ACTOR, 'private applyJobAction('),
          block(ACTOR, 'private applyAck('),
          block(ACTOR, 'private settle('),
          block(ACTOR, 'private settleOutcome('),
          block(ACTOR, 'private settleJobCommand('),
          block('actors/connection/job-store.ts', 'withdrawAction('),
          block('actors/connection/command-queue.ts', 'push('),
        ],
        tests: [
          'test/actors/command-withdrawal.test.ts',
          'test/durability/snapshot-command-trail.test.ts',
          'test/routes/job-action-truth.test.ts',
          'test/routes/agent-ack-outcomes.test.ts',
          'test/routes/job-commands.test.ts',
        ],
      },
      { mutate: ['src/service/command-deadline-timer.ts'], tests: ['test/server/service-timers.test.ts'] },
    ],
  },
  controls: {
    what: 'the controls of queues, workers and tasks: the commands and their params, what the agents say they support, where each control can work, the outcomes kept per target, the paused state of a queue, what a clean would remove',
    parts: [
      {
        mutate: [
          'actors/connection/command-types.ts',
          'actors/connection/agent-capabilities.ts',
          'actors/connection/control-outcomes.ts',
          'actors/connection/control-availability.ts',
          'actors/queries/queue-jobs.ts',
          'actors/services/control-service.ts',
          'actors/views/command-view.ts',
          block(ACTOR, 'decideControl('),
          block(ACTOR, 'decideCapabilities('),
          block(ACTOR, 'private settleControl('),
          block('actors/connection/queue-store.ts', 'sayPaused('),
        ],
        tests: ['test/durability/snapshot-controls.test.ts', 'test/routes/queue-controls.test.ts', 'test/routes/job-commands.test.ts'],
      },
    ],
  },
  jobStore: {
    what: "the job store's rows of columns (the job table, its history, code and string columns), its table of jobs by externalId, its createdAt order kept per state, and the eviction at the job cap that reads it",
    parts: [
      {
        mutate: ['actors/connection/job-table.ts', 'actors/connection/history-column.ts', 'actors/connection/code-table.ts', 'actors/connection/nullable-number.ts'],
        tests: ['test/actors/job-table.test.ts', 'test/actors/job-columns.test.ts', 'test/actors/job-merge.test.ts'],
      },
      {
        mutate: ['actors/connection/jobs-by-key.ts', 'actors/jobs/grouped-index.ts', block(ACTOR, 'private enforceJobCap('), block(ACTOR, 'private collectOldest(')],
        tests: ['test/actors/jobs-by-key.test.ts', 'test/jobs/grouped-index.test.ts', 'test/actors/created-by-state.test.ts', 'test/actors/job-merge.test.ts'],
      },
      {
        // ids and externalIds as bytes, compared and hashed in place
        mutate: ['actors/connection/string-column.ts', 'actors/jobs/item-ids.ts'],
        tests: ['test/actors/string-column.test.ts', 'test/actors/jobs-by-key.test.ts', 'test/jobs/sorted-index.test.ts', 'test/actors/jobs-by-id.test.ts'],
      },
      {
        // the declared column list, JSON texts in one buffer, a job's earlier attempts, and the snapshot's columns
        mutate: ['actors/connection/job-column-list.ts', 'actors/connection/text-column.ts', 'actors/connection/sparse-rows.ts', 'actors/connection/attempt-history.ts', 'actors/connection/job-columns.ts'],
        tests: ['test/actors/text-column.test.ts', 'test/actors/job-table.test.ts', 'test/actors/job-columns.test.ts', 'test/actors/job-merge.test.ts'],
      },
    ],
  },
  payload: {
    what: 'what jobs were called with: masking by key, caps, log lines and progress objects on ingest, and the search by payload',
    parts: [
      {
        mutate: ['actors/ingest/redaction.ts', 'actors/ingest/job-payload.ts'],
        tests: ['test/actors/payload-texts.test.ts', 'test/actors/job-table.test.ts', 'test/routes/job-payload.test.ts'],
      },
      {
        mutate: ['actors/queries/payload-search.ts', lines('actors/queries/job-list.ts', 'function searchJobs(', 'function positionOf(')],
        tests: ['test/jobs/payload-search.test.ts', 'test/routes/job-payload.test.ts'],
      },
    ],
  },
  workflows: {
    what: "jobs' parents and roots: the relation columns and their child index, the links resolved to jobwatch jobs, the workflow tree with its bounds and stuck reasons, lists by parent and root, and the workflow_stuck alert's measure",
    parts: [
      {
        mutate: ['actors/connection/relation-columns.ts', 'actors/connection/relation-index.ts', 'actors/connection/job-links.ts', 'actors/queries/workflow.ts', 'actors/queries/job-list.ts', 'actors/alerts/workflow-stuck.ts'],
        tests: ['test/routes/workflows.test.ts', 'test/durability/snapshot-relations.test.ts', 'test/actors/job-columns.test.ts', 'test/actors/job-table.test.ts', 'test/alerts/alert-evaluation.test.ts'],
      },
    ],
  },
  partitions: {
    what: "cluster mode's partition of a connection, scoped snapshots and their reconciliation with the accounts; NATS refusals by code; the wait for a partition's writer; who keeps a partition, taking one up and letting one go",
    parts: [
      {
        mutate: [
          'actors/partition-of.ts',
          lines('actors/engine.ts', "case 'connection.created':", 'return null;'),
          lines('actors/engine-snapshot.ts', "if (scope === undefined || scope.accounts)", "if (scope !== undefined && (scope.connections"),
          block('actors/engine-snapshot.ts', 'reconcileWithAccounts({'),
        ],
        tests: ['test/actors/partition-of.test.ts', 'test/durability/partition-snapshots.test.ts'],
      },
      {
        // NATS refusals told apart by code: a misread refusal either halts a writer for nothing or lets a deposed one write
        mutate: ['cluster/nats-errors.ts'],
        tests: ['test/cluster/nats-errors.test.ts'],
      },
      {
        // the bounded wait for a partition's writer: a slip either refuses writes it could answer or waits unbounded
        mutate: ['src/http/writer-view.ts'],
        tests: ['test/http/writer-view.test.ts'],
      },
      {
        // who keeps a partition and when a node takes one up or lets one go: a slip keeps a partition nowhere, or drops one a writer writes
        mutate: ['cluster/partition-keepers.ts', 'cluster/partition-keeping.ts', block('actors/engine.ts', 'dropConnectionsNotHeld(): {'), block('actors/audit/audit-log.ts', 'dropVia(dropped')],
        tests: ['test/cluster/partition-keepers.test.ts', 'test/cluster/partition-keeping.test.ts', 'test/durability/partition-snapshots.test.ts'],
      },
      {
        // where each partition lives for a live set: a slip keeps a partition on too few nodes, unevenly, differently on two nodes, or hands a failover to a node that does not keep it
        mutate: ['cluster/placement.ts'],
        tests: ['test/cluster/placement.test.ts', 'test/cluster/size-balance.test.ts'],
      },
      {
        // placement by size: a slip moves a slot that does not lower the heaviest node, moves inside the band, keeps a partition twice on one node, trusts a map written for other settings, or lets two coordinators or an unsettled cluster move
        mutate: ['cluster/size-balance.ts', 'cluster/placement-map.ts', 'cluster/size-rebalancer.ts'],
        tests: ['test/cluster/size-balance.test.ts', 'test/cluster/size-rebalancer.test.ts'],
      },
    ],
  },
  crossReads: {
    what: "a cluster node answering for connections it does not keep: a partition's link (answered here or by a keeper, the partitions signed), the read scope, the relayed live stream",
    parts: [
      {
        // a slip sends a read to a node that does not keep it, counts a partition twice, or waits past the deadline
        mutate: ['src/http/cluster-reads.ts', 'src/http/read-scope.ts', 'src/http/forward-signature.ts'],
        tests: ['test/http/cluster-reads.test.ts', 'test/http/forward-signature.test.ts', 'test/http/scoped-forward.test.ts', 'test/cluster/cross-node-reads.test.ts'],
      },
      {
        mutate: ['src/http/cluster-live.ts'],
        tests: ['test/http/cluster-live.test.ts', 'test/cluster/cross-node-reads.test.ts'],
      },
    ],
  },
  shards: {
    what: 'shards (WORKERS): the merges of reads over shards, the route table, where a request goes, the protocol of the front and a shard, the layout of a data directory and moving it',
    parts: [
      {
        // a slip in a merge gives an answer one engine would not: the same events in 1 and 4 shards, every sort and cursor walk compared
        mutate: ['src/shards/shard-merge.ts', 'src/shards/shard-routes.ts', 'src/http/route-table.ts'],
        tests: ['test/shards/shard-routes.test.ts', 'test/http/replica-routes.test.ts', 'test/shards/identical-reads.test.ts', 'test/shards/identical-task-metrics.test.ts'],
      },
      {
        mutate: ['src/shards/shard-front.ts', 'src/shards/shard-link.ts', 'src/shards/shard-host.ts', 'src/shards/remote-live-sink.ts', 'src/shards/shard-set.ts', 'src/shards/combined-snapshot.ts', 'actors/live/live-feed.ts'],
        env: { WORKERS: '4' },
        tests: [
          'test/shards/identical-reads.test.ts',
          'test/shards/shard-writes.test.ts',
          'test/routes/body-limits.test.ts',
          'test/routes/stream.test.ts',
          'test/routes/log-failure.test.ts',
          'test/routes/connections.test.ts',
          'test/routes/job-actions.test.ts',
          'test/routes/audit.test.ts',
          'test/routes/role-matrix.test.ts',
        ],
      },
      {
        // a layout put in force before its stores are written, or a stale one kept, loses data at the next start
        mutate: ['persistence/data-layout.ts', 'src/shards/reshard.ts', lines('actors/engine-snapshot.ts', 'if (!this.holds(chunk.id)) {', 'return;')],
        tests: ['test/persistence/shard-logs-simulation.test.ts', 'test/shards/reshard.test.ts'],
      },
    ],
  },
  alerts: {
    what: 'alert rules, channels, evaluation, the delivery queue, webhook payloads, the outbound address guard and the alert routes',
    parts: [
      {
        mutate: [
          'actors/alerts/alert-book.ts',
          'actors/alerts/alert-evaluation.ts',
          'actors/alerts/alert-measures.ts',
          'actors/alerts/alert-model.ts',
          'actors/alerts/rule-input.ts',
          block('actors/connection/job-store.ts', '*rowsIn('),
          block('actors/connection/job-store.ts', 'lastCompletedAtOfName('),
          block('actors/metrics/queue-metrics.ts', 'finishedWithin('),
        ],
        tests: ['test/alerts/alert-evaluation.test.ts', 'test/alerts/notice-links.test.ts', 'test/alerts/runtime-percentile.test.ts', 'test/routes/alerts.test.ts', 'test/alerts/webhook-delivery.test.ts'],
      },
      {
        mutate: ['actors/services/alert-service.ts', 'actors/alerts/alert-text.ts', 'src/routes/alerts.ts', block('src/http/client-address.ts', 'export function reachedAddress(')],
        tests: ['test/alerts/notice-links.test.ts', 'test/routes/alerts.test.ts', 'test/alerts/webhook-delivery.test.ts'],
      },
      {
        mutate: ['src/alerts/address-ranges.ts', 'src/alerts/embedded-ipv4.ts', 'src/alerts/webhook-guard.ts', 'src/alerts/webhook-sender.ts'],
        tests: ['test/alerts/address-forms.test.ts', 'test/alerts/webhook-guard.test.ts', 'test/alerts/webhook-delivery.test.ts'],
      },
      {
        mutate: ['src/alerts/send-slots.ts', 'actors/alerts/test-send-limiter.ts'],
        tests: ['test/alerts/alert-runner.test.ts'],
      },
      {
        mutate: ['src/alerts/webhook-payload.ts', 'src/alerts/alert-runner.ts'],
        tests: ['test/alerts/alert-runner.test.ts', 'test/alerts/notice-links.test.ts', 'test/alerts/webhook-delivery.test.ts'],
      },
    ],
  },
  taskMetrics: {
    what: 'task metrics: the histogram layout, buckets as bytes, tiers, series with their cap and fold, the reads over ranges',
    parts: [
      {
        mutate: ['actors/metrics/duration-bins.ts', 'actors/metrics/measure-sum.ts', 'actors/metrics/open-bucket.ts', 'actors/metrics/bucket-codec.ts', 'actors/metrics/bucket-tier.ts'],
        tests: ['test/metrics/duration-bins.test.ts', 'test/metrics/bucket-tier.test.ts', 'test/metrics/sum-parts.test.ts'],
        env: { FUZZ_RUNS: '40' },
      },
      {
        mutate: ['actors/metrics/metric-series.ts', 'actors/metrics/task-metrics.ts', 'actors/metrics/metric-reads.ts', 'actors/metrics/task-metrics-query.ts', 'actors/metrics/metric-tiers.ts'],
        tests: ['test/metrics/task-metrics-recording.test.ts', 'test/metrics/metric-reads.test.ts'],
        env: { FUZZ_RUNS: '40' },
      },
      {
        // the routes, the service behind them and markers: route tests, seconds each
        mutate: ['actors/services/task-metrics-service.ts', 'actors/services/task-metrics-answers.ts', 'actors/metrics/markers.ts', 'src/routes/task-metrics.ts'],
        tests: ['test/routes/task-metrics-routes.test.ts'],
      },
      {
        mutate: ['src/metrics/task-metric-families.ts'],
        tests: ['test/operability/task-metrics-prometheus.test.ts'],
      },
    ],
  },
  heavyBodies: {
    what: "what one tenant's bodies may cost: their structure checked as they arrive, large ingest bodies parsed in slices, the in-flight caps",
    parts: [
      { mutate: ['src/http/json-shape.ts', 'src/http/ingest-body.ts', 'persistence/turn-slices.ts'], tests: ['test/http/json-shape.test.ts'] },
      { mutate: ['src/http/in-flight.ts'], tests: ['test/http/in-flight.test.ts'] },
      // the routes' order of checks (quota and caps before the body): route tests, seconds each
      { mutate: [lines('src/routes/ingest.ts', 'const actor = connectionActorForKey', 'ticket?.release()')], tests: ['test/routes/heavy-bodies.test.ts'] },
    ],
  },
  dashboardText: {
    what: "how the dashboard puts figures and names into words: queue throughput and the job system's own counts, worker titles, the agents' command lines",
    parts: [
      {
        mutate: ['ui/src/pages/queues/queue-figures.ts', 'ui/src/pages/workers/worker-title.ts', 'ui/src/pages/connections/agent-commands.ts'],
        tests: ['test/ui/queue-and-worker-text.test.ts', 'test/ui/agent-commands.test.ts'],
      },
    ],
  },
  storedShapes: {
    what: 'what a start reads back: the shape of every record and snapshot chunk, the chunks\' order, the accounts\' mark, and the verify command',
    parts: [
      {
        mutate: ['actors/stored/*.ts', block('actors/engine-snapshot.ts', 'snapshotEnded({'), block('actors/engine-snapshot.ts', 'private follow(')],
        tests: ['test/durability/damaged-snapshot.test.ts', 'test/durability/snapshot-round-trip.test.ts', 'test/durability/snapshot-older-formats.test.ts'],
      },
      {
        mutate: ['src/accounts-kept.ts', 'src/engine-recovery.ts', 'src/cli/verify-command.ts'],
        tests: ['test/durability/damaged-snapshot.test.ts', 'test/cli/verify.test.ts'],
      },
    ],
  },
  dashboard: {
    what: "the dashboard's words for what a job did: its attempts, the retry limit and the runs added by hand, its progress",
    parts: [{ mutate: ['ui/src/lib/attempts.ts', 'ui/src/lib/progress.ts'], tests: ['test/ui/format.test.ts'] }],
  },
  'bullmq-agent': {
    what: "the BullMQ agent's mapping of stream entries to jobwatch events, a job's data, return value, progress and log lines and what it masks of them, its settings, spool, checkpoints, delivery and gap rule, what it bounds, files and logs, what a command may name and carry, and what it says it supports",
    parts: [
      {
        mutate: ['agents/bullmq/src/normalize.js', 'agents/bullmq/src/job-facts.js', 'agents/bullmq/src/config.js', 'agents/bullmq/src/payload-fields.js', 'agents/bullmq/src/redaction.js'],
        runner: 'node',
        tests: ['agents/bullmq/test/normalize.test.js', 'agents/bullmq/test/bullmq-config.test.js'],
      },
      {
        mutate: ['agents/bullmq/src/spool.js', 'agents/bullmq/src/checkpoint.js', 'agents/bullmq/src/deliver.js', 'agents/bullmq/src/workers.js', 'agents/bullmq/src/discover.js', 'agents/bullmq/src/event-reader.js'],
        runner: 'node',
        tests: ['agents/bullmq/test/delivery.test.js', 'agents/bullmq/test/event-reader.test.js', 'agents/bullmq/test/refused-batches.test.js'],
      },
      {
        mutate: [
          'agents/bullmq/src/bound-json.js',
          'agents/bullmq/src/limits.js',
          'agents/bullmq/src/private-files.js',
          'agents/bullmq/src/log.js',
          lines('agents/bullmq/src/commands.js', 'export function queueNameRefusal', 'return { queue, jobId };'),
        ],
        runner: 'node',
        tests: ['agents/bullmq/test/shared-limits.test.js', 'agents/bullmq/test/spool-modes-and-log.test.js', 'agents/bullmq/test/command-target.test.js', 'agents/bullmq/test/delivery.test.js'],
      },
      {
        // what the agent reads of a command and what it says it supports; carrying them out is the end-to-end test's (agent-controls.test.js: real Redis and BullMQ, too slow for a mutant each)
        mutate: ['agents/bullmq/src/capabilities.js', lines('agents/bullmq/src/queue-commands.js', 'export function queueParamsOf', 'return { params: undefined };')],
        runner: 'node',
        tests: ['agents/bullmq/test/command-params.test.js'],
      },
    ],
  },
};
