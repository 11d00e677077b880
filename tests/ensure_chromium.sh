#!/usr/bin/env bash
# Browser tests drive Debian's chromium. In CI (root, CI=true) install it when missing;
# elsewhere leave the machine alone: the browser tests then skip with a loud reason.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "${CI:-}" = "true" ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium missing: installing Debian's chromium for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "WARNING: /usr/bin/chromium not found; browser tests (tests/e2e) will be skipped." >&2
fi
