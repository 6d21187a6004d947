#!/usr/bin/env bash
# Runs every check: lint, types (engine and console), migrations, and the unit, property, conformance,
# console and browser tests.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --dev
.venv/bin/ruff check scheduler schedconsole tests benchmarks
.venv/bin/ruff format --check scheduler schedconsole tests benchmarks
.venv/bin/mypy
.venv/bin/python manage.py makemigrations --check --dry-run >/dev/null
.venv/bin/python -m pytest "$@"
