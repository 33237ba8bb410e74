#!/usr/bin/env bash
# The daemon's clock tests (tests/jobs/test_daemon_clock.py): faketime runs `co-tui daemon`
# with the wall clock set to just before a daylight-saving change. Idempotent.
set -euo pipefail

say() { printf '  [faketime] %s\n' "$*"; }

if command -v faketime >/dev/null; then
  say "faketime already installed"
else
  say "installing faketime"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends faketime >/dev/null
fi
say "$(command -v faketime)"
