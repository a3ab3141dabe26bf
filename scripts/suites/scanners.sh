#!/usr/bin/env bash
# The outside scanners as a suite of `npm test` (scripts/test-all.sh runs it after the jest projects, on
# the build it made): about two and a half minutes here. The scans themselves: scripts/scanners.sh.
exec bash "$(dirname "$0")/../scanners.sh"
