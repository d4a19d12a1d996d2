#!/usr/bin/env bash
# The test command of the README: install everything, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
python3 -m pytest tests "$@"
