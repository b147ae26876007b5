#!/usr/bin/env bash
# Builds the local base image the container test passes as BASE_IMAGE, for machines that reach no
# image registry: Debian bookworm (debootstrap --variant=minbase, from the mirror apt already uses
# here) with this machine's own Node 20 in the places the official node image has it
# (/usr/local/bin/node, /usr/local/lib/node_modules/npm, /usr/local/include/node). Does nothing
# when the image exists. Usage: test/container/base-image.sh [IMAGE] (default localhost/msgsvc-base:test).
# Needs root (debootstrap), podman and debootstrap. PODMAN may hold the podman command with its flags.
set -euo pipefail
IMAGE=${1:-localhost/msgsvc-base:test}
read -r -a PODMAN <<<"${PODMAN:-podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs}"

if "${PODMAN[@]}" image exists "$IMAGE"; then
  echo "base image $IMAGE exists"
  exit 0
fi

# The Debian mirror apt uses: the first bookworm entry of the deb822 .sources files, else of the
# one-line sources.list files. Nothing is written down: it is read here at every run.
mirror=''
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ]; then
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    mirror=$(awk '$1 == "deb" && $0 ~ /bookworm/ && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$f")
    [ -n "$mirror" ] && break
  done
fi
if [ -z "$mirror" ]; then
  echo "no Debian mirror found in /etc/apt/sources.list*" >&2
  exit 1
fi

node_bin=$(command -v node)
node_bin=$(readlink -f "$node_bin")
case "$("$node_bin" --version)" in
  v20.*) ;;
  *) echo "this machine's node is $("$node_bin" --version), not 20" >&2; exit 1 ;;
esac
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
node_prefix=$(dirname "$(dirname "$node_bin")")

root=$(mktemp -d /var/tmp/msgsvc-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
started=$(date +%s)
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
  tail -n 30 "$root.log" >&2
  exit 1
}
rm -f "$root.log"

install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# Node's C headers, for native addons (better-sqlite3) compiled with npm_config_nodedir=/usr/local.
if [ -d "$node_prefix/include/node" ]; then
  mkdir -p "$root/usr/local/include"
  cp -a "$node_prefix/include/node" "$root/usr/local/include/node"
fi
# What the slim image leaves out too.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*

tar -C "$root" -c . | "${PODMAN[@]}" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' - "$IMAGE" >/dev/null
echo "base image $IMAGE built in $(($(date +%s) - started)) s"
