#!/usr/bin/env bash
# Browser test set-up (tests/serve): Debian's Chromium and ChromeDriver. Idempotent.
# Never a browser download: selenium drives /usr/bin/chromium through /usr/bin/chromedriver.
set -euo pipefail

say() { printf '  [browser] %s\n' "$*"; }

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  say "chromium and chromium-driver already installed"
fi
say "$(chromium --version 2>/dev/null | head -1)"
say "$(chromedriver --version | head -1)"
