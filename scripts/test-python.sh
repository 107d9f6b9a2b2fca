#!/usr/bin/env bash
# Tests of the official Python client (clients/python): mypy --strict on the package, pytest (the
# shared client scenarios and redirect cases against a real server, plus unit tests), and a check
# that a wheel and an sdist build offline with the package's own backend (standard library only)
# and carry its metadata. Needs `npm run build` done (the tests start dist/).
#
# Uses the first Python that has pytest: Debian's /usr/bin/python3 (python3-pytest, python3-mypy,
# python3-build), then `python3` on PATH. Without one it warns loudly and exits 0, except under CI,
# where every missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
package=clients/python
export PYTHONDONTWRITEBYTECODE=1

warn() {
  printf '\n\033[1;33m!!! test:python: %s\033[0m\n\n' "$1" >&2
}

python=""
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import pytest' >/dev/null 2>&1; then
    python=$(command -v "$candidate")
    break
  fi
done
if [ -z "$python" ]; then
  if [ -n "${CI:-}" ]; then
    echo "test:python: no Python with pytest found (on Debian: apt-get install python3-pytest python3-mypy python3-build)" >&2
    exit 1
  fi
  warn "NO PYTHON WITH PYTEST: the Python client was NOT tested. Install python3-pytest, python3-mypy and python3-build."
  exit 0
fi
echo "test:python: using $python ($("$python" --version 2>&1))"

skipped=()
for module in mypy build; do
  if ! "$python" -c "import $module" >/dev/null 2>&1; then
    if [ -n "${CI:-}" ]; then
      echo "test:python: $python has no $module module (on Debian: apt-get install python3-$module)" >&2
      exit 1
    fi
    skipped+=("$module")
  fi
done

if [[ " ${skipped[*]-} " != *" mypy "* ]]; then
  echo "== mypy --strict $package/src/lectern"
  "$python" -m mypy --strict --python-version 3.10 --no-incremental "$package/src/lectern"
  echo "== mypy --strict $package/build_backend"
  "$python" -m mypy --strict --python-version 3.10 --no-incremental "$package/build_backend"
  echo "== mypy --strict $package/tests"
  MYPYPATH="$package/src:$package/tests" "$python" -m mypy --strict --no-incremental "$package/tests"
fi

echo "== pytest $package/tests"
"$python" -m pytest "$package/tests" -q -p no:cacheprovider

if [[ " ${skipped[*]-} " != *" build "* ]]; then
  echo "== build (wheel and sdist, offline)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # A copy, so that nothing the build writes lands in the checkout.
  mkdir "$work/source"
  cp -R "$package/pyproject.toml" "$package/README.md" "$package/LICENSE" "$package/build_backend" "$package/src" "$work/source/"
  if ! "$python" -m build --no-isolation --outdir "$work/dist" "$work/source" >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    exit 1
  fi
  wheel=$(ls "$work"/dist/lectern-*.whl)
  # The wheel is pure Python: import it straight from the archive, away from the source tree.
  (cd "$work" && PYTHONPATH="$wheel" "$python" - "$wheel" <<'PY'
import sys
import zipfile

import lectern

names = zipfile.ZipFile(sys.argv[1]).namelist()
assert lectern.__file__.startswith(sys.argv[1]), lectern.__file__
assert "lectern/py.typed" in names, "py.typed is missing from the wheel"
metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
text = zipfile.ZipFile(sys.argv[1]).read(metadata).decode()
assert "Requires-Dist" not in text, "the wheel must have no runtime dependency"
assert "Requires-Python: >=3.10" in text
assert "Metadata-Version: 2.4" in text and "License-Expression: MIT" in text and "License-File: LICENSE" in text
assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), "the licence is missing from the wheel"
assert "Project-URL: Issues, https://github.com/lectern-dev/lectern/issues" in text
print(f"built {sys.argv[1].rsplit('/', 1)[-1]} and its sdist; lectern {lectern.__version__} imports from the wheel")
PY
  )
  # The sdist builds the same wheel again, offline: it holds everything its backend reads.
  sdist=$(ls "$work"/dist/lectern-*.tar.gz)
  mkdir "$work/unpacked"
  tar -xzf "$sdist" -C "$work/unpacked"
  if ! "$python" -m build --no-isolation --wheel --outdir "$work/again" "$work"/unpacked/lectern-* >"$work/again.log" 2>&1; then
    cat "$work/again.log" >&2
    exit 1
  fi
  (cd "$work" && "$python" - "$wheel" "$work"/again/lectern-*.whl <<'PY'
import sys
import zipfile

first, again = (sorted(zipfile.ZipFile(path).namelist()) for path in sys.argv[1:3])
assert first == again, (first, again)
print("the sdist builds the same wheel")
PY
  )
fi

if [ "${#skipped[@]}" -gt 0 ]; then
  warn "skipped (module missing from $python): ${skipped[*]}"
fi
