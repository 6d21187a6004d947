#!/usr/bin/env bash
# Runs every check: lint, types (engine), unit and conformance tests.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
.venv/bin/ruff check scheduler tests
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
