# Sourced by install.sh, test.sh and quickstart.sh: which Python (and so which environment) the project uses.
# Sets PY (the interpreter), WHERE (said on the console) and, when a project venv is to be made, MAKE_VENV.
#   1. a virtual environment that is active ($VIRTUAL_ENV): that one;
#   2. HARDNEG_VENV=DIR: the virtual environment DIR, made if missing;
#   3. a python3 that forbids pip installs (PEP 668 "externally managed", e.g. Debian's /usr/bin/python3):
#      the project venv .venv/ of this clone, made if missing;
#   4. otherwise the python3 first on PATH (e.g. pyenv, a container's Python, CI), said plainly.
PY="" WHERE="" MAKE_VENV=""
if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "${VIRTUAL_ENV}/bin/python" ]; then
  PY="${VIRTUAL_ENV}/bin/python"
  WHERE="the active virtual environment ${VIRTUAL_ENV}"
else
  venv="${HARDNEG_VENV:-}"
  if [ -z "$venv" ] && python3 -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")) else 1)' 2>/dev/null; then
    venv="$(pwd)/.venv"
  fi
  if [ -n "$venv" ]; then
    PY="${venv}/bin/python"
    WHERE="the project virtual environment ${venv} (activate it to use hardneg: source ${venv}/bin/activate)"
    [ -x "$PY" ] || MAKE_VENV="$venv"
  else
    PY="$(python3 -c 'import sys; print(sys.executable)')"
    WHERE="the Python first on PATH, ${PY} (no virtual environment is active; to use one, activate it first, or set HARDNEG_VENV=DIR)"
  fi
fi
