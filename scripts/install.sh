#!/usr/bin/env bash
# Installs everything video-hardneg needs on a fresh Debian machine: system packages, the
# package with all extras and dev tools, and the offline resources (WordNet for NLTK).
# Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi

need_apt=()
[ -d /usr/share/wordnet ] || need_apt+=(wordnet-base)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "[install] apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

EXTRAS="${HARDNEG_EXTRAS:-dev}"
echo "[install] pip install -e .[${EXTRAS}]"
python3 -m pip install -q --disable-pip-version-check "torch>=2.4,<=2.13.0"
python3 -m pip install -q --disable-pip-version-check -e ".[${EXTRAS}]"

if [ "${EXTRAS}" = "dev" ]; then
  # the independent RBO reference of the analysis tests; its metadata pins numpy<2, its code runs on numpy 2
  python3 -m pip install -q --disable-pip-version-check --no-deps "rbo==0.1.3"
fi

echo "[install] offline resources"
python3 -m hardneg.resources --setup 2>/dev/null || true
