# The stand-in redis image's entrypoint (README.md beside it): redis-server without a configuration
# file answers other containers, as the official image's does.
set -eu
if [ "${1:-}" = redis-server ]; then
  shift
  exec redis-server "$@" --protected-mode no
fi
exec "$@"
