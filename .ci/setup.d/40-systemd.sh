#!/usr/bin/env bash
# Daemon install test set-up (tests/jobs/test_daemon_install.py): systemd-analyze, to verify
# the user unit `co-tui daemon install` writes. Idempotent. Only the tool is used: no system
# or user manager is started (CI has none; the tests check what install prints then).
set -euo pipefail

say() { printf '  [systemd] %s\n' "$*"; }

if command -v systemd-analyze >/dev/null; then
  say "systemd-analyze already installed"
else
  say "installing systemd (for systemd-analyze)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends systemd >/dev/null
fi
say "$(systemd-analyze --version | head -1)"
