#!/usr/bin/env bash
# Makes .sandbox-venv, the interpreter CreativeBench programs run under (sandbox_python() picks it
# up): what CreativeBench's released rows import (numpy, scipy, pandas, scikit-learn,
# beautifulsoup4, pillow, requests, pytest). numpy stays below 2.4, which removed
# `reshape(newshape=)` that a released row (problem_114_L0) calls. Idempotent: a complete venv
# is left as it is, an incomplete one is completed. Sandboxed jobs run as an unprivileged uid with
# no capability, so the venv is made readable by everyone (umask 022, then a+rX); the sandbox binds
# the venv and its base interpreter into the jobs' view at the same paths, so a base interpreter
# under a private directory (pyenv in /root) needs nothing more.
#   scripts/make_sandbox_env.sh [VENV_DIR]       (default: .sandbox-venv at the checkout root)
#   PYTHON=python3.12 scripts/make_sandbox_env.sh (default: python3)
set -euo pipefail
umask 022

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$root/.sandbox-venv}"
python="${PYTHON:-python3}"
packages=("numpy>=2.0,<2.4" scipy pandas scikit-learn beautifulsoup4 pillow requests pytest)
imports="import numpy, scipy, pandas, sklearn, bs4, PIL, requests, pytest
from numpy.lib import NumpyVersion
assert NumpyVersion(numpy.__version__) < '2.4.0', numpy.__version__"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$imports" 2>/dev/null; then
    chmod -R a+rX "$venv"
    echo "$venv: ready ($("$venv/bin/python" -V 2>&1))"
    exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}"
"$venv/bin/python" -c "$imports"
chmod -R a+rX "$venv"
echo "$venv: ready ($("$venv/bin/python" -V 2>&1)); point \$FORKINGPATHS_SANDBOX_PYTHON at" \
    "$venv/bin/python if it is not at the checkout root"
