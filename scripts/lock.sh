#!/usr/bin/env bash
# Refreshes constraints.txt, the lock of every package version that scripts/install.sh installs (the quickstart,
# the tests and CI): pip's own resolver (`pip install --dry-run --ignore-installed --report`) resolves
# `torch==2.13.0` and `-e .[dev]` in a NEW empty virtual environment, so nothing already installed on this
# machine leaks into the lock and nothing is installed. pyproject.toml keeps its ranges for people who pip install.
# Run it after changing a dependency in pyproject.toml, then run bash scripts/test.sh and commit constraints.txt.
# LOCK_VENV=DIR picks the throw-away environment (default: a new temporary folder, removed afterwards).
# LOCK_KEEP=PYTHON (e.g. LOCK_KEEP=python3) keeps the versions installed for that interpreter wherever they fit
# (`pip freeze` as extra constraints to the resolver): the lock then matches a machine where the suite already
# passes (CI's), and that machine's install changes nothing. Without it, the newest versions in range win.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
venv="${LOCK_VENV:-$tmp/venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
keep=()
if [ -n "${LOCK_KEEP:-}" ]; then
  # the versions installed in the Python LOCK_KEEP (e.g. CI's, where the suite passes) win wherever they fit
  "$LOCK_KEEP" -m pip freeze --exclude-editable --disable-pip-version-check | grep -v ' @ ' \
    | grep -iv '^video-hardneg=' > "$tmp/keep.txt" || true
  keep=(-c "$tmp/keep.txt")
  echo "[lock] keeping the versions installed for $LOCK_KEEP where they fit ($(grep -c '==' "$tmp/keep.txt") packages)"
fi
echo "[lock] resolving torch==2.13.0 and -e .[dev] in the empty environment $venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --dry-run --ignore-installed \
  --report "$tmp/report.json" "${keep[@]}" "torch==2.13.0" -e ".[dev]"
"$venv/bin/python" scripts/lock_from_report.py "$tmp/report.json" constraints.txt
echo "[lock] wrote constraints.txt ($(grep -c '==' constraints.txt) pins); now run bash scripts/test.sh"
