#!/usr/bin/env bash
# Runs every suite even when one fails (bun's, the route tests once more over 4 shards,
# then each agent's own: the BullMQ agent's type check and node --test, the Celery agent's
# pytest, the Sidekiq agent's minitest), so a failure in one does not hide the results of
# the others; exits non-zero if any failed.
set -u
cd "$(dirname "$0")/.."
status=0
bun test --timeout 30000 || status=1
# the route tests again with the connections on 4 shards (test/support/sharded-test-app.ts)
WORKERS=4 bun test --timeout 30000 test/routes || status=1
npm run --silent test:bullmq || status=1
npm run --silent test:celery || status=1
npm run --silent test:sidekiq || status=1
exit "$status"
