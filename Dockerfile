# syntax=docker/dockerfile:1
# Every vanish image, from the repository root (the workspace lockfile lives there). SERVICE picks one:
#   docker build -t vanish:0.1.0 .                                   all-in-one (the default): one container, one volume
#   docker build --build-arg SERVICE=notes -t vanish-notes:0.1.0 .   gateway | notes | stats | mailer | webhooks
# (`--target <name>` selects the same stages.) docs/operations.md, "Images", says what each holds.
# No secret is baked in: the services take keys and URLs from the environment or *_FILE at run time; the
# all-in-one generates its keys once into its volume.

# The base image is pinned by digest, so a rebuild cannot pick up a different Node or Debian behind our back
# (docs/operations.md, "Bumping the base image"). A machine without a registry passes a local stand-in with
# --build-arg NODE_IMAGE=... (the container tests do).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
ARG SERVICE=all-in-one

############################ base: what every stage and image shares ############################
FROM ${NODE_IMAGE} AS base
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
WORKDIR /app
# Liveness on the admin port (slim images have no curl): ADMIN_PORT, else the service's default (the
# all-in-one's is the gateway's). Docker and compose use it; Kubernetes uses its probes.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const port=process.env.ADMIN_PORT||{gateway:9080,notes:9081,stats:9082,mailer:9083,webhooks:9084,'all-in-one':9080}[process.env.SERVICE];require('http').get('http://127.0.0.1:'+port+'/healthz',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1)).setTimeout(2000,function(){this.destroy()})"]

############################ manifests: npm needs every workspace's package.json to read the lockfile ############################
# Manifests first, so the dependency layers are cached until a package.json or the lockfile changes.
FROM base AS manifests
COPY package.json package-lock.json ./
COPY packages/common/package.json packages/common/
COPY packages/envelope/package.json packages/envelope/
COPY packages/cli/package.json packages/cli/
COPY packages/bus/package.json packages/bus/
COPY packages/database/package.json packages/database/
COPY packages/testkit/package.json packages/testkit/
COPY services/all-in-one/package.json services/all-in-one/
COPY services/notes/package.json services/notes/
COPY services/stats/package.json services/stats/
COPY services/mailer/package.json services/mailer/
COPY services/webhooks/package.json services/webhooks/
COPY services/gateway/package.json services/gateway/

