#!/usr/bin/env bash
# The Python and PHP clients' tests (scripts/test-python.sh, scripts/test-php.sh) side by side: each
# starts its own server on a free port with its own database, and mostly waits on it or on one core
# (mypy, PHPUnit), so together they take about as long as the longer one. Each one's output is shown
# whole, in turn, and the status is a failure if either failed.
set -uo pipefail
cd "$(dirname "$0")/.."
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
bash scripts/test-python.sh >"$logs/python.log" 2>&1 &
python=$!
bash scripts/test-php.sh >"$logs/php.log" 2>&1 &
php=$!
status=0
wait "$python" || status=1
echo "== Python client (npm run test:python)"
cat "$logs/python.log"
wait "$php" || status=1
echo "== PHP client (npm run test:php)"
cat "$logs/php.log"
exit "$status"
