#!/usr/bin/env bash
# Runs every suite even when one fails (bun's; bun's once more with the connections over 4
# shards; the cluster's once more with no standby; then each agent's own: the BullMQ agent's
# type check and node --test, the Celery agent's pytest, the Sidekiq agent's minitest), so a
# failure in one does not hide the results of the others; exits non-zero if any failed.
set -u
cd "$(dirname "$0")/.."
status=0
bun test --timeout 30000 || status=1
# every folder again with the connections on 4 shards (the test app and the services the tests
# start read WORKERS: test/support/test-app.ts, test/blackbox/service-process.ts), but the
# cluster's (a cluster node runs one thread and ignores WORKERS) and the shards' own (each
# test sets its shards)
mapfile -t over_shards < <(ls -d test/*/ | grep -vE '^test/(cluster|shards)/$')
WORKERS=4 bun test --timeout 30000 "${over_shards[@]}" || status=1
# the cluster's tests again with no standby (a partition kept by its writer alone; the default is 1)
CLUSTER_STANDBYS=0 bun test --timeout 30000 test/cluster || status=1
npm run --silent test:bullmq || status=1
npm run --silent test:celery || status=1
npm run --silent test:sidekiq || status=1
exit "$status"
