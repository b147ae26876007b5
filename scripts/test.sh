#!/usr/bin/env bash
# npm test: the whole suite on SQLite, then the store and HTTP suites again on PostgreSQL
# (with Redis for the scale-out tests). With CI=true, PostgreSQL and Redis must be reachable;
# elsewhere their part is skipped with one line saying how to enable it.
set -uo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."

run() { node --import tsx --test --test-concurrency=2 "$@"; }

pg_url="${MSGSVC_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
reachable=$(node --import tsx -e "
import('./test/helpers/stores.ts').then(async (m) => {
  const { Redis } = await import('ioredis');
  const pg = await m.postgresReachable();
  const r = new Redis(m.REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  const redis = await r.connect().then(() => r.ping()).then(() => true, () => false);
  r.disconnect();
  console.log(pg && redis ? 'yes' : 'no');
});" 2>/dev/null)

if [ "$reachable" = "yes" ]; then
  export MSGSVC_TEST_SERVICES=1
elif [ "${CI:-}" = "true" ]; then
  echo "CI: PostgreSQL ($pg_url) and Redis (${MSGSVC_TEST_REDIS_URL:-redis://127.0.0.1:6379}) must be reachable" >&2
  exit 1
fi

echo "== suite on SQLite =="
run test/*.test.ts || exit 1

if [ "$reachable" = "yes" ]; then
  echo "== store and HTTP suites on PostgreSQL =="
  MSGSVC_TEST_STORE=postgres run test/operations-*.test.ts test/conventions-*.test.ts test/smoke.test.ts test/store-*.test.ts test/scale-*.test.ts \
    test/idempotency.test.ts test/webhooks.test.ts test/reliability-webhooks.test.ts || exit 1
else
  echo "PostgreSQL/Redis tests skipped: start PostgreSQL at 127.0.0.1:5432 and Redis at 127.0.0.1:6379 (or set MSGSVC_TEST_PG_URL / MSGSVC_TEST_REDIS_URL) to enable them"
fi
