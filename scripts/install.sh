#!/usr/bin/env bash
# Installs everything video-hardneg needs on a fresh Debian machine: system packages, the
# package with all extras and dev tools at the locked versions of constraints.txt, and the offline
# resources (WordNet for NLTK).
# Where: the active virtual environment; else HARDNEG_VENV=DIR (made if missing); else, where python3
# forbids pip installs (Debian's own), the project venv .venv/; else the python3 first on PATH.
# It says which before installing. Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi

need_apt=()
[ -d /usr/share/wordnet ] || need_apt+=(wordnet-base)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -z "$MAKE_VENV" ] || python3 -c 'import ensurepip; ensurepip.version()' 2>/dev/null || need_apt+=(python3-venv)
# Cloud machines run unattended upgrades at first boot: wait for apt's lock (up to HARDNEG_APT_LOCK_TIMEOUT seconds,
# default 600) instead of failing at once with "Could not get lock /var/lib/dpkg/lock-frontend"
APT_WAIT=(-o "DPkg::Lock::Timeout=${HARDNEG_APT_LOCK_TIMEOUT:-600}")
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "[install] apt-get install ${need_apt[*]} (waiting up to ${HARDNEG_APT_LOCK_TIMEOUT:-600} s for the dpkg lock)"
  $SUDO apt-get "${APT_WAIT[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${APT_WAIT[@]}" install -y -qq --no-install-recommends \
    "${need_apt[@]}" >/dev/null
fi

if [ -n "$MAKE_VENV" ]; then
  echo "[install] making the virtual environment ${MAKE_VENV}"
  python3 -m venv "$MAKE_VENV"
fi
echo "[install] installing into ${WHERE}"

EXTRAS="${HARDNEG_EXTRAS:-dev}"
# constraints.txt locks every version (scripts/lock.sh refreshes it), so CI and a fresh machine install the same
# packages and print the same numbers; pyproject.toml keeps ranges for people who pip install it themselves
LOCK=(-c constraints.txt)
echo "[install] pip install -c constraints.txt -e .[${EXTRAS}]"
"$PY" -m pip install -q --disable-pip-version-check "${LOCK[@]}" "torch>=2.4,<=2.13.0"
"$PY" -m pip install -q --disable-pip-version-check "${LOCK[@]}" -e ".[${EXTRAS}]"

if [ "${EXTRAS}" = "dev" ]; then
  # the independent RBO reference of the analysis tests; its metadata pins numpy<2, its code runs on numpy 2
  "$PY" -m pip install -q --disable-pip-version-check --no-deps "rbo==0.1.3"
  # lmms-eval, the reference of --protocol-set lmms-eval (tests/lmms): its metadata requires torchvision (another
  # torch) and av<16; what it imports here comes with the lmms-eval extra (docs/models.md, "Running lmms-eval here")
  "$PY" -m pip install -q --disable-pip-version-check --no-deps "lmms-eval==0.7.3"
fi

echo "[install] offline resources"
"$PY" -m hardneg.resources --setup 2>/dev/null || true
echo "[install] done: video-hardneg is installed in ${WHERE}"
