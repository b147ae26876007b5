#!/usr/bin/env bash
# npm run test:container: builds the container image (Dockerfile) and runs it with Podman, with
# compose.yaml's service definitions (test/container/container.ctest.ts). Not part of `npm test`.
#
# What the machine needs (CI installs it in .ci/run): podman, runc, debootstrap, podman-compose and
# the CNI dnsname plugin (Debian: `apt-get install podman runc debootstrap podman-compose
# golang-github-containernetworking-plugin-dnsname`); root for debootstrap (the local base image,
# built once and kept as localhost/msgsvc-base:test: no image registry is reachable here); PostgreSQL
# and Redis on 127.0.0.1 for the PostgreSQL case. Podman runs as
# `podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs` (PODMAN overrides it). The images it
# builds (localhost/msgsvc:test, the base, the postgres and redis stand-ins) are kept, with their
# layer cache, so that the next run rebuilds only what changed.
#
# As root, this writes `default_ulimits = []` under [containers] in /etc/containers/containers.conf
# when the file does not set default_ulimits: Podman's default ulimits cannot be applied in this
# sandbox, and every container fails to start without it.
set -euo pipefail
cd "$(dirname "$0")/.."

containers_conf() {
  local conf=/etc/containers/containers.conf
  if [ -f "$conf" ] && grep -q '^[[:space:]]*default_ulimits[[:space:]]*=' "$conf"; then return 0; fi
  if [ "$(id -u)" != 0 ]; then
    echo "$conf sets no default_ulimits and this is not root: containers may fail to start" >&2
    return 0
  fi
  mkdir -p /etc/containers
  if [ -f "$conf" ] && grep -q '^\[containers\]' "$conf"; then
    sed -i '/^\[containers\]/a default_ulimits = []' "$conf"
  else
    printf '[containers]\ndefault_ulimits = []\n' >>"$conf"
  fi
  echo "wrote default_ulimits = [] into $conf"
}
if command -v podman >/dev/null 2>&1; then containers_conf; fi

exec node --import tsx --test --test-concurrency=1 "$@" test/container/container.ctest.ts
