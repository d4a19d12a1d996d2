#!/usr/bin/env bash
# The test command of the README: install everything, then run the whole test suite, in the environment
# scripts/install.sh chose (it says which). The quick checks run first, then the slow end-to-end ones
# (marked `slow`: installs in a clone, apps side by side, browsers); both parts must pass.
# Arguments go to both pytest runs (e.g. -q, -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
source scripts/python-env.sh
echo "[test] ${PY} -m pytest tests -m 'not slow' ; then -m slow"
status=0
"$PY" -m pytest tests -m "not slow" "$@" || status=$?
"$PY" -m pytest tests -m slow "$@" || status=$((status ? status : $?))
exit $status
