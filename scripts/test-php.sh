#!/usr/bin/env bash
# Checks and tests the PHP client (clients/php): composer validate --strict, php -l on every file,
# then its PHPUnit suite, which starts scripts/client-test-server.mjs (needs `npm run build` first).
# Without php/phpunit/composer it warns loudly and passes, unless CI is set: CI must run it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$root/clients/php"

missing=()
for tool in php phpunit composer node; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]} > 0)); then
  if [[ -n "${CI:-}" ]]; then
    echo "test:php: missing ${missing[*]}; CI must run the PHP client's tests (apt-get install php-cli php-curl phpunit composer)" >&2
    exit 1
  fi
  {
    echo '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
    echo "!! test:php SKIPPED: ${missing[*]} not installed, so the PHP client was NOT tested."
    echo '!! Install php-cli php-curl phpunit composer to run it (CI fails without them).'
    echo '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
  } >&2
  exit 0
fi

if [[ ! -f "$root/dist/server.js" ]]; then
  echo "test:php: dist/ is missing; run \`npm run build\` first (the tests start the built server)" >&2
  exit 1
fi

echo '> composer validate --strict (clients/php)'
# Composer refuses to start without a home; a bare CI environment may have none.
[[ -n "${HOME:-}${COMPOSER_HOME:-}" ]] || export COMPOSER_HOME="$(mktemp -d)"
(cd "$package" && COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_DISABLE_NETWORK=1 composer validate --strict --no-interaction)

echo '> php -l (clients/php)'
failed=0
count=0
while IFS= read -r -d '' file; do
  count=$((count + 1))
  if ! output="$(php -l "$file" 2>&1)"; then
    echo "$output" >&2
    failed=1
  fi
done < <(find "$package" -name '*.php' -not -path '*/vendor/*' -print0)
if ((failed)); then
  exit 1
fi
echo "  $count files, no syntax errors"

echo '> phpunit -c clients/php/phpunit.xml.dist'
cd "$root"
phpunit -c clients/php/phpunit.xml.dist
