#!/usr/bin/env bash
# Release step: one CycloneDX SBOM per service image, from the lockfile: the dependency tree of
# that workspace, which is what `npm ci --omit=dev --workspace services/<svc>` puts in the image
# (the service workspaces have no devDependencies; the root's are outside the workspace's tree).
# Not `--omit=dev`: npm 11's sbom then drops packages that a dev tool also uses (nodemailer,
# inherits, ... although the image installs them); test/deploy/supply-chain.int.test.ts checks.
#   scripts/release-sbom.sh [OUT_DIR]      (default: sbom/)
# Publish the files next to the images (or attach them: `cosign attach sbom`, `oras attach`).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-sbom}
mkdir -p "$OUT"
for svc in gateway notes stats mailer; do
  npm sbom --package-lock-only --sbom-format cyclonedx --sbom-type application \
    --workspace "services/$svc" >"$OUT/vanish-$svc.cdx.json"
  echo "$OUT/vanish-$svc.cdx.json"
done