############################ build: compile SERVICE and what it references ############################
FROM manifests AS build
# --ignore-scripts: compiling needs only tsc; no native add-on is built here. `npm ci` only: the image gets
# exactly what the lockfile records, or the build fails.
RUN npm ci --ignore-scripts
COPY tsconfig.base.json ./
COPY packages packages
COPY services services
ARG SERVICE
# The commit the release manifest names (DECISIONS 17): `--build-arg VANISH_COMMIT=$(git rev-parse HEAD)`;
# the image has no .git, so without it the manifest says "unknown" (its asset hashes are what verify-site checks).
ARG VANISH_COMMIT=unknown
# /out holds what runs: the dist/ of every project tsc built for SERVICE, the message catalogues
# (locales/) and OpenAPI document (openapi/) beside a built service's dist (read relative to it), and the
# envelope, the file format and the requests' sealing: plain JavaScript that the pages serve as it is
# (DECISIONS 13, 14, 15).
RUN npx tsc -b "services/${SERVICE}" \
 && if [ -f services/notes/dist/release/write-release-manifest.js ]; then node services/notes/dist/release/write-release-manifest.js --commit "${VANISH_COMMIT}"; fi \
 && for project in packages/* services/*; do \
      [ -d "$project/dist" ] || continue; \
      mkdir -p "/out/$project" && cp -r "$project/dist" "/out/$project/"; \
      for data in locales openapi; do [ ! -d "$project/$data" ] || cp -r "$project/$data" "/out/$project/"; done; \
    done \
 && mkdir -p /out/packages/envelope \
 && cp packages/envelope/envelope.js packages/envelope/file-stream.js packages/envelope/request-seal.js /out/packages/envelope/

############################ one service: production dependencies only ############################
FROM manifests AS service
ARG SERVICE
# A young generation of 8 MiB semi-spaces (V8's default is 16): RSS stays well under the 150 MB goal,
# and scavenges cost far less than with 4 (docs/performance.md, Memory). Each service listens on its own
# default ports (PORT, ADMIN_PORT: docs/operations.md), which the HEALTHCHECK knows by SERVICE.
ENV NODE_ENV=production NODE_OPTIONS=--max-semi-space-size=8 SERVICE=${SERVICE}
# Only this workspace's production dependencies: no better-sqlite3, no TypeScript, no jest. main.js links
# to the service's entry point, so one command starts any of them (node runs the file the link names).
RUN npm ci --omit=dev --ignore-scripts --workspace "services/${SERVICE}" \
 && npm cache clean --force \
 && rm -rf /root/.npm /tmp/* \
 && ln -s "services/${SERVICE}/dist/main.js" main.js
COPY --from=build /out/ ./
# Files stay owned by root and read-only to the app user; the process writes only to /tmp, and to /data
# where a volume is mounted: notes keeps the files of notes there with FILE_STORAGE=fs (DECISIONS 14,
# compose sets DATA_DIR=/data). /data is made here owned by the app user, so a new volume starts so.
RUN mkdir -p /data/files && chown -R node:node /data && chmod 0700 /data /data/files
USER node
# Run with an init so signals reach node and zombies are reaped (`docker run --init`, compose `init: true`);
# node also handles SIGTERM itself, so it drains even as PID 1 in Kubernetes. The old space grows by half of
# what a major collection kept (V8: up to 4x), which keeps RSS under the 150 MB goal after a load;
# NODE_OPTIONS refuses that flag (docs/performance.md, Memory).
CMD ["node", "--heap-growing-percent=50", "main.js"]
# The names SERVICE takes (and --target): each is the service image above.
FROM service AS gateway
FROM service AS notes
FROM service AS stats
FROM service AS mailer
FROM service AS webhooks

############################ all-in-one: node_modules with SQLite compiled in ############################
FROM manifests AS all-in-one-modules
# better-sqlite3 is a native add-on: its install fetches a prebuilt binary where it can and compiles
# otherwise, which needs python3, make, g++ and Node's headers (the official image has them under /usr/local).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
RUN npm ci --omit=dev --ignore-scripts --workspace services/all-in-one \
 && npm_config_nodedir=/usr/local npm rebuild better-sqlite3 \
 && rm -rf node_modules/better-sqlite3/build/Release/obj* node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && npm cache clean --force

############################ all-in-one: `docker run -p 8080:8080 -v vanish-data:/data IMAGE` ############################
# The embedded defaults of `npm start` for one host: SQLite, in-memory limits, the in-process bus, e-mail
# written to /data/outbox (SMTP_URL to send), keys generated once into /data/keys. NODE_ENV is left unset on
# purpose: production mode means "every dependency and key is given" and the all-in-one refuses it
# (services/all-in-one/src/config.ts); the service images are the production deployment
# (docs/operations.md, "The all-in-one image").
FROM base AS all-in-one
# tini as PID 1: signals reach node and `docker stop` takes under a second, with no --init needed.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir /data && chown node:node /data && chmod 0700 /data
ENV SERVICE=all-in-one DATA_DIR=/data
COPY --from=all-in-one-modules /app ./
COPY --from=build /out/ ./
# Everything it writes (data, keys, outbox) is on this one volume; the root file system can be read-only.
VOLUME /data
USER node
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
# The node flags of `npm start` (package.json): the same process, the same memory settings (docs/performance.md).
CMD ["node", "--heap-growing-percent=50", "--max-semi-space-size=8", "services/all-in-one/dist/main.js"]

############################ the image SERVICE names ############################
FROM ${SERVICE}
