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
# exit 5 (no test selected, e.g. a -k that matches only one group) is not a failure
status=0
"$PY" -m pytest tests -m "not slow" "$@" || { rc=$?; [ $rc -eq 5 ] || status=$rc; }
"$PY" -m pytest tests -m slow "$@" || { rc=$?; [ $rc -eq 5 ] || [ $status -ne 0 ] || status=$rc; }
exit $status
