#!/usr/bin/env bash
# Release step: one CycloneDX SBOM per image, from the lockfile: the dependency tree of that
# workspace, which is what `npm ci --omit=dev --workspace services/<svc>` puts in the image (the
# all-in-one's is services/all-in-one: every service and better-sqlite3). The service workspaces have
# no devDependencies; the root's are outside the workspace's tree.
# Not `--omit=dev`: npm 11's sbom then drops packages that a dev tool also uses (nodemailer,
# inherits, ... although the image installs them); test/deploy/supply-chain.int.test.ts checks.
#   scripts/release-sbom.sh [OUT_DIR]      (default: sbom/)
# The release workflow (.github/workflows/release.yml) attaches them to the GitHub release, beside the
# SBOM attestation that buildx makes of each image's own file system.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-sbom}
mkdir -p "$OUT"
for svc in gateway notes stats mailer webhooks all-in-one; do
  npm sbom --package-lock-only --sbom-format cyclonedx --sbom-type application \
    --workspace "services/$svc" >"$OUT/vanish-$svc.cdx.json"
  echo "$OUT/vanish-$svc.cdx.json"
done
