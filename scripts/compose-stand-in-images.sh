#!/usr/bin/env bash
# TEST TOOLING ONLY. Users of docker-compose.yml pull the official images (mysql, redis, rabbitmq,
# axllent/mailpit, prom/prometheus) from their registries. This machine cannot reach any registry, so for
# `npm run test:compose` this script builds stand-ins from Debian bookworm's own packages and tags them
# with the exact names docker-compose.yml uses (test/compose/stand-ins/README.md says what each imitates).
# It first makes the node base stand-in (scripts/container-base-image.sh), which the stand-ins build on.
#
# Idempotent: an image that already exists is kept (FORCE=1 rebuilds them all).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/container-base-image.sh
BASE=docker.io/library/node:24-bookworm-slim

# compose image name -> stand-in folder under test/compose/stand-ins
declare -A STAND_INS=(
  [docker.io/library/mysql:8.4.3]=mysql
  [docker.io/library/redis:7.4.1]=redis
  [docker.io/library/rabbitmq:3.13.7-management]=rabbitmq
  [docker.io/axllent/mailpit:v1.21.8]=mailpit
  [docker.io/prom/prometheus:v2.55.1]=prometheus
)

# npm inside a build trusts the machine's certificate bundle, mounted for the build only (docs/operations.md, Images).
npmrc=$(mktemp -t vanish-stand-in-npmrc.XXXXXX)
trap 'rm -f "$npmrc"' EXIT
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$npmrc"

for image in "${!STAND_INS[@]}"; do
  if [ "${FORCE:-0}" != 1 ] && podman image exists "$image"; then
    echo "$image (stand-in) already present"
    continue
  fi
  folder="test/compose/stand-ins/${STAND_INS[$image]}"
  echo "building the TEST STAND-IN $image from Debian packages ($folder)"
  started=$SECONDS
  podman build -q --format docker --build-arg "BASE=$BASE" \
    -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
    -v "$npmrc:/usr/local/etc/npmrc:ro" \
    --label org.opencontainers.image.description="TEST STAND-IN for $image, built from Debian packages; not the official image" \
    -t "$image" -f "$folder/Containerfile" "$folder" >/dev/null
  echo "  built in $((SECONDS - started)) s"
done
