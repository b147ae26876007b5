#!/usr/bin/env bash
# npm test: every test file in one node --test run. Each file that touches a database runs its cases
# on SQLite and, when it is reachable, on PostgreSQL ([sqlite] … / [postgres] …); the Redis cases run
# when Redis is reachable (test/helpers/stores.ts decides, once per test process). With CI=true
# PostgreSQL and Redis are required: a file that cannot reach them fails. Elsewhere each skipped
# case says why in one line.
set -uo pipefail
shopt -s nullglob globstar
cd "$(dirname "$0")/.."

# test/**/*.test.ts matches test/*.test.ts too (globstar): one pattern, each file once. Arguments
# go to node before the files (npm test -- --test-reporter=spec). Without a reporter of the caller's,
# scripts/test-reporter.mjs: node's TAP, with every failed test repeated just before the summary.
reporter=(--test-reporter=./scripts/test-reporter.mjs --test-reporter-destination=stdout)
for arg in "$@"; do case "$arg" in --test-reporter*) reporter=() ;; esac; done
exec node --import tsx --test --test-concurrency=2 "${reporter[@]}" "$@" test/**/*.test.ts
