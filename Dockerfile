# msgsvc's container image: `msgsvc serve` as a non-root user, data under the /data volume, /readyz as
# the health check. The guide: docs/guides/production.md, "Running it with Compose".
#
#   docker build -t msgsvc .
#   podman build --format docker -t msgsvc .     # podman: the docker format keeps the HEALTHCHECK
#
# Build arguments:
#   BASE_IMAGE           the Node 20 Debian image both stages start from (default node:20-bookworm-slim);
#                        it must have node and npm on PATH and apt-get.
#   NODE_EXTRA_CA_CERTS  behind a TLS-intercepting proxy: the path, inside the build, of a PEM file with
#                        the proxy's CA, mounted for the build only, so that npm trusts it:
#                          podman build --format docker -v /path/to/proxy-ca.pem:/run/extra-ca.crt:ro \
#                            --build-arg NODE_EXTRA_CA_CERTS=/run/extra-ca.crt -t msgsvc .
#                        Nothing of it is kept in the image. Docker's builder mounts no volume: see
#                        docs/guides/production.md, "Build arguments", for a base image holding the CA.
#   NPM_REGISTRY         another npm registry (a mirror) for the build only; empty: npm's default.

ARG BASE_IMAGE=node:20-bookworm-slim

# ---- build: every dependency, the native driver compiled, src/ to dist/, the console bundle ----
FROM ${BASE_IMAGE} AS build
ARG NODE_EXTRA_CA_CERTS=""
ARG NPM_REGISTRY=""
# better-sqlite3 compiles itself from source where no prebuilt binary can be fetched: node-gyp needs
# python3, make and g++.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Dependencies first (a layer that survives source changes). Node's headers: the official image
# has them under /usr/local, so node-gyp needs no download.
RUN if [ -d /usr/local/include/node ]; then export npm_config_nodedir=/usr/local; fi \
 && npm ci --no-audit --no-fund --ignore-scripts ${NPM_REGISTRY:+--registry "$NPM_REGISTRY"} \
 && npm rebuild --no-audit --no-fund ${NPM_REGISTRY:+--registry "$NPM_REGISTRY"}
COPY . .
RUN npm run build
# Production dependencies only. tsx and typescript are dependencies of the package (an
# `npm install --omit=dev` checkout builds dist/ with them) but the image runs dist/ alone, so they
# go too (typescript is only android-sms-gateway's peer, for its typings). The native driver keeps
# its compiled module and nothing else of its build.
RUN cp package.json /tmp/package.json \
 && npm pkg delete dependencies.tsx dependencies.typescript scripts.prepare \
 && npm prune --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund ${NPM_REGISTRY:+--registry "$NPM_REGISTRY"} \
 && cp /tmp/package.json package.json \
 && cd node_modules/better-sqlite3 \
 && find build -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} + \
 && find build/Release -mindepth 1 -maxdepth 1 ! -name better_sqlite3.node -exec rm -rf {} + \
 && rm -rf deps src

# ---- runtime: node, the production dependencies and the build, as user msgsvc ----
FROM ${BASE_IMAGE}
# The user msgsvc (uid 10001) owns /data and nothing else. `msgsvc` goes on PATH (docker exec
# CONTAINER msgsvc …). The health check's probe is a file, node itself asking GET /readyz (the image
# has no curl), not `node -e '…'`: a command without quotes or parentheses survives any Compose
# implementation's re-quoting (podman-compose runs it through sh -c).
RUN groupadd --system --gid 10001 msgsvc \
 && useradd --system --uid 10001 --gid msgsvc --home-dir /app --no-create-home --shell /usr/sbin/nologin msgsvc \
 && mkdir -p /data /app \
 && chown msgsvc:msgsvc /data \
 && ln -s /app/bin/msgsvc.js /usr/local/bin/msgsvc \
 && printf '%s\n' \
    "// The container's health check: exit 0 when GET /readyz on this container's port answers 200." \
    "// \`msgsvc worker\` serves no HTTP: a container running one is healthy while it runs." \
    "const fs = require('node:fs');" \
    "const worker = fs.readdirSync('/proc').some((pid) => {" \
    "  try { const argv = fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\\0'); return argv.some((a) => a.endsWith('msgsvc.js')) && argv.includes('worker'); } catch { return false; }" \
    "});" \
    "if (worker) process.exit(0);" \
    "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz', { signal: AbortSignal.timeout(4000) })" \
    "  .then((res) => process.exit(res.ok ? 0 : 1), () => process.exit(1));" \
    > /app/healthcheck.cjs
WORKDIR /app
COPY --from=build /app/package.json /app/LICENSE ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/node_modules ./node_modules
# Every setting can be overridden (docs/configuration.md). Inside a container the server listens on
# every interface; the data is a SQLite file on the volume unless DATABASE_URL names PostgreSQL.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=/data/msgsvc.db
USER msgsvc
VOLUME ["/data"]
EXPOSE 8080
# Ready when the database (and Redis, when configured) answer: GET /readyz gives 200.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/healthcheck.cjs"]
# Exec form: node is PID 1 and gets SIGTERM itself; msgsvc then stops accepting, finishes the
# requests in flight and exits 0 within 10 s. `docker run IMAGE migrate` (or any other msgsvc
# command) replaces `serve`.
ENTRYPOINT ["node", "--max-semi-space-size=8", "/app/bin/msgsvc.js"]
CMD ["serve"]
