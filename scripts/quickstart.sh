#!/usr/bin/env bash
# The main job of the README: install video-hardneg, then score the built-in sample of every
# benchmark format with the built-in tiny model on the built-in videos and print the results.
# It installs where scripts/install.sh says (the active venv, HARDNEG_VENV, .venv/ or the python3 on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
HARDNEG_EXTRAS="${HARDNEG_EXTRAS:-all}" bash scripts/install.sh
source scripts/python-env.sh
"$PY" -m hardneg quickstart "$@"
