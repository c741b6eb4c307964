#!/usr/bin/env bash
# Builds this target's own virtualenv, .venv beside this script, from requirements.txt: run by
# the harness (targets/ag-ui-adk.yaml, build key) once per clone and again only when
# requirements.txt or this script change. $1 is the Python to build it with (the harness's,
# 3.12). A half-built venv is removed first, so a failed build never passes for a good one.
set -euo pipefail
cd "$(dirname "$0")"
python="${1:-python3}"
rm -rf .venv
"$python" -m venv .venv
.venv/bin/python -m pip install --quiet --no-input --disable-pip-version-check \
    --require-virtualenv -r requirements.txt
.venv/bin/python -c "import ag_ui_adk, google.adk; print('ag-ui-adk target venv ready: google-adk', google.adk.__version__)"
